"""Failed reader or judge calls never become a figure: not measured, or partly judged, said so."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from drift_pipeline.evaluation import JUDGE_FAILED, ArmData, CellMetrics, compute_cell
from evaluation.test_metrics import (
    AMNESIAC,
    ARM,
    FAST,
    PROBES,
    REFERENCE,
    SESSIONS,
    answers,
    arm,
    retrievals,
    snapshots,
    with_judge_errors,
)

EVERY = {(replicate, probe[0]) for replicate in (0, 1) for probe in PROBES}
JUDGED_FIGURES = (
    "error_rate",
    "mvot",
    "revision_accuracy",
    "action_alignment",
    "privacy",
    "drift_c",
    "drift_c_lift",
    "tes",
    "drift_e",
)


def _arm(failed: set[tuple[int, str]] = frozenset()) -> ArmData:  # type: ignore[assignment]
    return ArmData(with_judge_errors(answers(ARM), failed), snapshots(SESSIONS), retrievals())


def _amnesiac(failed: set[tuple[int, str]] = frozenset()) -> pa.Table:  # type: ignore[assignment]
    return with_judge_errors(answers(AMNESIAC), failed)


def _not_measured_for_the_judge(cell: CellMetrics, metric: str) -> bool:
    row = cell.get(metric)
    draws = cell.samples[metric].draws
    undefined = row.value is None and row.ci_low is None and bool(np.isnan(draws).all())
    return undefined and cell.not_measured.get(metric, "").startswith(JUDGE_FAILED)


def test_every_answer_failing_leaves_no_figure_and_no_chance_stand_in() -> None:
    cell = compute_cell(_arm(EVERY), _amnesiac(), REFERENCE, "short", FAST)
    for metric in JUDGED_FIGURES:
        assert _not_measured_for_the_judge(cell, metric), metric
    # DRIFT-C is not Selectivity renormalised, nor DRIFT-E LPS alone: both stay measured apart.
    assert cell.get("selectivity").value is not None and cell.get("lps").value is not None
    assert cell.not_measured["drift_c"] == f"{JUDGE_FAILED} every answer its mvot rests on"
    failures = cell.judge_failures
    assert failures is not None and (failures.arm, failures.answers) == (14, 14)
    assert (failures.amnesiac, failures.reference) == (0, 0)
    assert failures.first == "judge: unparsable reply" and not failures.partly
    assert failures.line() == f"{JUDGE_FAILED} 14 of its 14 answers"


def test_the_amnesiacs_failed_answers_leave_mvot_and_drift_c_unmeasured() -> None:
    cell = compute_cell(_arm(), _amnesiac(EVERY), REFERENCE, "short", FAST)
    for metric in ("error_rate_amnesiac", "mvot", "drift_c", "drift_c_lift", "tes", "drift_e"):
        assert _not_measured_for_the_judge(cell, metric), metric
    # The arm's own figures were judged in full.
    for metric in ("error_rate", "revision_accuracy", "action_alignment", "privacy"):
        assert cell.get(metric).value is not None and metric not in cell.not_measured
    assert cell.judge_failures is not None and cell.judge_failures.amnesiac == 14
    assert cell.judge_failures.arm == 0 and "14 of the amnesiac's" in cell.judge_failures.line()


def test_the_reference_compressors_failed_answers_leave_tes_unmeasured() -> None:
    reference = ArmData(with_judge_errors(answers(ARM), EVERY), snapshots(SESSIONS), retrievals())
    cell = compute_cell(_arm(), _amnesiac(), reference, "short", FAST)
    for metric in ("tes", "drift_e"):
        assert _not_measured_for_the_judge(cell, metric), metric
    assert cell.get("drift_c").value is not None and "drift_c" not in cell.not_measured
    assert cell.judge_failures is not None and cell.judge_failures.reference == 14


def test_some_failed_answers_keep_their_figures_and_say_they_are_partly_judged() -> None:
    cell = compute_cell(_arm({(0, "p3"), (0, "p5")}), _amnesiac(), REFERENCE, "short", FAST)
    assert cell.get("drift_c").value is not None and not cell.not_measured
    failures = cell.judge_failures
    assert failures is not None and failures.arm == 2
    assert failures.partly["drift_c"] == "2 of its 12 answers unjudged"  # canaries apart
    assert failures.partly["action_alignment"] == "1 of its 2 answers unjudged"
    assert "privacy" not in failures.partly  # its canary answers were all judged


def test_a_component_lost_to_the_judge_is_never_renormalised_away() -> None:
    # Both fresh revision answers (p3) failed: Revision Accuracy has nothing judged left.
    failed = {(0, "p3"), (1, "p3")}
    counted = compute_cell(_arm(failed), _amnesiac(), REFERENCE, "short", FAST)
    assert _not_measured_for_the_judge(counted, "revision_accuracy")
    assert _not_measured_for_the_judge(counted, "drift_c")
    # Where Revision rests on too few probes to enter DRIFT-C at all, DRIFT-C does not need it.
    config = replace(FAST, min_component_units=10)
    small = compute_cell(_arm(failed), _amnesiac(), REFERENCE, "short", config)
    whole = compute_cell(_arm(), _amnesiac(), REFERENCE, "short", config)
    assert _not_measured_for_the_judge(small, "revision_accuracy")
    assert small.get("drift_c").value is not None
    assert small.judge_failures is not None and "drift_c" in small.judge_failures.partly
    assert small.get("selectivity") == whole.get("selectivity")


def test_a_cell_judged_in_full_is_as_it_was() -> None:
    # Without a judge_error column at all, and with one that is empty.
    plain = compute_cell(arm(), answers(AMNESIAC), REFERENCE, "short", FAST)
    cell = compute_cell(_arm(), _amnesiac(), REFERENCE, "short", FAST)
    assert cell.judge_failures is None and cell.rows == plain.rows and not cell.not_measured


def test_the_reference_compressors_own_cell_counts_its_answers_once() -> None:
    own = _arm({(0, "p1")})
    cell = compute_cell(own, _amnesiac(), own, "short", FAST)
    assert cell.judge_failures is not None
    assert (cell.judge_failures.arm, cell.judge_failures.reference) == (1, 0)
