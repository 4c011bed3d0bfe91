"""Whole runs without Dagster (``drift run``): the same functions the Dagster assets call."""

from ._ablations import (
    ABLATIONS_FILE,
    Ablation,
    AblationError,
    ablation_arms,
    find_ablations,
    load_ablations,
)
from ._cell_store import (
    EVALUATION_TABLES,
    StoredCell,
    evaluate_stored,
    load_cell_run,
    metric_values,
    read_evaluation,
    reuse_evaluations,
    stage_cell_run,
    stage_evaluation,
    stored_cells,
    stored_result,
)
from ._cells import CellResult, amnesiac_answers, evaluate_cell, world_profiles
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
from ._stored import TEXT_COLUMNS, cell_exists, compare_stored, connect, load_arm
from ._stored_audit import AuditOutcome, audit_stored_evidence, audit_stored_world
from ._worlds import ensure_worlds, world_is_current

__all__ = [
    "ABLATIONS_FILE",
    "EVALUATION_TABLES",
    "JUDGE_MODEL_ENV",
    "LLM_CACHE",
    "READER_MODEL_ENV",
    "REFERENCE_ARM",
    "TEXT_COLUMNS",
    "Ablation",
    "AblationError",
    "AuditOutcome",
    "CellResult",
    "DriftHarness",
    "DriftReport",
    "EvaluationOptions",
    "RunOptions",
    "RunResult",
    "StoredCell",
    "ablation_arms",
    "amnesiac_answers",
    "audit_stored_evidence",
    "audit_stored_world",
    "backend_options_for",
    "build_evaluator",
    "cell_exists",
    "compare_stored",
    "connect",
    "ensure_worlds",
    "evaluate_cell",
    "evaluate_stored",
    "find_ablations",
    "llm_cache_location",
    "load_ablations",
    "load_arm",
    "load_cell_run",
    "metric_values",
    "read_evaluation",
    "reuse_evaluations",
    "run_benchmark",
    "run_manifest",
    "run_world",
    "stage_cell_run",
    "stage_evaluation",
    "stored_cells",
    "stored_result",
    "world_is_current",
    "world_profiles",
]
