"""Phase 03, evaluation: readers and judges, every metric of spec §7, intervals, composites.

Scoring reads only what a backend returned (``retrievals``), its costs (``memory_snapshots``) and
the latent ground truth carried by ``probes``; it never reads a transcript. The default reader
and judge is the deterministic context judge; the pinned LLM reader and judge are optional.
"""

from ._answering import (
    ANSWER_TABLE_COLUMNS,
    ContextEvaluator,
    Evaluator,
    LLMEvaluator,
    latent_profiles,
    measured_ttft,
)
from ._bootstrap import METRIC_ROWS_SCHEMA, MetricRow, Sample, metric_rows_table, summarise
from ._composites import (
    DRIFT_C_WEIGHTS,
    DRIFT_E_WEIGHTS,
    HORIZON_WEIGHTS,
    aggregate_horizons,
    drift_c,
    drift_e,
    latency_profile_score,
    token_efficiency_score,
)
from ._judge import (
    ANSWER_COLUMNS,
    JUDGE_NAME,
    JUDGE_VERSION,
    RETRACTION_MARKERS,
    Verdict,
    judge,
    judge_all,
)
from ._judge_check import (
    CHECK_CATEGORIES,
    CheckItem,
    CheckOutcome,
    CheckReport,
    load_check_set,
    run_judge_check,
)
from ._judge_llm import JUDGE_PROMPTS, JudgeItem, Judgement, LLMJudge, RuleJudge, parse_judge_reply
from ._metrics import (
    EPSILON_TOKENS,
    METRICS,
    PREFILL_MS_PER_TOKEN,
    Q_RATE,
    READER_BASE_TTFT_MS,
    ArmData,
    CellMetrics,
    MetricConfig,
    ReferenceFigures,
    compare_arms,
    compute_cell,
    reference_figures,
)
from ._reader_llm import DEFAULT_CONTEXT_CAP_TOKENS, LLMReader, ReaderAnswer, cap_context

__all__ = [
    "ANSWER_COLUMNS",
    "ANSWER_TABLE_COLUMNS",
    "CHECK_CATEGORIES",
    "DEFAULT_CONTEXT_CAP_TOKENS",
    "DRIFT_C_WEIGHTS",
    "DRIFT_E_WEIGHTS",
    "EPSILON_TOKENS",
    "HORIZON_WEIGHTS",
    "JUDGE_NAME",
    "JUDGE_PROMPTS",
    "JUDGE_VERSION",
    "METRICS",
    "METRIC_ROWS_SCHEMA",
    "PREFILL_MS_PER_TOKEN",
    "Q_RATE",
    "READER_BASE_TTFT_MS",
    "RETRACTION_MARKERS",
    "ArmData",
    "CellMetrics",
    "CheckItem",
    "CheckOutcome",
    "CheckReport",
    "ContextEvaluator",
    "Evaluator",
    "JudgeItem",
    "Judgement",
    "LLMEvaluator",
    "LLMJudge",
    "LLMReader",
    "MetricConfig",
    "MetricRow",
    "ReaderAnswer",
    "ReferenceFigures",
    "RuleJudge",
    "Sample",
    "Verdict",
    "aggregate_horizons",
    "cap_context",
    "compare_arms",
    "compute_cell",
    "drift_c",
    "drift_e",
    "judge",
    "judge_all",
    "latency_profile_score",
    "latent_profiles",
    "load_check_set",
    "measured_ttft",
    "metric_rows_table",
    "parse_judge_reply",
    "reference_figures",
    "run_judge_check",
    "summarise",
    "token_efficiency_score",
]
