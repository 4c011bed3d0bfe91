"""Whole runs without Dagster (``drift run``): the same functions the Dagster assets call."""

from ._cells import CellResult, amnesiac_answers, evaluate_cell
from ._run import (
    REFERENCE_ARM,
    RunOptions,
    RunResult,
    backend_options_for,
    run_benchmark,
    run_manifest,
    run_world,
)
from ._stored import TEXT_COLUMNS, cell_exists, compare_stored, connect, load_arm
from ._worlds import ensure_worlds, world_is_current

__all__ = [
    "REFERENCE_ARM",
    "TEXT_COLUMNS",
    "CellResult",
    "RunOptions",
    "RunResult",
    "amnesiac_answers",
    "backend_options_for",
    "cell_exists",
    "compare_stored",
    "connect",
    "ensure_worlds",
    "evaluate_cell",
    "load_arm",
    "run_benchmark",
    "run_manifest",
    "run_world",
    "world_is_current",
]
