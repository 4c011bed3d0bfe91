"""Metric suite against hand-computed values on a two-replicate fixture."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from drift_pipeline.evaluation._bootstrap import METRIC_ROWS_SCHEMA, MetricRow
from drift_pipeline.evaluation._composites import DRIFT_C_WEIGHTS
from drift_pipeline.evaluation._metrics import (
    METRICS,
    MIN_COMPONENT_UNITS,
    ArmData,
    CellMetrics,
    MetricConfig,
    ReferenceFigures,
    compare_arms,
    compute_cell,
    reference_figures,
)

# --- the fixture: 2 replicates, 4 sessions each, checkpoints after sessions 2 and 4 ----------
#
# probe   cp  type/subtype                 arm rep0 / rep1            amnesiac rep0 / rep1
# p1      2   recall/fact                  T / T                      F / F
# p2      2   recall/fact                  T / F                      F / T
# p3      2   revision/fact_update         T(u T,d T) / F(u T,d F)    F(u F,d T) / F(u F,d F)
# p4      4   recall/fact                  T / F                      F / F
# p5      4   action/preference_driven     T(+1) / F(0)               F(0) / F(0)
# p6      4   revision/belief_half_life    F(u T,d F) / T(u T,d T)    F / F
# p7      4   canary/canary                T (no leak) / F (leak)     T / T

PROBES = [
    ("p1", 2, "recall", "fact"),
    ("p2", 2, "recall", "fact"),
    ("p3", 2, "revision", "fact_update"),
    ("p4", 4, "recall", "fact"),
    ("p5", 4, "action", "preference_driven"),
    ("p6", 4, "revision", "belief_half_life"),
    ("p7", 4, "canary", "canary"),
]

# (correct, action_score, update_correct, deprecation_correct) per replicate, per probe
Answers = dict[int, list[tuple[Any, ...]]]
ARM: Answers = {
    0: [
        (True,) + (None,) * 3,
        (True,) + (None,) * 3,
        (True, None, True, True),
        (True,) + (None,) * 3,
        (True, 1, None, None),
        (False, None, True, False),
        (True,) + (None,) * 3,
    ],
    1: [
        (True,) + (None,) * 3,
        (False,) + (None,) * 3,
        (False, None, True, False),
        (False,) + (None,) * 3,
        (False, 0, None, None),
        (True, None, True, True),
        (False,) + (None,) * 3,
    ],
}
AMNESIAC: Answers = {
    0: [
        (False,) + (None,) * 3,
        (False,) + (None,) * 3,
        (False, None, False, True),
        (False,) + (None,) * 3,
        (False, 0, None, None),
        (False, None, False, False),
        (True,) + (None,) * 3,
    ],
    1: [
        (False,) + (None,) * 3,
        (True,) + (None,) * 3,
        (False, None, False, False),
        (False,) + (None,) * 3,
        (False, 0, None, None),
        (False, None, False, False),
        (True,) + (None,) * 3,
    ],
}

# (tier, write_tokens, storage_delta_tokens, write_ms, error) per session
Session = tuple[str, int, int, float, str | None]
SESSIONS: dict[int, list[Session]] = {
    0: [
        ("signal", 100, 50, 10.0, None),
        ("noise", 0, 4, 20.0, None),
        ("soft", 50, 20, 30.0, None),
        ("noise", 30, 10, 40.0, None),
    ],
    1: [
        ("noise", 0, 0, 5.0, None),
        ("signal", 80, 30, 15.0, None),
        ("signal", 60, 8, 25.0, None),
        ("soft", 40, 9, 100.0, "timeout"),
    ],
}
READ_MS = {0: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 1: [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 100.0]}
LLM_READ = {0: [2] * 7, 1: [0, 0, 0, 0, 0, 0, 14]}
# The arm's token cost per session: rep0 45 write + 21 storage + (2 + 100) read per query = 168,
# rep1 45 + 11.75 + (2 + 100) = 158.75; the reference's makes MVOT's efficiency factors 1/2, 1.
REFERENCE = ReferenceFigures(
    replicates=(0, 1), storage_per_session=(10.5, 23.5), token_cost=(84.0, 160.0), mvot=(0.5, 0.25)
)
# The fixture's world is tiny (a handful of revision and action probes): every component enters
# DRIFT-C here, so the composite's formula is tested on it.
FAST = MetricConfig(n_boot=200, min_component_units=0)


def answers(
    spec: dict[int, list[tuple[Any, ...]]], probes: Sequence[tuple[str, int, str, str]] = PROBES
) -> pa.Table:
    rows: dict[str, list[Any]] = {
        k: []
        for k in (
            "replicate",
            "checkpoint",
            "probe_id",
            "probe_type",
            "subtype",
            "correct",
            "action_score",
            "update_correct",
            "deprecation_correct",
        )
    }
    for rep, answered in spec.items():
        for (pid, cp, ptype, sub), (ok, score, upd, dep) in zip(probes, answered, strict=True):
            for key, value in zip(
                rows, (rep, cp, pid, ptype, sub, ok, score, upd, dep), strict=True
            ):
                rows[key].append(value)
    return pa.table(
        {
            **{
                k: rows[k] for k in ("replicate", "checkpoint", "probe_id", "probe_type", "subtype")
            },
            "correct": pa.array(rows["correct"], pa.bool_()),
            "action_score": pa.array(rows["action_score"], pa.int8()),
            "update_correct": pa.array(rows["update_correct"], pa.bool_()),
            "deprecation_correct": pa.array(rows["deprecation_correct"], pa.bool_()),
        }
    )


def snapshots(spec: dict[int, list[Session]]) -> pa.Table:
    rows: dict[str, list[Any]] = {
        k: []
        for k in (
            "replicate",
            "session_index",
            "tier",
            "write_tokens",
            "storage_tokens",
            "storage_delta_tokens",
            "write_ms",
            "error",
        )
    }
    for rep, sessions in spec.items():
        storage = 0
        for i, (tier, write, delta, ms, err) in enumerate(sessions):
            storage += delta
            for key, value in zip(
                rows, (rep, i, tier, write, storage, delta, ms, err), strict=True
            ):
                rows[key].append(value)
    return pa.table({**rows, "error": pa.array(rows["error"], pa.string())})


def retrievals(
    read_ms: dict[int, list[float]] = READ_MS,
    llm: dict[int, list[int]] = LLM_READ,
    read_tokens: int = 100,
    probes: Sequence[tuple[str, int, str, str]] = PROBES,
) -> pa.Table:
    rows: dict[str, list[Any]] = {
        k: []
        for k in (
            "replicate",
            "checkpoint",
            "probe_id",
            "read_ms",
            "read_tokens",
            "llm_read_tokens",
            "error",
        )
    }
    for rep in read_ms:
        for (pid, cp, _, _), ms, tokens in zip(probes, read_ms[rep], llm[rep], strict=True):
            for key, value in zip(rows, (rep, cp, pid, ms, read_tokens, tokens, None), strict=True):
                rows[key].append(value)
    return pa.table({**rows, "error": pa.array(rows["error"], pa.string())})


def arm() -> ArmData:
    return ArmData(answers(ARM), snapshots(SESSIONS), retrievals())


def value(cell: CellMetrics, metric: str, checkpoint: int | None = None) -> float | None:
    return cell.get(metric, checkpoint).value


@pytest.fixture(scope="module")
def cell() -> CellMetrics:
    return compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)


def amnesiac_arm() -> ArmData:
    """The amnesiac backend: answers as from an empty context, stores and spends nothing."""
    quiet: dict[int, list[Session]] = {
        r: [(t, 0, 0, ms, None) for t, _, _, ms, _ in s] for r, s in SESSIONS.items()
    }
    no_reads = {r: [0] * 7 for r in READ_MS}
    return ArmData(answers(AMNESIAC), snapshots(quiet), retrievals(llm=no_reads, read_tokens=0))


def with_answers(
    spec: dict[int, list[tuple[Any, ...]]], rep: int, index: int, answer: tuple[Any, ...]
) -> dict[int, list[tuple[Any, ...]]]:
    changed = {r: list(a) for r, a in spec.items()}
    changed[rep][index] = answer
    return changed


def cells(*computed: CellMetrics) -> list[MetricRow]:
    return [row for c in computed for row in c.rows]


# --- hand-computed values ---------------------------------------------------------------------


def test_mvot_per_replicate_with_efficiency_factor(cell: CellMetrics) -> None:
    # rep0: rel 1 (cp2), 2/3 (cp4), factor min(1, TC_ref 84 / TC 168) = 0.5 → 5/12
    # rep1: rel 0 (cp2), 1/3 (cp4), factor min(1, 160 / 158.75) = 1 → 1/6
    assert value(cell, "mvot") == pytest.approx(7 / 24)
    assert value(cell, "mvot", 2) == pytest.approx((0.5 + 0.0) / 2)
    assert value(cell, "mvot", 4) == pytest.approx((2 / 3 * 0.5 + 1 / 3) / 2)
    assert cell.get("mvot").n == 12
    assert cell.get("mvot_skipped") == MetricRow("mvot_skipped", None, 0.0, 0.0, 0.0, 4)


def test_error_rates(cell: CellMetrics) -> None:
    assert value(cell, "error_rate", 2) == pytest.approx((0 + 2 / 3) / 2)
    assert value(cell, "error_rate", 4) == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert value(cell, "error_rate") == pytest.approx((1 / 6 + 2 / 3) / 2)
    assert value(cell, "error_rate_amnesiac", 2) == pytest.approx((1 + 2 / 3) / 2)
    assert value(cell, "error_rate_amnesiac", 4) == 1.0
    # The canary probe is not scored for E(t).
    assert cell.get("error_rate", 4).n == 6


def test_selectivity(cell: CellMetrics) -> None:
    # rep0: noise stored 1 of 2 (delta 10 > 8), signal 1 of 1; rep1: noise 0 of 1, signal 1 of 2
    # (delta 8 is not > epsilon 8); soft sessions all stored.
    assert value(cell, "noise_tnr") == pytest.approx(0.75)
    assert value(cell, "signal_fnr") == pytest.approx(0.25)
    assert value(cell, "selectivity") == pytest.approx(0.75)
    assert value(cell, "soft_store_rate") == 1.0
    assert (cell.get("selectivity").n, cell.get("noise_tnr").n, cell.get("soft_store_rate").n) == (
        6,
        3,
        2,
    )


def test_revision_action_privacy(cell: CellMetrics) -> None:
    assert value(cell, "update_correctness") == 1.0
    assert value(cell, "deprecation_correctness") == 0.5
    assert value(cell, "revision_accuracy") == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert value(cell, "revision_accuracy", 2) == pytest.approx(2 / 3)
    assert value(cell, "revision_accuracy", 4) is None
    assert value(cell, "revision_persistence") == pytest.approx(2 / 3)
    assert cell.get("revision_accuracy").n == 2
    assert value(cell, "action_alignment") == pytest.approx((1.0 + 0.5) / 2)
    assert value(cell, "privacy") == 0.5
    assert cell.get("privacy").n == 2


def test_token_costs_and_tes(cell: CellMetrics) -> None:
    assert value(cell, "storage_per_session") == pytest.approx((21 + 11.75) / 2)
    assert value(cell, "write_tokens_per_session") == 45.0
    assert value(cell, "storage_delta_per_session") == pytest.approx((21 + 11.75) / 2)
    assert value(cell, "read_llm_tokens_per_retrieve") == 2.0
    assert value(cell, "read_tokens_per_retrieve") == 100.0
    # Cost counts the context handed to the reader per query, beside write and storage.
    tc = ((45 + 21 + 2 + 100) + (45 + 11.75 + 2 + 100)) / 2
    assert value(cell, "token_cost_per_session") == pytest.approx(tc)
    assert value(cell, "tes") == pytest.approx((7 / 24) / 0.375 / (tc / 122.0))


def test_latency_percentiles_and_lps(cell: CellMetrics) -> None:
    # 14 pooled read latencies; nearest rank: p50 = 7th, p95 = p99 = 14th.
    assert [value(cell, f"read_ms_p{p}") for p in (50, 95, 99)] == [7.0, 100.0, 100.0]
    assert [value(cell, f"write_ms_p{p}") for p in (50, 95, 99)] == [20.0, 100.0, 100.0]
    # Modelled TTFT: 25 ms + 0.05 ms x 100 context tokens = 30 ms.
    assert [value(cell, f"ttfrt_ms_p{p}") for p in (50, 95, 99)] == [37.0, 130.0, 130.0]
    # Dialectic adds each replicate's median write: 20 ms (rep0), 15 ms (rep1).
    assert [value(cell, f"dialectic_ms_p{p}") for p in (50, 95, 99)] == [56.0, 145.0, 145.0]
    assert value(cell, "lps") == pytest.approx(0.4 * 0.5 + 0.6 * 1.0)
    assert value(cell, "write_error_rate") == pytest.approx(0.125)
    assert value(cell, "read_error_rate") == 0.0


def test_composites(cell: CellMetrics) -> None:
    expected_c = 0.35 * 7 / 24 + 0.25 * 0.75 + 0.20 * 2 / 3 + 0.20 * 0.75
    assert value(cell, "drift_c") == pytest.approx(expected_c)
    tes = value(cell, "tes")
    assert tes is not None
    assert value(cell, "drift_e") == pytest.approx(0.55 * tes + 0.45 * 0.8)


def test_components_measured_on_too_few_units_stay_out_of_drift_c() -> None:
    # Default threshold: the fixture's Selectivity, Revision and Action rest on fewer than
    # MIN_COMPONENT_UNITS sessions or probes, so DRIFT-C renormalises over MVOT alone.
    default = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", MetricConfig(n_boot=200))
    assert MIN_COMPONENT_UNITS == 10
    assert value(default, "drift_c") == pytest.approx(7 / 24)
    assert value(default, "drift_c_lift") == pytest.approx(7 / 24)  # the amnesiac's MVOT is 0
    # Still reported on their own.
    assert value(default, "revision_accuracy") == pytest.approx(2 / 3)
    assert value(default, "action_alignment") == pytest.approx(0.75)
    # Each threshold admits exactly the components measured on at least that many units.
    rows = {r.metric: r for r in default.rows if r.checkpoint is None}
    weights = dict(
        zip(
            ("mvot", "selectivity", "revision_accuracy", "action_alignment"),
            DRIFT_C_WEIGHTS["short"],
            strict=True,
        )
    )
    for threshold in sorted({rows[name].n for name in weights if name != "mvot"}):
        cell = compute_cell(
            arm(),
            answers(AMNESIAC),
            REFERENCE,
            "short",
            MetricConfig(n_boot=0, min_component_units=threshold),
        )
        taken = [n for n in weights if n == "mvot" or rows[n].n >= threshold]
        expected = sum(weights[n] * rows[n].value for n in taken) / sum(weights[n] for n in taken)
        assert value(cell, "drift_c") == pytest.approx(expected), threshold


def test_every_metric_has_an_overall_row(cell: CellMetrics) -> None:
    assert [r.metric for r in cell.rows if r.checkpoint is None] == list(METRICS)


# --- edge cases -------------------------------------------------------------------------------


def test_checkpoint_with_zero_amnesiac_error_is_skipped_and_counted() -> None:
    right = (True, None, True, True)
    amn = with_answers(AMNESIAC, 0, 0, right)
    amn = with_answers(amn, 0, 1, right)
    amn = with_answers(amn, 0, 2, right)  # rep0 at cp2: the amnesiac gets everything right
    one = compute_cell(arm(), answers(amn), REFERENCE, "short", FAST)
    assert value(one, "mvot") == pytest.approx((2 / 3 * 0.5 + 1 / 6) / 2)
    assert value(one, "mvot", 2) == 0.0  # only rep1's term is left
    assert one.get("mvot_skipped") == MetricRow("mvot_skipped", None, 1.0, 1.0, 1.0, 4)
    assert one.get("mvot_skipped", 2).value == 1.0
    assert one.get("mvot").n == 9
    for i in range(3):
        amn = with_answers(amn, 1, i, right)
    both = compute_cell(arm(), answers(amn), REFERENCE, "short", FAST)
    assert value(both, "mvot", 2) is None
    assert both.get("mvot_skipped", 2).value == 2.0
    assert value(both, "mvot") == pytest.approx((2 / 3 * 0.5 + 1 / 3) / 2)


def test_amnesiac_arm_mvot_is_exactly_zero() -> None:
    amn = compute_cell(amnesiac_arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    assert amn.get("mvot")[2:5] == (0.0, 0.0, 0.0)
    assert all(amn.get("mvot", cp)[2:5] == (0.0, 0.0, 0.0) for cp in (2, 4))
    assert value(amn, "selectivity") == 0.5  # stores nothing: TNR 1, FNR 1
    assert value(amn, "storage_per_session") == 0.0
    assert value(amn, "tes") == 0.0  # no value for no cost


def test_arm_costing_nothing_has_efficiency_factor_one() -> None:
    quiet = {r: [(t, 0, 0, ms, e) for t, _, _, ms, e in s] for r, s in SESSIONS.items()}
    no_reads = {r: [0] * 7 for r in READ_MS}
    data = ArmData(answers(ARM), snapshots(quiet), retrievals(llm=no_reads, read_tokens=0))
    c = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    assert value(c, "mvot") == pytest.approx(((1 + 2 / 3) / 2 + (0 + 1 / 3) / 2) / 2)
    assert value(c, "selectivity") == 0.5
    assert value(c, "soft_store_rate") == 0.0


def test_reference_figures_and_reference_tes_exactly_one() -> None:
    figures = reference_figures(arm(), answers(AMNESIAC))
    assert figures.replicates == (0, 1)
    assert figures.storage_per_session == (21.0, 11.75)
    assert figures.token_cost == (168.0, 158.75)
    assert figures.mvot[0] == pytest.approx(5 / 6)
    assert figures.mvot[1] == pytest.approx(1 / 6)
    fixed = compute_cell(arm(), answers(AMNESIAC), figures, "short", FAST)
    assert value(fixed, "tes") == 1.0
    paired = compute_cell(arm(), answers(AMNESIAC), arm(), "short", FAST)
    assert paired.get("tes")[2:5] == (1.0, 1.0, 1.0)
    assert value(paired, "mvot") == value(fixed, "mvot")


def test_reference_figures_table_round_trip() -> None:
    figures = ReferenceFigures((3, 4), (1.0, 2.0), (5.0, 6.0), (0.5, None))
    assert ReferenceFigures.from_table(figures.to_table()) == figures


def test_nonpositive_reference_mvot_makes_tes_null() -> None:
    for mvot in ((0.0, -0.2), (None, None)):
        ref = replace(REFERENCE, mvot=mvot)
        c = compute_cell(arm(), answers(AMNESIAC), ref, "short", FAST)
        assert c.get("tes")[2:5] == (None, None, None)
        # DRIFT-E falls back to LPS alone (renormalised weights).
        assert value(c, "drift_e") == pytest.approx(value(c, "lps"))


def test_revision_accuracy_is_zero_when_deprecation_is_zero() -> None:
    spec = with_answers(ARM, 0, 2, (True, None, True, False))
    c = compute_cell(
        ArmData(answers(spec), snapshots(SESSIONS), retrievals()),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    assert value(c, "update_correctness") == 1.0
    assert value(c, "deprecation_correctness") == 0.0
    assert value(c, "revision_accuracy") == 0.0


def test_missing_probe_types_give_null_metrics_and_renormalised_drift_c() -> None:
    keep = [0, 1, 3]  # recall probes only
    probes = [PROBES[i] for i in keep]

    def only(spec: dict[int, list[tuple[Any, ...]]]) -> dict[int, list[tuple[Any, ...]]]:
        return {r: [a[i] for i in keep] for r, a in spec.items()}

    reads = {r: [READ_MS[r][i] for i in keep] for r in READ_MS}
    llm = {r: [LLM_READ[r][i] for i in keep] for r in LLM_READ}
    data = ArmData(
        answers(only(ARM), probes), snapshots(SESSIONS), retrievals(reads, llm, probes=probes)
    )
    c = compute_cell(data, answers(only(AMNESIAC), probes), REFERENCE, "medium", FAST)
    for metric in ("revision_accuracy", "revision_persistence", "action_alignment", "privacy"):
        assert c.get(metric) == MetricRow(metric, None, None, None, None, 0)
        assert not [r for r in c.rows if r.metric == metric and r.checkpoint is not None]
    mvot, sel = value(c, "mvot"), value(c, "selectivity")
    assert mvot is not None and sel is not None
    expected = (0.40 * min(1.0, max(0.0, mvot)) + 0.25 * sel) / 0.65
    assert value(c, "drift_c") == pytest.approx(expected)


def test_measured_ttft_replaces_the_model_and_follows_row_order() -> None:
    table = retrievals()
    ttft = np.arange(table.num_rows, dtype=np.float64) * 10.0
    base = compute_cell(
        ArmData(answers(ARM), snapshots(SESSIONS), table, ttft),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    read = np.concatenate([READ_MS[0], READ_MS[1]])
    assert value(base, "ttfrt_ms_p99") == float(np.max(read + ttft))
    order = np.random.default_rng(3).permutation(table.num_rows)
    shuffled = compute_cell(
        ArmData(answers(ARM), snapshots(SESSIONS), table.take(order), ttft[order]),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    assert shuffled.rows == base.rows


def test_unmeasured_ttft_rows_are_modelled_and_the_measured_share_reported(
    cell: CellMetrics,
) -> None:
    table = retrievals()
    modelled = MetricConfig().reader_base_ttft_ms + MetricConfig().prefill_ms_per_token * 100
    all_nan = np.full(table.num_rows, np.nan)
    none_measured = compute_cell(
        ArmData(answers(ARM), snapshots(SESSIONS), table, all_nan),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    assert value(none_measured, "ttfrt_ms_p99") == value(cell, "ttfrt_ms_p99")
    assert value(none_measured, "ttft_measured") == 0.0 and value(cell, "ttft_measured") == 0.0
    half = all_nan.copy()
    half[: table.num_rows // 2] = 1000.0  # replicate 0 measured (slow), replicate 1 modelled
    mixed = compute_cell(
        ArmData(answers(ARM), snapshots(SESSIONS), table, half),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    assert value(mixed, "ttft_measured") == 0.5
    read = np.concatenate([READ_MS[0], READ_MS[1]])
    expected = np.concatenate([read[:7] + 1000.0, read[7:] + modelled])
    assert value(mixed, "ttfrt_ms_p99") == float(np.max(expected))
    with pytest.raises(ValueError, match="ttft_ms"):
        bad = half.copy()
        bad[0] = np.inf
        compute_cell(
            ArmData(answers(ARM), snapshots(SESSIONS), table, bad),
            answers(AMNESIAC),
            REFERENCE,
            "short",
            FAST,
        )


def with_judge_errors(table: pa.Table, failed: set[tuple[int, str]]) -> pa.Table:
    """``table`` with ``judge_error`` set on ``failed`` rows (their verdicts left as they were)."""
    keys = zip(table["replicate"].to_pylist(), table["probe_id"].to_pylist(), strict=True)
    errors = ["judge: unparsable reply" if key in failed else None for key in keys]
    return table.append_column("judge_error", pa.array(errors, pa.string()))


def test_judge_errors_are_excluded_from_every_probe_metric_and_counted(cell: CellMetrics) -> None:
    # p3 (revision) and p5 (action) of replicate 0 failed: their stored verdicts must not count.
    failed = {(0, "p3"), (0, "p5")}
    errored = compute_cell(
        ArmData(with_judge_errors(answers(ARM), failed), snapshots(SESSIONS), retrievals()),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    # The same cell with those two rows' verdicts nulled by hand.
    nulled = with_answers(with_answers(ARM, 0, 2, (None,) * 4), 0, 4, (None,) * 4)
    by_hand = compute_cell(
        ArmData(answers(nulled), snapshots(SESSIONS), retrievals()),
        answers(AMNESIAC),
        REFERENCE,
        "short",
        FAST,
    )
    for name in ("error_rate", "mvot", "revision_accuracy", "action_alignment", "drift_c"):
        assert errored.get(name) == by_hand.get(name), name
    assert errored.get("error_rate").n == cell.get("error_rate").n - 2
    assert errored.get("action_alignment").n == cell.get("action_alignment").n - 1
    assert errored.get("judge_errors") == MetricRow("judge_errors", None, 2.0, 2.0, 2.0, 14)
    assert value(errored, "judge_errors", 2) == 1.0 and value(errored, "judge_errors", 4) == 1.0
    assert cell.get("judge_errors") == MetricRow("judge_errors", None, 0.0, 0.0, 0.0, 14)
    # A failed amnesiac answer leaves that probe out of E_amn as well.
    amnesiac_failed = compute_cell(
        arm(), with_judge_errors(answers(AMNESIAC), {(0, "p1")}), REFERENCE, "short", FAST
    )
    assert amnesiac_failed.get("error_rate_amnesiac").n == cell.get("error_rate_amnesiac").n - 1


def test_row_order_of_inputs_does_not_matter(cell: CellMetrics) -> None:
    data = arm()
    rng = np.random.default_rng(7)
    shuffled = ArmData(
        *(
            t.take(rng.permutation(t.num_rows))
            for t in (data.answers, data.snapshots, data.retrievals)
        )
    )
    amn = answers(AMNESIAC)
    again = compute_cell(
        shuffled, amn.take(rng.permutation(amn.num_rows)), REFERENCE, "short", FAST
    )
    assert again.rows == cell.rows


# --- intervals, determinism, paired comparison ----------------------------------------------


def synthetic(
    replicates: int = 4, probes: int = 500, sessions: int = 120, p: float = 0.7, seed: int = 1
) -> tuple[ArmData, pa.Table]:
    """A larger random cell: the arm answers right with probability p, the amnesiac 0.2."""
    rng = np.random.default_rng(seed)
    n = replicates * probes
    rep = np.repeat(np.arange(replicates), probes)
    cp = np.tile(np.repeat([30, 60, 90, 120], probes // 4), replicates)
    pid = np.tile([f"p{i:04d}" for i in range(probes)], replicates)
    kinds = rng.choice(["recall", "action", "revision", "canary"], size=n, p=[0.6, 0.2, 0.15, 0.05])
    sub = np.where(
        kinds == "revision",
        rng.choice(["fact_update", "preference_reversal", "belief_half_life"], size=n),
        "fact",
    )

    def answered(q: float) -> pa.Table:
        return pa.table(
            {
                "replicate": rep,
                "checkpoint": cp,
                "probe_id": pid,
                "probe_type": kinds,
                "subtype": sub,
                "correct": rng.random(n) < q,
                "action_score": pa.array(np.where(kinds == "action", rng.integers(-1, 2, n), 0)),
                "update_correct": rng.random(n) < q,
                "deprecation_correct": rng.random(n) < q,
            }
        )

    s_rep = np.repeat(np.arange(replicates), sessions)
    delta = rng.integers(0, 60, replicates * sessions)
    storage = np.concatenate([np.cumsum(delta[s_rep == r]) for r in range(replicates)])
    snaps = pa.table(
        {
            "replicate": s_rep,
            "session_index": np.tile(np.arange(sessions), replicates),
            "tier": rng.choice(["signal", "soft", "noise"], replicates * sessions),
            "write_tokens": rng.integers(0, 500, replicates * sessions),
            "storage_tokens": storage,
            "storage_delta_tokens": delta,
            "write_ms": rng.gamma(2.0, 20.0, replicates * sessions),
        }
    )
    retr = pa.table(
        {
            "replicate": rep,
            "checkpoint": cp,
            "probe_id": pid,
            "read_ms": rng.gamma(2.0, 10.0, n),
            "read_tokens": rng.integers(0, 3000, n),
            "llm_read_tokens": rng.integers(0, 10, n),
        }
    )
    return ArmData(answered(p), snaps, retr), answered(0.2)


def test_every_interval_contains_its_value(cell: CellMetrics) -> None:
    big, amn = synthetic()
    figures = reference_figures(synthetic(p=0.6)[0], amn)
    computed = [
        cell,
        compute_cell(big, amn, figures, "long", MetricConfig(n_boot=300)),
        compare_arms(arm(), amnesiac_arm(), answers(AMNESIAC), REFERENCE, "short", FAST),
    ]
    rows = cells(*computed)
    assert rows
    for row in rows:
        if row.value is None:
            assert row.ci_low is None and row.ci_high is None
        else:
            assert row.ci_low is not None and row.ci_high is not None
            assert row.ci_low <= row.value <= row.ci_high, row


def test_percentiles_are_ordered() -> None:
    big, amn = synthetic()
    c = compute_cell(big, amn, REFERENCE_4, "long", MetricConfig(n_boot=50))
    for name in ("read_ms", "write_ms", "ttfrt_ms", "dialectic_ms"):
        p50, p95, p99 = (value(c, f"{name}_p{p}") for p in (50, 95, 99))
        assert p50 is not None and p95 is not None and p99 is not None
        assert p50 <= p95 <= p99
        assert p50 < p99


REFERENCE_4 = ReferenceFigures((0, 1, 2, 3), (20.0,) * 4, (300.0,) * 4, (0.5,) * 4)


def test_deterministic_for_a_seed(cell: CellMetrics) -> None:
    again = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    assert again.rows == cell.rows
    other = compute_cell(
        arm(), answers(AMNESIAC), REFERENCE, "short", MetricConfig(n_boot=200, seed=1)
    )
    assert other.get("mvot").value == cell.get("mvot").value
    assert other.get("mvot") != cell.get("mvot")


def test_paired_difference_of_an_arm_with_itself_is_exactly_zero() -> None:
    big, amn = synthetic()
    for data, amnesiac, ref in ((arm(), answers(AMNESIAC), REFERENCE), (big, amn, REFERENCE_4)):
        diff = compare_arms(data, data, amnesiac, ref, "long", MetricConfig(n_boot=200))
        defined = [r for r in diff.rows if r.value is not None]
        assert len(defined) > 40
        for row in defined:
            assert (row.value, row.ci_low, row.ci_high) == (0.0, 0.0, 0.0), row
        assert "mvot_skipped" not in {r.metric for r in diff.rows}


def test_paired_difference_is_the_difference_of_points(cell: CellMetrics) -> None:
    amn = compute_cell(amnesiac_arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    diff = compare_arms(arm(), amnesiac_arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    for metric in ("mvot", "selectivity", "error_rate", "lps", "drift_c"):
        a, b = value(cell, metric), value(amn, metric)
        assert a is not None and b is not None
        assert value(diff, metric) == pytest.approx(a - b)
    assert value(diff, "action_alignment") is not None


def test_paired_comparison_needs_the_same_probes() -> None:
    extra: Session = ("noise", 0, 0, 1.0, None)
    longer = {0: SESSIONS[0], 1: [*SESSIONS[1], extra]}
    other = ArmData(answers(ARM), snapshots(longer), retrievals())
    with pytest.raises(ValueError, match="same probes"):
        compare_arms(arm(), other, answers(AMNESIAC), REFERENCE, "short", FAST)


def test_speed_four_replicates_of_500_probes() -> None:
    big, amn = synthetic()
    compute_cell(big, amn, REFERENCE_4, "long", MetricConfig(n_boot=10))  # warm-up
    start = time.process_time()
    c = compute_cell(big, amn, REFERENCE_4, "long", MetricConfig(n_boot=1000))
    assert time.process_time() - start < 1.0
    assert c.get("mvot").n > 1500


# --- output and validation --------------------------------------------------------------------


def test_table_output(cell: CellMetrics) -> None:
    table = cell.table()
    # The metric rows, and which of them are bounds (none: this cell's cost is known).
    assert table.schema == METRIC_ROWS_SCHEMA.append(pa.field("bound", pa.string()))
    assert table.column("bound").null_count == table.num_rows
    assert {"all", "2", "4"} == set(table.column("checkpoint").to_pylist())
    assert table.num_rows == len(cell.rows)
    assert cell.samples["mvot"].draws.shape == (FAST.n_boot,)


def test_zero_draws_give_zero_width_intervals() -> None:
    c = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", MetricConfig(n_boot=0))
    for row in c.rows:
        if row.value is not None:
            assert row.ci_low == row.value == row.ci_high


def test_invalid_inputs_are_rejected() -> None:
    amn = answers(AMNESIAC)
    with pytest.raises(ValueError, match="amnesiac answers do not cover"):
        compute_cell(arm(), amn.slice(1), REFERENCE, "short", FAST)
    with pytest.raises(ValueError, match="lacks column"):
        compute_cell(
            ArmData(arm().answers.drop_columns(["correct"]), snapshots(SESSIONS), retrievals()),
            amn,
            REFERENCE,
            "short",
            FAST,
        )
    with pytest.raises(ValueError, match="duplicate"):
        doubled = pa.concat_tables([arm().answers, arm().answers])
        compute_cell(
            ArmData(doubled, snapshots(SESSIONS), retrievals()),
            pa.concat_tables([amn, amn]),
            REFERENCE,
            "short",
            FAST,
        )
    with pytest.raises(ValueError, match="unknown horizon"):
        compute_cell(arm(), amn, REFERENCE, "forever", FAST)
    with pytest.raises(ValueError, match="lack replicate"):
        compute_cell(arm(), amn, ReferenceFigures((0,), (1.0,), (1.0,), (1.0,)), "short", FAST)
    with pytest.raises(ValueError, match="ttft_ms"):
        compute_cell(replace(arm(), ttft_ms=np.ones(3)), amn, REFERENCE, "short", FAST)
    with pytest.raises(ValueError):
        MetricConfig(n_boot=-1)


def test_cells_combine_across_horizons(cell: CellMetrics) -> None:
    from drift_pipeline.evaluation._composites import aggregate_horizons

    long = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "long", FAST)
    row = aggregate_horizons(
        "drift_c", {"short": cell.samples["drift_c"], "long": long.samples["drift_c"]}
    )
    short_c, long_c = value(cell, "drift_c"), value(long, "drift_c")
    assert short_c is not None and long_c is not None
    assert row.value == pytest.approx((0.2 * short_c + 0.5 * long_c) / 0.7)
    assert row.value is not None and row.ci_low is not None and row.ci_high is not None
    assert row.ci_low <= row.value <= row.ci_high


def test_lift_is_drift_c_over_the_amnesiacs_on_the_same_probes(cell: CellMetrics) -> None:
    # The amnesiac: MVOT 0, Selectivity 0.5, Revision 0 (update 0 of 2), Action (0 + 1) / 2.
    baseline = 0.35 * 0.0 + 0.25 * 0.5 + 0.20 * 0.0 + 0.20 * 0.5
    assert value(cell, "drift_c_lift") == pytest.approx(value(cell, "drift_c") - baseline)
    own = compute_cell(amnesiac_arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    assert own.get("drift_c_lift")[2:5] == (0.0, 0.0, 0.0)


# The agent's reads before each session: per session, per read (text tokens, metered LLM
# tokens, reported LLM tokens). rep0 reads once a session; rep1 skips two sessions and reads
# twice before one, so its Q_rate is 3 / 4.
SESSION_READS: dict[int, list[list[tuple[int, int, int]]]] = {
    0: [[(10, 0, 0)], [(20, 4, 4)], [(30, 0, 0)], [(40, 0, 0)]],
    1: [[], [(50, 0, 0), (70, 6, 6)], [(60, 0, 0)], []],
}


def with_session_reads(
    table: pa.Table, reads: dict[int, list[list[tuple[int, int, int]]]], metered: bool = True
) -> pa.Table:
    """``table`` (snapshots) with the agent's reads, and the meter's columns beside them."""
    per_session = [session for rep in sorted(reads) for session in reads[rep]]
    lists = {
        "session_read_ms": [[1.0] * len(session) for session in per_session],
        "session_read_tokens": [[r[0] for r in session] for session in per_session],
        "session_metered_read_tokens": [[r[1] for r in session] for session in per_session],
        "session_reported_read_tokens": [[r[2] for r in session] for session in per_session],
    }
    for name, values in lists.items():
        kind = pa.list_(pa.float64() if name.endswith("_ms") else pa.int64())
        table = table.append_column(name, pa.array(values, kind))
    write = table.column("write_tokens")
    zeros = pa.array([0] * table.num_rows, pa.int64())
    table = table.append_column("metered_write_tokens", write if metered else zeros)
    return table.append_column("reported_write_tokens", write)


def metered_retrievals(metered: bool = True, read_tokens: int = 100) -> pa.Table:
    table = retrievals(read_tokens=read_tokens)
    llm = table.column("llm_read_tokens")
    zeros = pa.array([0] * table.num_rows, pa.int64())
    table = table.append_column("metered_read_tokens", llm if metered else zeros)
    return table.append_column("reported_read_tokens", llm)


def test_the_read_side_of_token_cost_is_measured_on_the_agents_reads() -> None:
    # rep0: 45 write + 21 storage + 1 read a session × (10 + 20 + 4 + 30 + 40) / 4 = 92;
    # rep1: 45 + 11.75 + 3/4 × (50 + 70 + 6 + 60) / 3 = 103.25. The probes' retrieves (10
    # context and 2 LLM tokens each) hand over less than the agent's reads: they do not enter.
    expected = (92 + 103.25) / 2
    cells = {}
    for metered in (True, False):
        data = ArmData(
            answers(ARM),
            with_session_reads(snapshots(SESSIONS), SESSION_READS, metered),
            metered_retrievals(metered, read_tokens=10),
        )
        cells[metered] = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    for cell in cells.values():
        assert value(cell, "q_rate") == pytest.approx((1 + 0.75) / 2)
        assert value(cell, "token_cost_per_session") == pytest.approx(expected)
        assert value(cell, "session_read_tokens_per_read") == pytest.approx((25 + 60) / 2)
        # The probes' own figures are reported as before.
        assert value(cell, "read_tokens_per_retrieve") == 10.0


def test_a_read_costs_at_least_what_the_probes_it_leads_up_to_were_handed() -> None:
    # The reads before sessions 0-1 lead up to checkpoint 2, those before 2-3 to checkpoint 4.
    # rep0's probes get 100 context + 2 LLM tokens each, more than its reads (mean 17, then
    # 35): each read costs 102; rep0 = 45 + 21 + 1 × 102. rep1's reads (50 and 76, then 60)
    # cost 100 each before checkpoint 2 and 103.5 (its probes: 100, 100, 100, 114) before 4:
    # 45 + 11.75 + 3/4 × (2 × 100 + 103.5) / 3.
    rep1 = 45 + 11.75 + 0.75 * (2 * 100 + 103.5) / 3
    data = ArmData(
        answers(ARM), with_session_reads(snapshots(SESSIONS), SESSION_READS), metered_retrievals()
    )
    cell = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    assert value(cell, "token_cost_per_session") == pytest.approx((168 + rep1) / 2)
    # A soft gate's buffer is the harness's, appended at probes only: the memory's own share
    # of the context (here 10 of 100) is what a probe read is charged.
    buffered = metered_retrievals().append_column(
        "soft_buffer_tokens", pa.array([90] * 14, pa.int64())
    )
    data = ArmData(answers(ARM), with_session_reads(snapshots(SESSIONS), SESSION_READS), buffered)
    cell = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    assert value(cell, "token_cost_per_session") == pytest.approx((92 + 103.25) / 2)
    assert value(cell, "read_tokens_per_retrieve") == 100.0


def test_handing_over_more_at_the_probes_than_at_the_agents_reads_gains_nothing() -> None:
    """A memory that gives the agent's reads nothing and the probes its whole log pays for it.

    Its twin hands every read its log as it grows (0, 50, 100, 100 tokens before sessions 0-3)
    and the probes the same log; both answer the probes alike, so both pay on every read what
    the probes it leads up to got (102 a read in rep0). Without the probes in the read cost the
    exam-only memory would cost 66 a session (rep0) against the twin's 128.5 and keep its
    whole MVOT (the reference's TC is 84).
    """
    growing = [[(0, 0, 0)], [(50, 0, 0)], [(100, 0, 0)], [(100, 0, 0)]]
    honest = {rep: growing for rep in SESSIONS}
    exam_only = {rep: [[(0, 0, 0)]] * 4 for rep in SESSIONS}
    figures = {}
    for name, reads in (("honest", honest), ("exam_only", exam_only)):
        data = ArmData(
            answers(ARM), with_session_reads(snapshots(SESSIONS), reads), metered_retrievals()
        )
        figures[name] = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    twin, cheat = figures["honest"], figures["exam_only"]
    rep1 = 56.75 + (2 * 100 + 2 * 103.5) / 4
    assert value(cheat, "token_cost_per_session") == pytest.approx(((66 + 102) + rep1) / 2)
    for metric in ("token_cost_per_session", "mvot", "tes", "drift_c", "drift_e"):
        assert value(cheat, metric) == pytest.approx(value(twin, metric)), metric


def test_read_llm_tokens_in_token_cost_are_the_charged_ones() -> None:
    """Metered tokens are charged; a report above them is charged instead, never the smaller."""
    rep0 = 45 + 21 + (10 + 20 + 30 + 40 + 4 * 1000) / 4
    rep1 = 45 + 11.75 + 0.75 * (50 + 70 + 60 + 3 * 1000) / 3
    # A report within the tolerance of the meter's count agrees with it: the meter's is charged.
    close = {
        rep: [[(t, m, m) for t, m, _ in session] for session in sessions]
        for rep, sessions in SESSION_READS.items()
    }
    data = ArmData(
        answers(ARM),
        with_session_reads(snapshots(SESSIONS), close),
        metered_retrievals(read_tokens=10),
    )
    cell = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
    assert value(cell, "token_cost_per_session") == pytest.approx((92 + 103.25) / 2)
    assert cell.llm_tokens is not None and cell.llm_tokens.source == "metered"
    # A report far above the metered tokens says the backend spent tokens the meter did not
    # see: the report is charged, every read, whether or not some calls were metered.
    for metered in (True, False):
        reads = {
            rep: [[(t, m if metered else 0, 1000) for t, m, _ in session] for session in sessions]
            for rep, sessions in SESSION_READS.items()
        }
        data = ArmData(
            answers(ARM),
            with_session_reads(snapshots(SESSIONS), reads, metered=metered),
            metered_retrievals(metered=metered),
        )
        cell = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
        assert value(cell, "token_cost_per_session") == pytest.approx((rep0 + rep1) / 2)
        assert cell.llm_tokens is not None and cell.llm_tokens.source == "self-reported"
