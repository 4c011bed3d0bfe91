"""The fixed vocabulary of numeric metadata every asset reports, so the UI can plot it.

Each asset reports exactly the keys of its tuple below on every materialization (a figure that
is undefined for a cell is reported as null, never left out), so a key's plot in the UI has one
point per materialization.

The ``cell_metrics`` asset reports one key per metric of the metric registry's ``metadata`` view
(``drift/<metric name>``), read when used, so a registered metric is reported by its
registration alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import dagster as dg
import numpy as np

from drift_pipeline.evaluation import CellMetrics, metric_specs

ROWS = "dagster/row_count"
"""Rows written (Dagster's standard key)."""
REPLICATES = "drift/replicates"
SESSIONS = "drift/sessions"
"""Sessions per replicate."""
TURNS = "drift/turns"
FACTS = "drift/facts"
PROBES = "drift/probes"
CHECKPOINTS = "drift/checkpoints"
ENTITIES = "drift/entities"
EVENTS = "drift/events"
"""Sessions carrying an event (signal or soft)."""

TRANSCRIPT_TOKENS = "drift/transcript_tokens"
"""Tokens of every session handed to the gate (all replicates)."""
WRITE_TOKENS = "drift/write_tokens"
"""LLM tokens spent inside ``store()`` (all replicates)."""
STORAGE_TOKENS = "drift/storage_tokens"
"""Final storage size, mean over replicates."""
READ_TOKENS = "drift/read_tokens"
"""Tokens of the contexts handed to the reader, mean per retrieval."""
LLM_READ_TOKENS = "drift/llm_read_tokens"
"""LLM tokens spent inside ``retrieve()`` (all replicates)."""
WRITE_MS_P50 = "drift/write_ms_p50"
WRITE_MS_P95 = "drift/write_ms_p95"
WRITE_MS_P99 = "drift/write_ms_p99"
READ_MS_P50 = "drift/read_ms_p50"
READ_MS_P95 = "drift/read_ms_p95"
READ_MS_P99 = "drift/read_ms_p99"
FAULTS = "drift/faults"
"""Backend calls that failed (or timed out)."""
VALID = "drift/valid"
"""1 if the cell may be ranked, 0 if its fault rate is past the run's limit (never ranked)."""
FAULT_RATE = "drift/fault_rate"
"""Share of the cell's backend calls that faulted or were skipped."""

ACCURACY = "drift/accuracy"
"""Share of probes answered correctly."""
MEAN_SCORE = "drift/mean_score"
AMNESIAC_ERROR_RATE = "drift/amnesiac_error_rate"
REFERENCE_STORAGE_PER_SESSION = "drift/reference_storage_per_session"
"""C_ref: the reference compressor's final storage tokens per session."""

MVOT = "drift/mvot"
SELECTIVITY = "drift/selectivity"
REVISION_ACCURACY = "drift/revision_accuracy"
ACTION_ALIGNMENT = "drift/action_alignment"
TES = "drift/tes"
LPS = "drift/lps"
DRIFT_C = "drift/drift_c"
DRIFT_C_LIFT = "drift/drift_c_lift"
"""DRIFT-C minus the amnesiac's DRIFT-C on the same probes."""
DRIFT_E = "drift/drift_e"
STORAGE_PER_SESSION = "drift/storage_per_session"
TOKEN_COST_PER_SESSION = "drift/token_cost_per_session"
FINAL_CUMULATIVE_TOKENS = "drift/final_cumulative_tokens"
FINAL_MVOT = "drift/final_mvot"

CELLS = "drift/cells"
ARMS = "drift/arms"
WORLDS = "drift/worlds"
SKIPPED_CELLS = "drift/skipped_cells"
INVALID_CELLS = "drift/invalid_cells"
"""Cells past their fault-rate limit: listed on the leaderboard with their rate, not ranked."""
BEST_DRIFT_C = "drift/best_drift_c"
READER_ACCURACY = "drift/reader_accuracy"
"""The offline reader's accuracy on the shipped contexts written by other authors (null for an
LLM reader, or when the shipped figures are not for the reader that scored)."""
READER_FALSE_ACCEPT_RATE = "drift/reader_false_accept_rate"
"""Its false-accept rate there (null likewise)."""
READER_HELD_OUT_ACCURACY = "drift/reader_held_out_accuracy"
"""The offline reader's accuracy on text it has not met: sets by other authors kept outside the
package and never used to revise its rules (null when not measured for the reader that scored)."""
READER_HELD_OUT_FALSE_ACCEPT_RATE = "drift/reader_held_out_false_accept_rate"
"""Its false-accept rate there (null likewise)."""
BUDGET_FAILURES = "drift/budget_failures"
"""Latency budget figures (spec §7.8) that some arm fails where it runs (not measured: none)."""
BUDGET = "budget"
"""The leaderboard's latency budget table (Markdown)."""
BUDGET_FIGURES = "budget_figures"
"""The same as JSON: per arm, where it runs and each figure against its target."""
MAX_CUMULATIVE_TOKENS = "drift/max_cumulative_tokens"


def cell_metric_keys() -> dict[str, str]:
    """Metadata key of every metric the ``cell_metrics`` asset reports, by metric name.

    Returns:
        ``drift/<name>`` for each metric of the registry's ``metadata`` view, in its order.

    """
    return {spec.name: f"drift/{spec.name}" for spec in metric_specs("metadata")}


class _MetricKeys(Mapping[str, str]):
    """:func:`cell_metric_keys` as a mapping that reads the registry on every use."""

    def __getitem__(self, name: str) -> str:
        return cell_metric_keys()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(cell_metric_keys())

    def __len__(self) -> int:
        return len(cell_metric_keys())

    def __repr__(self) -> str:
        return repr(cell_metric_keys())


class _CellMetricsKeys(Sequence[str]):
    """``(ROWS, VALID, FAULT_RATE, *cell_metric_keys().values())``, read on every use."""

    def _keys(self) -> tuple[str, ...]:
        return (ROWS, VALID, FAULT_RATE, *cell_metric_keys().values())

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._keys()[index]

    def __len__(self) -> int:
        return len(self._keys())

    def __repr__(self) -> str:
        return repr(self._keys())


HEADLINE_METRICS: Mapping[str, str] = _MetricKeys()
"""``cell_metrics`` rows reported as metadata, by metric name."""

WORLD_KEYS: tuple[str, ...] = (ROWS, REPLICATES, SESSIONS)
"""Reported by every world table, plus the table's own keys below."""
WORLD_TABLE_KEYS: Mapping[str, tuple[str, ...]] = {
    "latent_profiles": (*WORLD_KEYS, ENTITIES),
    "event_schedules": (*WORLD_KEYS, EVENTS),
    "transcripts": (*WORLD_KEYS, TURNS, TRANSCRIPT_TOKENS),
    "ground_truth": (*WORLD_KEYS, FACTS),
    "probes": (*WORLD_KEYS, PROBES, CHECKPOINTS),
}
MEMORY_SNAPSHOTS_KEYS: tuple[str, ...] = (
    ROWS,
    REPLICATES,
    SESSIONS,
    TRANSCRIPT_TOKENS,
    WRITE_TOKENS,
    STORAGE_TOKENS,
    WRITE_MS_P50,
    WRITE_MS_P95,
    WRITE_MS_P99,
    FAULTS,
    VALID,
    FAULT_RATE,
)
RETRIEVALS_KEYS: tuple[str, ...] = (
    ROWS,
    REPLICATES,
    READ_TOKENS,
    LLM_READ_TOKENS,
    READ_MS_P50,
    READ_MS_P95,
    READ_MS_P99,
    FAULTS,
)
REFERENCE_MEMORY_KEYS: tuple[str, ...] = (
    *MEMORY_SNAPSHOTS_KEYS,
    READ_TOKENS,
    LLM_READ_TOKENS,
    READ_MS_P50,
    READ_MS_P95,
    READ_MS_P99,
)
"""The reference compressor's memory run on a world: its snapshots' figures, then its reads'."""
PROBE_ANSWERS_KEYS: tuple[str, ...] = (ROWS, PROBES, ACCURACY, MEAN_SCORE)
CELL_METRICS_KEYS: Sequence[str] = _CellMetricsKeys()
"""Every key the ``cell_metrics`` asset reports: rows, validity and fault rate, then one per
metric (see above); an invalid cell's metrics are reported but never ranked."""
CELL_COST_CURVE_KEYS: tuple[str, ...] = (
    ROWS,
    CHECKPOINTS,
    FINAL_CUMULATIVE_TOKENS,
    FINAL_MVOT,
)
WORLD_BASELINES_KEYS: tuple[str, ...] = (
    PROBES,
    AMNESIAC_ERROR_RATE,
    REFERENCE_STORAGE_PER_SESSION,
    MVOT,
    DRIFT_C,
    FAULTS,
)
LEADERBOARD_KEYS: tuple[str, ...] = (
    CELLS,
    ARMS,
    WORLDS,
    SKIPPED_CELLS,
    INVALID_CELLS,
    BEST_DRIFT_C,
    READER_ACCURACY,
    READER_FALSE_ACCEPT_RATE,
    READER_HELD_OUT_ACCURACY,
    READER_HELD_OUT_FALSE_ACCEPT_RATE,
    BUDGET_FAILURES,
)
COST_CURVES_KEYS: tuple[str, ...] = (ROWS, ARMS, WORLDS, MAX_CUMULATIVE_TOKENS)


def numeric(
    values: Mapping[str, float | int | None], keys: Sequence[str]
) -> dict[str, dg.MetadataValue]:
    """Exactly ``keys``, as Dagster metadata (an undefined or missing figure is null).

    Raises:
        ValueError: If ``values`` has a key outside ``keys`` (the vocabulary is fixed).
    """
    extra = set(values) - set(keys)
    if extra:
        raise ValueError(f"metadata keys {sorted(extra)} are not in the vocabulary {list(keys)}")
    out: dict[str, dg.MetadataValue] = {}
    for key in keys:
        value = values.get(key)
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            out[key] = dg.MetadataValue.null()
        elif isinstance(value, bool | int | np.bool_ | np.integer):
            out[key] = dg.MetadataValue.int(int(value))
        else:
            out[key] = dg.MetadataValue.float(float(value))
    return out


def budget(
    table: str, arms: Mapping[str, Mapping[str, Any]]
) -> tuple[int, dict[str, dg.MetadataValue]]:
    """The leaderboard's budget table and how many of its figures fail.

    Args:
        table: The table as Markdown.
        arms: Each arm's budget as the JSON summary gives it (``deployment``, ``figures``).

    Returns:
        The failing figures' count (for :data:`BUDGET_FAILURES`), and the :data:`BUDGET` and
        :data:`BUDGET_FIGURES` entries.
    """
    failures = sum(
        1
        for entry in arms.values()
        for figure in entry["figures"].values()
        if figure["pass"] is False
    )
    return failures, {
        BUDGET: dg.MetadataValue.md(table or "_no evaluated cells yet_"),
        BUDGET_FIGURES: dg.MetadataValue.json({arm: dict(e) for arm, e in arms.items()}),
    }


MODEL_TOKENS = "drift/model_tokens"
"""Text key of ``cell_metrics``: where its LLM tokens come from (``metered``, ``self-reported``,
``unknown``), with what is short where they are not metered."""
COST_BOUNDS = "drift/cost_bounds"
"""Text key of ``cell_metrics``: the figures that are bounds (``mvot ≤``, ``token_cost_per_session
≥``…), where its model spend is unknown; ``none`` otherwise."""


def cost_metadata(metrics: CellMetrics) -> dict[str, dg.MetadataValue]:
    """The :data:`MODEL_TOKENS` and :data:`COST_BOUNDS` of a cell, beside its numeric figures.

    The numeric ``drift/<metric>`` keys carry a bound's value as it is (Dagster's plots take
    numbers only); these say which of them are bounds and why.
    """
    audit = metrics.llm_tokens
    if audit is None:
        source = "not recorded (tables written before metering)"
    elif audit.source == "unknown":
        source = f"unknown: {audit.why_unknown()}"
    elif audit.source == "self-reported":
        source = "self-reported (not checked by the meter)"
    else:
        source = audit.source
    signs = {"lower": "≥", "upper": "≤"}
    bounds = ", ".join(f"{name} {signs[side]}" for name, side in sorted(metrics.bounds.items()))
    return {
        MODEL_TOKENS: dg.MetadataValue.text(source),
        COST_BOUNDS: dg.MetadataValue.text(bounds or "none"),
    }


CELL_METRICS_TEXT_KEYS: tuple[str, ...] = (MODEL_TOKENS, COST_BOUNDS)
"""The text keys the ``cell_metrics`` asset reports beside :data:`CELL_METRICS_KEYS` (see
:func:`cost_metadata`)."""


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (linear), or ``None`` for no values."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else None
