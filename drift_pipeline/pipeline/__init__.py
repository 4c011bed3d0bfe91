"""Whole runs without Dagster (``drift run``): the same functions the Dagster assets call."""

from ._cells import CellResult, evaluate_world_cells
from ._run import REFERENCE_ARM, RunOptions, RunResult, run_benchmark, run_manifest
from ._worlds import ensure_worlds, world_is_current

__all__ = [
    "REFERENCE_ARM",
    "CellResult",
    "RunOptions",
    "RunResult",
    "ensure_worlds",
    "evaluate_world_cells",
    "run_benchmark",
    "run_manifest",
    "world_is_current",
]
