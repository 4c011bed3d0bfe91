"""The bounded cache: the last few values by key, the least recently used dropped first."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from drift_pipeline._bounded import BoundedCache, release_caches
from drift_pipeline.evaluation import load_context_set
from drift_pipeline.evaluation.reader import read_context


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


# Releasing a package's caches: the reader's, which a long cell fills the most.
PACKAGE = "drift_pipeline.evaluation.reader."


def _kept() -> dict[str, int]:
    """Every cache of the reader's modules (found by what it is, not by name): its size."""
    sizes: dict[str, int] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE):
            continue
        for attr, value in vars(module).items():
            owner = str(getattr(value, "__module__", None) or "")
            if isinstance(value, BoundedCache):
                sizes[f"{name}.{attr}"] = len(value)
            elif owner.startswith(PACKAGE) and hasattr(value, "cache_info"):
                sizes[f"{name}.{attr}"] = value.cache_info().currsize
    return sizes


def _readings(items: list[Any]) -> list[Any]:
    return [read_context(item.context, item.probe) for item in items]


def test_release_empties_every_cache_and_readings_stay_the_same() -> None:
    items = load_context_set()[:30]
    before = _readings(items)
    filled = _kept()
    # Reading filled the per-text and per-line caches, the ones a long cell grows.
    assert sum(1 for size in filled.values() if size) >= 5, filled
    release_caches(PACKAGE.rstrip("."))
    assert all(size == 0 for size in _kept().values()), _kept()
    assert _readings(items) == before
    # Filled again on demand, with the same readings.
    assert any(_kept().values())
    assert _readings(items) == before
