"""What the leaderboard and the JSON say about tokens it could only be told, or not at all, and
storage it could not measure: a gap between metered and reported tokens, self-reported tokens,
a model spend that is unknown (bounds, not ranked), "not measured"."""

from __future__ import annotations

import pyarrow as pa
import pytest
from evaluation.test_metrics import FAST, REFERENCE, amnesiac_arm, arm

from drift_pipeline.evaluation import (
    NO_SNAPSHOT,
    UNKNOWN_MODEL_TOKENS,
    ArmData,
    CellMetrics,
    TokenAudit,
    compute_cell,
)
from drift_pipeline.evaluation._metrics import UNSEEN_SELECTIVITY
from drift_pipeline.memory import Arm
from drift_pipeline.report import render_leaderboard, standings, summary_json

from .test_leaderboard import _amnesiac, _arm, _Cell


def _with(table: pa.Table, **columns: object) -> pa.Table:
    for name, values in columns.items():
        if name in table.column_names:
            table = table.drop_columns([name])
        table = table.append_column(name, pa.array(values))
    return table


def _figure(metrics: CellMetrics, name: str) -> float:
    """A whole-cell figure that must be defined."""
    value = metrics.get(name).value
    assert value is not None, name
    return value


TRANSCRIPT_TOKENS = 400
"""Tokens of each session's transcript in the fixture (more than any storage growth in it)."""


