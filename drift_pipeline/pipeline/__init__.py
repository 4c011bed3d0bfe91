"""Whole runs without Dagster (``drift run``): the same functions the Dagster assets call."""

from ._cells import (
    CellResult,
    amnesiac_answers,
    evaluate_cell,
    world_profiles,
    world_session_marks,
)
from ._evaluators import (
    JUDGE_MODEL_ENV,
    LLM_CACHE,
    READER_MODEL_ENV,
    EvaluationOptions,
    build_evaluator,
    llm_cache_location,
)
from ._harness import DriftHarness, DriftReport
from ._run import (
    REFERENCE_ARM,
    RunOptions,
    RunResult,
    backend_options_for,
    run_benchmark,
    run_manifest,
    run_world,
)
from ._stored import (
    TEXT_COLUMNS,
    cell_exists,
    compare_stored,
    connect,
    load_arm,
    stored_content_kept,
)
from ._worlds import ensure_worlds, world_is_current

__all__ = [
    "JUDGE_MODEL_ENV",
    "LLM_CACHE",
    "READER_MODEL_ENV",
    "REFERENCE_ARM",
    "TEXT_COLUMNS",
    "CellResult",
    "DriftHarness",
    "DriftReport",
    "EvaluationOptions",
    "RunOptions",
    "RunResult",
    "amnesiac_answers",
    "backend_options_for",
    "build_evaluator",
    "cell_exists",
    "compare_stored",
    "connect",
    "ensure_worlds",
    "evaluate_cell",
    "llm_cache_location",
    "load_arm",
    "run_benchmark",
    "run_manifest",
    "run_world",
    "stored_content_kept",
    "world_is_current",
    "world_profiles",
    "world_session_marks",
]
