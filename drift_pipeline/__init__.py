"""DRIFT benchmark pipeline.

The public Python API (spec §8.2)::

    from drift_pipeline import DriftHarness, MemoryBackend, Message, TokenCounts

Names are resolved on first use, so ``import drift_pipeline`` stays cheap: it loads no
backend, no optional adapter dependency, no Dagster and no table code until asked.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drift_pipeline.memory import CountsOwnStorage, MemoryBackend, Message, TokenCounts
    from drift_pipeline.pipeline import DriftHarness, DriftReport

_EXPORTS = {
    "CountsOwnStorage": "drift_pipeline.memory",
    "DriftHarness": "drift_pipeline.pipeline",
    "DriftReport": "drift_pipeline.pipeline",
    "MemoryBackend": "drift_pipeline.memory",
    "Message": "drift_pipeline.memory",
    "TokenCounts": "drift_pipeline.memory",
}

__all__ = [
    "CountsOwnStorage",
    "DriftHarness",
    "DriftReport",
    "MemoryBackend",
    "Message",
    "TokenCounts",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
