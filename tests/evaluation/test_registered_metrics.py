"""Metrics registered with a computation: rows in every cell, paired differences, errors."""

from __future__ import annotations

import numpy as np
import pytest
from metric_registry import example_importable, example_spec, registered

from drift_pipeline.evaluation import (
    METRICS,
    ArmData,
    CellInputs,
    MetricSpec,
    UnitRate,
    compare_arms,
    compute_cell,
)
from evaluation.test_metrics import (
    AMNESIAC,
    ARM,
    FAST,
    REFERENCE,
    answers,
    arm,
    retrievals,
    with_answers,
)


@pytest.fixture(autouse=True)
def _example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    example_importable(monkeypatch)


def _session_spec() -> MetricSpec:
    def stored_noise(cell: CellInputs) -> UnitRate:
        tiers = cell.snapshots.column("tier").to_pylist()
        delta = cell.snapshots.column("storage_delta_tokens").to_pylist()
        eps = cell.config.epsilon_tokens
        return UnitRate(
            "session",
            [1.0 if d > eps else 0.0 for d in delta],
            [t == "noise" for t in tiers],
        )

    return MetricSpec(
        name="noise_stored",
        label="Noise in",
        unit="share",
        direction="lower",
        description="Noise sessions stored",
        compute=stored_noise,
    )


def test_without_registrations_the_rows_are_the_suites() -> None:
    plain = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    with registered(example_spec("RECALL_ACCURACY"), _session_spec()):
        extended = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    suite_rows = [row for row in extended.rows if row.metric in METRICS]
    assert tuple(suite_rows) == plain.rows  # same figures, same order
    assert [r.metric for r in extended.rows if r.checkpoint is None] == [
        *METRICS,
        "recall_accuracy",
        "noise_stored",
    ]
    assert [r.metric for r in extended.rows[len(plain.rows) :]][:1] == ["recall_accuracy"]


def test_a_probe_rate_is_a_replicate_mean_with_checkpoints() -> None:
    with registered(example_spec("RECALL_ACCURACY")):
        cell = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    # Recall probes p1, p2 (cp 2) and p4 (cp 4): rep0 3 of 3 right, rep1 1 of 3.
    overall = cell.get("recall_accuracy")
    assert overall.value == pytest.approx((1.0 + 1 / 3) / 2)
    assert overall.n == 6
    assert overall.ci_low is not None and overall.ci_high is not None
    assert overall.ci_low <= overall.value <= overall.ci_high
    assert cell.get("recall_accuracy", 2).value == pytest.approx((1.0 + 0.5) / 2)
    assert cell.get("recall_accuracy", 4).value == pytest.approx((1.0 + 0.0) / 2)
    assert cell.get("recall_accuracy", 4).n == 2
    assert cell.samples["recall_accuracy"].draws.size == FAST.n_boot


def test_session_and_retrieval_rates() -> None:
    empty = example_spec("EMPTY_READS")
    with registered(empty, _session_spec()):
        cell = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
        quiet = ArmData(arm().answers, arm().snapshots, retrievals(read_tokens=0))
        silent = compute_cell(quiet, answers(AMNESIAC), REFERENCE, "short", FAST)
    # Noise sessions: rep0 stores 1 of 2 (delta 10 > 8), rep1 0 of 1.
    assert cell.get("noise_stored").value == pytest.approx(0.25)
    assert cell.get("noise_stored").n == 3
    assert cell.get("empty_reads").value == 0.0
    assert silent.get("empty_reads").value == 1.0
    assert silent.get("empty_reads").n == 14
    with pytest.raises(KeyError):
        cell.get("empty_reads", 2)  # only probe rates have per-checkpoint rows


def test_paired_comparison_includes_registered_metrics() -> None:
    better = with_answers(ARM, 1, 1, (True, None, None, None))  # rep1 answers p2 right
    with registered(example_spec("RECALL_ACCURACY")):
        same = compare_arms(arm(), arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
        diff = compare_arms(
            ArmData(answers(better), arm().snapshots, arm().retrievals),
            arm(),
            answers(AMNESIAC),
            REFERENCE,
            "short",
            FAST,
        )
    row = same.get("recall_accuracy")
    assert (row.value, row.ci_low, row.ci_high) == (0.0, 0.0, 0.0)
    assert diff.get("recall_accuracy").value == pytest.approx((2 / 3 - 1 / 3) / 2)


def _returning(result: object) -> MetricSpec:
    return MetricSpec(
        name="bad_rate",
        label="Bad",
        unit="share",
        direction="higher",
        description="Broken on purpose",
        compute=lambda _: result,
    )


@pytest.mark.parametrize(
    ("result", "error", "message"),
    [
        (0.5, TypeError, "metric 'bad_rate' .* returned a float, not a UnitRate"),
        (
            UnitRate("probe", [1.0, 0.0]),
            ValueError,
            r"'bad_rate' \(evaluation.test_registered_metrics:_returning.<locals>.<lambda>\) "
            "returned 2 values for 14 probe rows",
        ),
        (UnitRate("turn", [1.0]), ValueError, "unit 'turn' is not one of probe, session"),
        (
            UnitRate("session", [np.nan] * 8),
            ValueError,
            "returned a non-finite value for a counted row",
        ),
    ],
)
def test_a_broken_computation_names_the_metric(
    result: object, error: type[Exception], message: str
) -> None:
    with registered(_returning(result)), pytest.raises(error, match=message):
        compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)


def test_uncounted_rows_may_be_nan_and_no_counted_row_is_undefined() -> None:
    spec = _returning(UnitRate("session", [np.nan] * 8, [False] * 8))
    with registered(spec):
        cell = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    assert cell.get("bad_rate").value is None
    assert cell.get("bad_rate").n == 0
