"""Phase 03, evaluation: the context judge, every metric of spec §7, intervals, composites.

Scoring reads only what a backend returned (``retrievals``), its costs (``memory_snapshots``) and
the latent ground truth carried by ``probes``; it never reads a transcript.
"""

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

__all__ = [
    "ANSWER_COLUMNS",
    "DRIFT_C_WEIGHTS",
    "DRIFT_E_WEIGHTS",
    "EPSILON_TOKENS",
    "HORIZON_WEIGHTS",
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "METRICS",
    "METRIC_ROWS_SCHEMA",
    "PREFILL_MS_PER_TOKEN",
    "Q_RATE",
    "READER_BASE_TTFT_MS",
    "RETRACTION_MARKERS",
    "ArmData",
    "CellMetrics",
    "MetricConfig",
    "MetricRow",
    "ReferenceFigures",
    "Sample",
    "Verdict",
    "aggregate_horizons",
    "compare_arms",
    "compute_cell",
    "drift_c",
    "drift_e",
    "judge",
    "judge_all",
    "latency_profile_score",
    "metric_rows_table",
    "reference_figures",
    "summarise",
    "token_efficiency_score",
]
