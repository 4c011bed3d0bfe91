"""The bounded cache: the last few values by key, the least recently used dropped first."""

from __future__ import annotations

import functools
import sys
import threading
import types
from typing import Any

import pytest

from drift_pipeline._bounded import BoundedCache, is_per_unit, per_unit, release_caches
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


def _kept() -> dict[str, tuple[bool, int]]:
    """Every cache of the reader's modules (found by what it is, not by name): marked, size."""
    sizes: dict[str, tuple[bool, int]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE):
            continue
        for attr, value in vars(module).items():
            owner = str(getattr(value, "__module__", None) or "")
            if isinstance(value, BoundedCache):
                sizes[f"{name}.{attr}"] = (is_per_unit(value), len(value))
            elif owner.startswith(PACKAGE) and hasattr(value, "cache_info"):
                sizes[f"{name}.{attr}"] = (is_per_unit(value), value.cache_info().currsize)
    return sizes


def _readings(items: list[Any]) -> list[Any]:
    return [read_context(item.context, item.probe) for item in items]


def _filling_every_per_text_cache() -> list[Any]:
    """The labelled contexts, from the first, until reading them has filled every marked cache."""
    release_caches(PACKAGE.rstrip("."))
    items: list[Any] = []
    for item in load_context_set():
        items.append(item)
        read_context(item.context, item.probe)
        if len(items) >= 30 and all(size for marked, size in _kept().values() if marked):
            break
    return items


def test_release_empties_the_per_text_caches_keeps_the_rest_and_readings_stay_the_same() -> None:
    items = _filling_every_per_text_cache()
    before = _readings(items)
    filled = _kept()
    # The caches of a text (a whole context, its lines, its mentions: what grows with a long
    # cell) are marked, and reading filled them; so it did the caches of what a probe gives.
    per_text = {name for name, (marked, _) in filled.items() if marked}
    texts = {"_prepare", "_scan", "_occurrences", "lowered", "frame_of"}
    assert {n.rsplit(".", 1)[1] for n in per_text} >= texts
    assert all(filled[name][1] for name in per_text), filled
    kept = {name: size for name, (marked, size) in filled.items() if not marked and size}
    assert {n.rsplit(".", 1)[1] for n in kept} >= {"_phrases", "_names", "asked_relations"}, kept
    release_caches(PACKAGE.rstrip("."))
    after = _kept()
    assert all(after[name][1] == 0 for name in per_text), after
    # What serves the next cell's texts again stays, entry for entry.
    assert {name: after[name][1] for name in kept} == kept
    assert _readings(items) == before
    # Filled again on demand, with the same readings.
    assert all(_kept()[name][1] for name in per_text)
    assert _readings(items) == before


def test_release_empties_marked_caches_of_the_package_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def square(n: int) -> int:
        return n * n

    marked = per_unit(BoundedCache[str, int](2))
    plain = BoundedCache[str, int](2)
    square.__module__ = "a_package.a_module"
    marked_call = per_unit(functools.lru_cache(maxsize=4)(square))
    plain_call = functools.lru_cache(maxsize=4)(square)
    module = types.ModuleType(square.__module__)
    for name, cache in [("m", marked), ("p", plain), ("mc", marked_call), ("pc", plain_call)]:
        setattr(module, name, cache)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    marked.put("a", 1)
    plain.put("a", 1)
    marked_call(3)
    plain_call(3)
    release_caches("another_package")  # not this module's package: nothing emptied
    assert len(marked) == 1 and marked_call.cache_info().currsize == 1
    release_caches("a_package")
    assert len(marked) == 0 and marked_call.cache_info().currsize == 0
    assert plain.get("a") == 1 and plain_call.cache_info().currsize == 1
