"""What the leaderboard and the JSON say about tokens it could only be told, and storage it could
not measure: a gap between metered and reported tokens, self-reported tokens, "not measured"."""

from __future__ import annotations

import pyarrow as pa
import pytest
from evaluation.test_metrics import FAST, REFERENCE, arm

from drift_pipeline.evaluation import NO_SNAPSHOT, ArmData, TokenAudit, compute_cell
from drift_pipeline.evaluation._metrics import UNSEEN_SELECTIVITY
from drift_pipeline.memory import Arm
from drift_pipeline.report import render_leaderboard, standings, summary_json

from .test_leaderboard import _amnesiac, _arm, _Cell


def _with(table: pa.Table, **columns: object) -> pa.Table:
    for name, values in columns.items():
        if name in table.column_names:
            table = table.drop_columns([name])
        table = table.append_column(name, pa.array(values))  # type: ignore[arg-type]
    return table


TRANSCRIPT_TOKENS = 400
"""Tokens of each session's transcript in the fixture (more than any storage growth in it)."""


def _cell(key: str, metered: int, reported: int, *, storage: bool = True) -> _Cell:
    """The evaluation fixture's arm, with ``metered`` and ``reported`` tokens on each store."""
    data = _arm(arm())  # the fixture without its canary probe
    n, q = data.snapshots.num_rows, data.retrievals.num_rows
    snapshots = _with(
        data.snapshots,
        metered_write_tokens=[metered] * n,
        reported_write_tokens=[reported] * n,
        transcript_tokens=[TRANSCRIPT_TOKENS] * n,
    )
    if not storage:
        nulls = pa.nulls(n, pa.int64())
        snapshots = _with(snapshots, storage_tokens=nulls, storage_delta_tokens=nulls)
    retrievals = _with(data.retrievals, metered_read_tokens=[0] * q, reported_read_tokens=[0] * q)
    metrics = compute_cell(
        ArmData(data.answers, snapshots, retrievals), _amnesiac(), REFERENCE, "short", FAST
    )
    return _Cell("fixture-001", "short", 2, Arm.parse(key), metrics)


def _row(text: str, key: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(key))


def test_a_report_off_the_metered_tokens_by_more_than_five_percent_is_marked() -> None:
    cells = [_cell("under@hard", 100, 0), _cell("close@hard", 100, 104)]
    text = render_leaderboard(standings(cells))
    assert "[token report gap -100%]" in _row(text, "under@hard")
    assert "[token" not in _row(text, "close@hard")  # 4% off: within the tolerance
    assert (
        "under@hard: metered 100 LLM tokens per session, its token_counts() reported 0 (-100%)"
        in text
    )
    arms = {a["arm"]: a for a in summary_json(cells, ["fixture-001"])["arms"]}
    assert arms["under@hard"]["llm_tokens"] == {
        "metered": 100 * 8,
        "reported": 0,
        "source": "metered",
        "gap": -1.0,
        "gap_shown": True,
    }
    assert arms["close@hard"]["llm_tokens"]["gap_shown"] is False


def test_tokens_nothing_metered_are_marked_self_reported() -> None:
    text = render_leaderboard(standings([_cell("around@hard", 0, 50)]))
    assert "[tokens self-reported]" in _row(text, "around@hard")
    assert "around@hard: LLM tokens self-reported (50 per session)" in text


def test_an_arm_spending_nothing_gets_no_mark() -> None:
    text = render_leaderboard(standings([_cell("quiet@hard", 0, 0)]))
    assert "[token" not in _row(text, "quiet@hard") and "self-reported" not in text


def test_without_a_snapshot_selectivity_and_storage_are_not_measured_never_zero() -> None:
    cell = _cell("three@hard", 0, 0, storage=False)
    metrics = cell.metrics
    for name in ("selectivity", "storage_per_session", "storage_delta_per_session"):
        row = metrics.get(name)
        assert (row.value, row.n) == (None, 0), name
        assert metrics.not_measured[name] == NO_SNAPSHOT
    # Everything else is computed: the arm has a DRIFT-C, ranked with the others.
    assert metrics.get("drift_c").value is not None and metrics.get("mvot").value is not None
    measured = _cell("full@hard", 0, 0)
    # Hiding the memory never pays: the cost counts every transcript as stored, and DRIFT-C
    # counts Selectivity at chance. Against the same arm with its snapshot, the cost grows by
    # exactly the transcripts less the storage growth it reported, and the composite by what
    # chance Selectivity is worth less what was measured.
    snaps = _arm(arm()).snapshots
    per_session = TRANSCRIPT_TOKENS - (
        sum(snaps.column("storage_delta_tokens").to_pylist()) / snaps.num_rows
    )
    cost = metrics.get("token_cost_per_session").value
    assert cost == pytest.approx(measured.metrics.get("token_cost_per_session").value + per_session)
    assert per_session > 0 and cost > measured.metrics.get("token_cost_per_session").value
    measured_selectivity = measured.metrics.get("selectivity").value
    assert measured_selectivity is not None and measured_selectivity > UNSEEN_SELECTIVITY
    assert metrics.get("drift_c").value < measured.metrics.get("drift_c").value
    text = render_leaderboard(standings([cell, measured]))
    header = text.splitlines()[0]
    assert _row(text, "three@hard")[header.index("Select.") :].startswith("not measured")
    assert "three@hard: selectivity not measured: " + NO_SNAPSHOT in text
    summary = summary_json([cell], ["fixture-001"])
    assert summary["cells"][0]["not_measured"]["selectivity"] == NO_SNAPSHOT
    assert summary["cells"][0]["metrics"]["selectivity"]["value"] is None


def test_audits_add_up_over_an_arms_cells() -> None:
    total = TokenAudit(100, 0, 10) + TokenAudit(50, 75, 5)
    assert (total.metered, total.reported, total.sessions) == (150, 75, 15)
    assert total.gap == pytest.approx(-0.5)
