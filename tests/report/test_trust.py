"""A row is verified only when the sanity arms lost, its faults stayed under the limit and the
audit passed; every other row says why it is not."""

from __future__ import annotations

from drift_pipeline.evaluation import MetricRow
from drift_pipeline.report import SANITY_MARGIN, ArmStanding, verify_rows


def _row(arm: str, drift_c: float, valid: bool = True, fault_rate: float = 0.0) -> ArmStanding:
    figure = MetricRow("drift_c", None, drift_c, drift_c, drift_c, 10)
    return ArmStanding(arm, arm.split("@")[0], "hard", {"drift_c": figure}, valid, fault_rate)


PASSED = {"made-up-001/short": None}


def test_rows_are_verified_when_the_sanity_floor_lost_by_the_margin():
    rows = [_row("fact_store@hard", 0.70), _row("sentence_log@hard", 0.70 - SANITY_MARGIN - 0.01)]
    checked = verify_rows(rows, 0.05, PASSED)
    assert {arm: v.status for arm, v in checked.items()} == {
        "fact_store@hard": "verified",
        "sentence_log@hard": "verified",
    }


def test_a_sanity_arm_within_the_margin_leaves_every_row_unverified():
    rows = [_row("fact_store@hard", 0.70), _row("sentence_log@hard", 0.65)]
    checked = verify_rows(rows, 0.05, PASSED)
    assert {v.status for v in checked.values()} == {"unverified"}
    assert checked["fact_store@hard"].reasons == (
        "sanity arm sentence_log@hard did not stay 0.10 DRIFT-C below fact_store (0.650 vs 0.700)",
    )
    assert checked["fact_store@hard"].checks == {
        "sanity": False,
        "fault_rate": True,
        "audit": True,
        "cost": True,
        "judged": True,
    }


def test_missing_sanity_arms_faults_and_audits_are_each_a_reason():
    rows = [_row("fact_store@hard", 0.70), _row("bm25@hard", 0.5, valid=False, fault_rate=0.2)]
    checked = verify_rows(rows, 0.05, {"made-up-001/short": "probe p3 has no evidence"})
    assert checked["bm25@hard"].reasons == (
        "no sanity arm ran beside it (e.g. --backend sentence_log)",
        "20.0% of its calls faulted or were skipped (limit 5.0%)",
        "audit failed on made-up-001/short: probe p3 has no evidence",
    )
    assert verify_rows(rows)["fact_store@hard"].checks["audit"] is None
    assert verify_rows(rows)["fact_store@hard"].line().startswith("unverified: no sanity arm")


def test_exam_only_may_not_beat_the_sentence_log_it_holds_by_the_margin() -> None:
    # exam_only holds sentence_log's log and hands it to the probes only: more than the margin
    # above sentence_log means the metrics reward answering the probes, not remembering.
    base = [_row("fact_store@hard", 0.90), _row("sentence_log@hard", 0.50)]
    gaining = verify_rows([*base, _row("exam_only@hard", 0.61)], 0.05, PASSED)
    assert gaining["fact_store@hard"].reasons == (
        "sanity arm exam_only@hard beat sentence_log, the same memory, by more than 0.10 "
        "DRIFT-C (0.610 vs 0.500)",
    )
    even = verify_rows([*base, _row("exam_only@hard", 0.55)], 0.05, PASSED)
    assert {v.status for v in even.values()} == {"verified"}


VENDOR = "my_pkg.memory:MyMemory@hard"


def test_an_arm_under_test_that_a_sanity_arm_matches_is_unverified_on_its_own_row_only():
    rows = [
        _row("fact_store@hard", 0.70),
        _row("sentence_log@hard", 0.31),
        _row(VENDOR, 0.23),
    ]
    checked = verify_rows(rows, 0.05, PASSED)
    assert {arm: v.status for arm, v in checked.items()} == {
        "fact_store@hard": "verified",
        "sentence_log@hard": "verified",
        VENDOR: "unverified",
    }
    assert checked[VENDOR].reasons == (
        "sentence_log@hard, a trivial strategy, scored at least as high as it (0.310 vs 0.230)",
    )
    assert checked[VENDOR].checks == {
        "sanity": True,  # the sanity arm lost to the reference: the probes reward memory
        "above_sanity": False,
        "fault_rate": True,
        "audit": True,
        "cost": True,
        "judged": True,
    }
    assert "above_sanity" not in checked["fact_store@hard"].checks


def test_an_arm_under_test_is_never_the_reference_the_sanity_arms_are_held_against():
    # A sanity arm within 0.10 of the best reference fails the check however far above it an
    # arm under test scores: the vendor's own figure cannot vouch for the probes.
    rows = [
        _row(VENDOR, 0.90),
        _row("fact_store@hard", 0.50),
        _row("sentence_log@hard", 0.45),
    ]
    checked = verify_rows(rows, 0.05, PASSED)
    assert {v.status for v in checked.values()} == {"unverified"}
    assert checked[VENDOR].reasons == (
        "sanity arm sentence_log@hard did not stay 0.10 DRIFT-C below fact_store (0.450 vs 0.500)",
    )


def test_without_a_reference_arm_the_sanity_check_cannot_run_and_says_which_to_add():
    rows = [_row(VENDOR, 0.23), _row("sentence_log@hard", 0.31)]
    checked = verify_rows(rows, 0.05, PASSED)
    missing = (
        "no reference arm with a DRIFT-C to hold the sanity arms against "
        "(e.g. --backend fact_store)"
    )
    assert checked["sentence_log@hard"].reasons == (missing,)
    assert checked[VENDOR].reasons == (
        missing,
        "sentence_log@hard, a trivial strategy, scored at least as high as it (0.310 vs 0.230)",
    )
