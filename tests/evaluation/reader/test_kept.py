"""Releasing what the reader keeps empties every cache of its modules and changes no reading."""

from __future__ import annotations

import sys
from typing import Any

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.evaluation import load_context_set
from drift_pipeline.evaluation.reader import read_context, release_kept

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
    release_kept()
    assert all(size == 0 for size in _kept().values()), _kept()
    assert _readings(items) == before
    # Filled again on demand, with the same readings.
    assert any(_kept().values())
    assert _readings(items) == before