def _cell(
    key: str,
    metered: int,
    reported: int | None,
    *,
    storage: bool = True,
    outside: bool = False,
    seen: int = 0,
) -> _Cell:
    """The evaluation fixture's arm, with ``metered`` and ``reported`` tokens on each store.

    ``reported=None``: the backend did not know its tokens; ``outside``: it declares models the
    meter cannot see; ``seen``: model calls its worker saw go around the meter, per store.
    """
    data = _arm(arm())  # the fixture without its canary probe
    n, q = data.snapshots.num_rows, data.retrievals.num_rows
    # What the loop charges (see the memory package's charge): the larger report, else metered.
    charged = reported if reported is not None and reported > metered * 1.05 else metered
    snapshots = _with(
        data.snapshots,
        write_tokens=[charged] * n,
        metered_write_tokens=[metered] * n,
        reported_write_tokens=pa.array([reported] * n, pa.int64()),
        transcript_tokens=[TRANSCRIPT_TOKENS] * n,
        models_outside_meter=[outside] * n,
        unmetered_calls=[seen] * n,
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
        "charged": 100 * 8,
        "cost_known": True,
        "models_outside_meter": False,
        "unmetered_calls": 0,
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
    cost = _figure(metrics, "token_cost_per_session")
    assert cost == pytest.approx(_figure(measured.metrics, "token_cost_per_session") + per_session)
    assert per_session > 0 and cost > _figure(measured.metrics, "token_cost_per_session")
    measured_selectivity = measured.metrics.get("selectivity").value
    assert measured_selectivity is not None and measured_selectivity > UNSEEN_SELECTIVITY
    assert _figure(metrics, "drift_c") < _figure(measured.metrics, "drift_c")
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
    # An arm takes the least trustworthy source of its cells, and an unknown report stays so.
    mixed = TokenAudit(100, 100, 10) + TokenAudit(0, None, 5, models_outside_meter=True)
    assert (mixed.source, mixed.reported, mixed.cost_known) == ("unknown", None, False)
    assert (TokenAudit(100, 100, 10) + TokenAudit(0, 50, 5)).source == "self-reported"


@pytest.mark.parametrize(
    ("metered", "reported", "outside", "seen", "source", "charged"),
    [
        (100, 100, False, 0, "metered", 100),
        (100, 104, False, 0, "metered", 100),  # within the tolerance: the same count
        (100, 0, False, 0, "metered", 100),  # under-reported: the meter's figure stands
        (100, 300, False, 0, "self-reported", 300),  # tokens the meter did not see
        (0, 50, False, 0, "self-reported", 50),
        (100, None, False, 0, "metered", 100),  # no report to compare: the meter's count
        (0, None, True, 0, "unknown", 0),  # a declared spend nobody counted
        (0, 0, True, 0, "unknown", 0),  # zero from a declared spender is not a figure
        (100, 100, True, 0, "unknown", 100),  # a report that adds nothing to the meter's
        (0, 0, False, 3, "unknown", 0),  # calls seen going around the meter
        (100, 400, True, 0, "self-reported", 400),  # a report that covers the unseen spend
    ],
)
def test_where_the_charged_tokens_come_from(
    metered: int, reported: int | None, outside: bool, seen: int, source: str, charged: int
) -> None:
    audit = TokenAudit(metered, reported, 10, models_outside_meter=outside, unmetered_calls=seen)
    assert (audit.source, audit.charged, audit.cost_known) == (source, charged, source != "unknown")


def test_a_report_above_the_meter_is_charged_and_marked_self_reported() -> None:
    over, metered = _cell("over@hard", 100, 300), _cell("honest@hard", 100, 100)
    assert over.metrics.llm_tokens is not None
    assert over.metrics.llm_tokens.source == "self-reported"
    text = render_leaderboard(standings([over, metered]))
    assert "[tokens self-reported]" in _row(text, "over@hard")
    assert (
        "over@hard: LLM tokens self-reported: its token_counts() reported 300 per session, the "
        "meter counted 100 (+200%); the larger report is charged" in text
    )
    arms = {a["arm"]: a for a in summary_json([over, metered], ["fixture-001"])["arms"]}
    assert arms["over@hard"]["ranked"] and arms["over@hard"]["llm_tokens"]["charged"] == 2400
    assert arms["over@hard"]["verification"]["checks"]["cost"] is None
    assert arms["honest@hard"]["verification"]["checks"]["cost"] is True


def test_an_unknown_spend_is_never_ranked_above_a_known_one() -> None:
    # The same answers and storage; one arm's spend is known (metered, and heavy), the other's
    # is not: on its known part alone it would look cheaper, and score higher.
    known = _cell("metered@hard", 5000, 5000)
    unknown = _cell("service@hard", 0, None, outside=True)
    m_known, m_unknown = known.metrics, unknown.metrics
    assert m_unknown.llm_tokens is not None and not m_unknown.llm_tokens.cost_known
    tc_known = m_known.get("token_cost_per_session").value
    tc_unknown = m_unknown.get("token_cost_per_session").value
    assert tc_known is not None and tc_unknown is not None and tc_unknown < tc_known
    assert m_unknown.bounds["token_cost_per_session"] == "lower"
    for name in ("mvot", "drift_c", "drift_c_lift"):
        assert m_unknown.bounds[name] == "upper"
        assert _figure(m_unknown, name) >= _figure(m_known, name), name
    assert _figure(m_unknown, "drift_c") > _figure(m_known, "drift_c")
    for name in ("tes", "drift_e"):
        assert m_unknown.get(name).value is None
        assert m_unknown.not_measured[name] == UNKNOWN_MODEL_TOKENS
    # Stored, the bounds say which rows are bounds.
    bounds = dict(
        zip(
            m_unknown.table().column("metric").to_pylist(),
            m_unknown.table().column("bound").to_pylist(),
            strict=True,
        )
    )
    assert bounds["mvot"] == "upper" and bounds["token_cost_per_session"] == "lower"
    assert bounds["selectivity"] is None
    rows = standings([unknown, known])
    assert [s.arm for s in rows] == ["metered@hard", "service@hard"]
    assert rows[0].ranked and not rows[1].ranked and rows[1].valid
    text = render_leaderboard(rows)
    header, row = text.splitlines()[0], _row(text, "service@hard")
    assert "[model tokens unknown; not ranked]" in row
    assert row[header.index("DRIFT-C") :].startswith("≤")
    assert row[header.index("TES") :].startswith("not measured")
    assert (
        f"service@hard: model tokens unknown: it declares models the harness's meter cannot "
        f"see, and reports no token counts. Only 0 LLM tokens per session are known (metered), "
        f"so its token cost is at least {tc_unknown:.0f} per session" in text
    )
    summary = summary_json([unknown, known], ["fixture-001"])
    arms = {a["arm"]: a for a in summary["arms"]}
    service = arms["service@hard"]
    assert (service["rank"], service["ranked"], arms["metered@hard"]["rank"]) == (None, False, 1)
    assert service["drift_c"]["bound"] == "upper" and service["tes"]["value"] is None
    assert service["token_cost_per_session"]["bound"] == "lower"
    assert service["verification"]["checks"]["cost"] is False
    assert service["cost_note"].startswith("service@hard: model tokens unknown")
    cell = next(c for c in summary["cells"] if c["arm"] == "service@hard")
    assert cell["metrics"]["mvot"]["bound"] == "upper" and cell["bounds"]["mvot"] == "upper"
    assert (
        "bound"
        not in next(c for c in summary["cells"] if c["arm"] == "metered@hard")["metrics"]["mvot"]
    )


def test_an_unknown_spend_bounds_mvot_at_zero_where_the_memory_loses() -> None:
    # The amnesiac's answers as the arm's: no advantage, so on any cost MVOT is at most 0.
    data = _arm(amnesiac_arm())
    n = data.snapshots.num_rows
    snapshots = _with(
        data.snapshots,
        metered_write_tokens=[0] * n,
        reported_write_tokens=pa.nulls(n, pa.int64()),
        models_outside_meter=[True] * n,
    )
    q = data.retrievals.num_rows
    retrievals = _with(data.retrievals, metered_read_tokens=[0] * q, reported_read_tokens=[0] * q)
    metrics = compute_cell(
        ArmData(data.answers, snapshots, retrievals), _amnesiac(), REFERENCE, "short", FAST
    )
    assert metrics.get("mvot").value == 0.0 and metrics.bounds["mvot"] == "upper"


def test_a_comparison_with_an_unknown_spend_has_no_cost_differences() -> None:
    from drift_pipeline.evaluation import compare_arms

    def data(outside: bool) -> ArmData:
        base = _arm(arm())
        n, q = base.snapshots.num_rows, base.retrievals.num_rows
        snapshots = _with(
            base.snapshots,
            metered_write_tokens=[10] * n,
            reported_write_tokens=[10] * n,
            models_outside_meter=[outside] * n,
        )
        retrievals = _with(
            base.retrievals, metered_read_tokens=[0] * q, reported_read_tokens=[0] * q
        )
        return ArmData(base.answers, snapshots, retrievals)

    compared = compare_arms(data(True), data(False), _amnesiac(), REFERENCE, "short", FAST)
    for name in ("mvot", "drift_c", "tes", "token_cost_per_session"):
        assert compared.get(name).value is None
        assert compared.not_measured[name].startswith("arm A: its models run where")
    assert compared.get("revision_accuracy").value == 0.0  # what cost leaves alone is compared
    same = compare_arms(data(False), data(False), _amnesiac(), REFERENCE, "short", FAST)
    assert same.get("mvot").value == 0.0 and not same.not_measured
