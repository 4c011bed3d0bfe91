"""The bounded cache: the last few values by key, the least recently used dropped first."""

from __future__ import annotations

import threading

import pytest

from drift_pipeline._bounded import BoundedCache


def test_it_keeps_the_most_recent_values_and_a_hit_counts_as_recent() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2
    assert cache.get("b") is None


def test_a_value_is_built_once_per_key_while_it_is_kept() -> None:
    cache: BoundedCache[int, list[int]] = BoundedCache(3)
    built: list[int] = []

    def build(key: int) -> list[int]:
        built.append(key)
        return [key]

    first = cache.get_or_build(1, lambda: build(1))
    assert cache.get_or_build(1, lambda: build(1)) is first
    for key in (2, 3, 4):
        cache.get_or_build(key, lambda key=key: build(key))  # type: ignore[misc]
    cache.get_or_build(1, lambda: build(1))  # dropped by then: built again
    assert built == [1, 2, 3, 4, 1]
    cache.clear()
    assert len(cache) == 0


def test_threads_missing_the_same_key_share_the_first_value_stored() -> None:
    cache: BoundedCache[str, object] = BoundedCache(4)
    start = threading.Barrier(4)
    seen: list[object] = []

    def worker() -> None:
        start.wait()
        seen.append(cache.get_or_build("k", object))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(value) for value in seen}) == 1
    assert cache.get("k") is seen[0]


def test_it_keeps_at_least_one_value() -> None:
    with pytest.raises(ValueError, match="at least 1 value, not 0"):
        BoundedCache(0)
