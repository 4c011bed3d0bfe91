"""The suite's own metrics (spec §7), in the row order of ``cell_metrics``.

Their definitions are in :mod:`._metrics`; here is how each is named, labelled and shown: the
positions set the leaderboard's columns, each cell's figures in the JSON summary, the lines of
``drift compare`` and the ``cell_metrics`` asset's metadata keys, in that order.
"""

from __future__ import annotations

from typing import Final

from ._metric_specs import Direction, MetricSpec

__all__ = ["BUILTIN_METRICS"]


def _percentiles(
    prefix: str,
    label: str,
    description: str,
    *,
    compare: dict[str, int] | None = None,
    metadata: int | None = None,
) -> tuple[MetricSpec, ...]:
    """``<prefix>_p50``, ``_p95`` and ``_p99`` latencies, in ms, lower is better."""
    specs = []
    for offset, pct in enumerate(("p50", "p95", "p99")):
        specs.append(
            MetricSpec(
                f"{prefix}_{pct}",
                f"{label} {pct}",
                "ms",
                "lower",
                f"{description} {pct}",
                compare=(compare or {}).get(pct),
                metadata=None if metadata is None else metadata + offset,
            )
        )
    return tuple(specs)


def _plain(name: str, label: str, unit: str, direction: Direction, description: str) -> MetricSpec:
    return MetricSpec(name, label, unit, direction, description)


BUILTIN_METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        "mvot",
        "MVOT",
        "score",
        "higher",
        "Memory Value Over Time (spec §7.1)",
        headline=2,
        json=0,
        compare=2,
        metadata=0,
    ),
    _plain(
        "mvot_skipped",
        "MVOT skipped",
        "count",
        "neutral",
        "(replicate, checkpoint) pairs skipped by MVOT because E_amn = 0",
    ),
    MetricSpec(
        "selectivity",
        "Select.",
        "score",
        "higher",
        "Selectivity Score (spec §7.2)",
        headline=3,
        json=1,
        compare=3,
        metadata=1,
    ),
    MetricSpec(
        "revision_accuracy",
        "Revision",
        "score",
        "higher",
        "Revision Accuracy: harmonic mean of update and deprecation (§7.3)",
        headline=4,
        json=2,
        compare=4,
        metadata=2,
    ),
    MetricSpec(
        "action_alignment",
        "Action",
        "score",
        "higher",
        "Action Alignment: mean judge score mapped to [0, 1] (§7.4)",
        headline=5,
        json=3,
        compare=5,
        metadata=3,
    ),
    MetricSpec(
        "privacy",
        "Privacy",
        "score",
        "higher",
        "Privacy Score: 1 − canary recall (§7.5)",
        json=6,
        null_when_undefined=True,
    ),
    MetricSpec(
        "tes",
        "TES",
        "ratio",
        "higher",
        "Token Efficiency Score (§7.7); geometric mean across scenarios",
        geometric=True,
        headline=6,
        json=4,
        compare=6,
        metadata=4,
    ),
    MetricSpec(
        "lps",
        "LPS",
        "score",
        "higher",
        "Latency Profile Score (§7.8)",
        headline=7,
        json=5,
        compare=7,
        metadata=5,
    ),
    MetricSpec(
        "drift_c",
        "DRIFT-C",
        "score",
        "higher",
        "DRIFT-C capability composite (§7.6)",
        headline=0,
        json=7,
        compare=0,
        metadata=6,
    ),
    MetricSpec(
        "drift_c_lift",
        "Lift",
        "score",
        "higher",
        "DRIFT-C minus the amnesiac's DRIFT-C on the same probes",
        headline=0,
        json=7,
        compare=0,
        metadata=6,
    ),
    MetricSpec(
        "drift_e",
        "DRIFT-E",
        "score",
        "higher",
        "DRIFT-E efficiency composite (§7.9)",
        headline=1,
        json=8,
        compare=1,
        metadata=7,
    ),
    _plain("error_rate", "E(t)", "share", "lower", "Probe error rate E(t), canaries excluded"),
    _plain("error_rate_amnesiac", "E_amn(t)", "share", "neutral", "Amnesiac error rate E_amn(t)"),
    _plain(
        "update_correctness",
        "Update",
        "share",
        "higher",
        "Revision probes whose new value is reflected",
    ),
    _plain(
        "deprecation_correctness",
        "Deprecation",
        "share",
        "higher",
        "Revision probes whose old value is no longer retrievable",
    ),
    _plain(
        "revision_persistence",
        "Persistence",
        "score",
        "higher",
        "Revision Accuracy over belief_half_life probes",
    ),
    _plain("noise_tnr", "Noise TNR", "share", "higher", "Noise sessions not stored"),
    _plain("signal_fnr", "Signal FNR", "share", "lower", "Signal sessions not stored"),
    _plain("soft_store_rate", "Soft stored", "share", "neutral", "Soft-signal sessions stored"),
    MetricSpec(
        "storage_per_session",
        "C",
        "tokens",
        "lower",
        "C: final storage tokens per session",
        compare=9,
        metadata=8,
    ),
    _plain(
        "write_tokens_per_session",
        "W",
        "tokens",
        "lower",
        "W: LLM tokens inside store() per session",
    ),
    _plain(
        "storage_delta_per_session",
        "S_delta",
        "tokens",
        "lower",
        "S_delta: storage growth per session",
    ),
    _plain(
        "read_llm_tokens_per_retrieve",
        "R",
        "tokens",
        "lower",
        "R: LLM tokens inside retrieve() per call",
    ),
    _plain(
        "read_tokens_per_retrieve",
        "Context",
        "tokens",
        "neutral",
        "Tokens of the context handed to the reader",
    ),
    MetricSpec(
        "token_cost_per_session",
        "TC",
        "tokens",
        "lower",
        "TC = W + S_delta + R × Q_rate",
        metadata=9,
    ),
    *_percentiles("read_ms", "Read", "Read latency", compare={"p99": 8}, metadata=10),
    *_percentiles("write_ms", "Write", "Write latency", metadata=13),
    *_percentiles("ttfrt_ms", "TTFRT", "Time to first relevant token"),
    *_percentiles("dialectic_ms", "Dialectic", "Dialectic speed"),
    _plain("read_error_rate", "Read errors", "share", "lower", "Retrieve calls that failed"),
    _plain("write_error_rate", "Write errors", "share", "lower", "Store calls that failed"),
    _plain(
        "judge_errors",
        "Judge errors",
        "count",
        "lower",
        "Answers whose reader or judge call failed (excluded from the metrics)",
    ),
    _plain(
        "ttft_measured",
        "TTFT measured",
        "share",
        "neutral",
        "Share of retrievals whose reader TTFT was measured, not modelled",
    ),
)
"""Every metric :func:`~._metrics.compute_cell` reports itself, in row order."""
