"""The leaderboard, the JSON summary and compare lines read the metric registry."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from evaluation.test_metrics import AMNESIAC, FAST, REFERENCE, amnesiac_arm, answers, arm
from metric_registry import example_importable, example_spec, registered
from probe_family_example import register_canary

from drift_pipeline.evaluation import ArmData, CellMetrics, compare_arms, compute_cell
from drift_pipeline.evaluation import metric_spec as spec_of
from drift_pipeline.memory import Arm
from drift_pipeline.report import (
    ALLOWED_LEAK_MARK,
    allowed_leaks,
    comparison_lines,
    render_leaderboard,
    render_record_board,
    standings,
    summary_json,
)
from drift_pipeline.report._html import _leaderboard as _html_leaderboard

SUITE_JSON = [
    "mvot",
    "selectivity",
    "revision_accuracy",
    "action_alignment",
    "tes",
    "lps",
    "privacy",
    "consistency",
    "consistency_agreement",
    "attribution",
    "handoff_sessions",
    "drift_c",
    "drift_c_lift",
    "drift_e",
]
SUITE_HEADER = ["arm", "DRIFT-C", "Lift", "DRIFT-E", "MVOT", "Select.", "Revision", "Action"]
SUITE_HEADER.append("TES")
SUITE_HEADER.append("LPS")


@dataclass
class _Cell:
    scenario: str
    horizon: str
    replicates: int
    arm: Arm
    metrics: CellMetrics
    faults: list[str] = field(default_factory=list)


def _no_canary(table: pa.Table) -> pa.Table:
    """The evaluation fixture without its canary probe ``p7``: a world with no Privacy figure."""
    return table.filter(pc.field("probe_id") != "p7")


def _arm(data: ArmData) -> ArmData:
    return ArmData(_no_canary(data.answers), data.snapshots, _no_canary(data.retrievals))


def _amnesiac() -> pa.Table:
    return _no_canary(answers(AMNESIAC))


def _cells() -> list[_Cell]:
    out = []
    for key, data in (("fact_store@hard", arm()), ("amnesiac@hard", amnesiac_arm())):
        metrics = compute_cell(_arm(data), _amnesiac(), REFERENCE, "short", FAST)
        out.append(_Cell("fixture-001", "short", 2, Arm.parse(key), metrics))
    return out


def _compare(a: ArmData, b: ArmData) -> CellMetrics:
    return compare_arms(_arm(a), _arm(b), _amnesiac(), REFERENCE, "short", FAST)


@pytest.fixture(autouse=True)
def _example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    example_importable(monkeypatch)


def _header(text: str) -> list[str]:
    return text.splitlines()[0].split()


def test_the_suite_leaderboard_and_summary() -> None:
    cells = _cells()
    text = render_leaderboard(standings(cells))
    assert _header(text) == SUITE_HEADER
    assert [line.split()[0] for line in text.splitlines()[2:4]] == [
        "fact_store@hard",
        "amnesiac@hard",
    ]
    # No measured reader: LPS is marked modelled, in the table and in the JSON.
    assert text.splitlines()[4].startswith("m: LPS modelled")  # right under the two arms
    assert text.splitlines()[2].rstrip().endswith(" m")
    summary = summary_json(cells, ["fixture-001"])
    assert list(summary["cells"][0]["metrics"]) == SUITE_JSON
    assert list(summary["arms"][0])[3:] == [
        "valid",
        "fault_rate",
        "ranked",
        "reference",
        "rank",
        "drift_c",
        "drift_c_lift",
        "drift_e",
        "mvot",
        "selectivity",
        "revision_accuracy",
        "action_alignment",
        "tes",
        "lps",
        "privacy",  # null here: no canary probe
        "token_cost_per_session",
        "leaks",
        "leak_allowed",
        "lps_modelled",
        "not_applicable",
        "recall_by_subtype",
        "score_by_subtype",
        "not_measured",
        "llm_tokens",
        "bounds",
        "cost_note",
        "budget",
        "judge_failures",
        "verification",
        "scoring",
    ]
    assert summary["arms"][0]["privacy"] is None
    assert summary["arms"][0]["lps_modelled"] is True
    assert summary["cells"][0]["lps_modelled"] is True
    # The amnesiac's lift over itself is exactly 0.
    amnesiac = next(a for a in summary["arms"] if a["arm"] == "amnesiac@hard")
    assert amnesiac["drift_c_lift"] == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert summary["arms"][0]["not_applicable"] == []
    assert set(summary["arms"][0]["recall_by_subtype"]) == set(
        summary["cells"][0]["recall_by_subtype"]
    )
    markdown = render_leaderboard(standings(cells), markdown=True)
    assert markdown.splitlines()[0] == "| " + " | ".join(SUITE_HEADER) + " |"


def test_labels_come_from_the_registry() -> None:
    cells = _cells()
    with registered(replace(spec_of("tes"), label="Efficiency")):
        header = _header(render_leaderboard(standings(cells)))
    assert header == [*SUITE_HEADER[:8], "Efficiency", "LPS"]
    assert _header(render_leaderboard(standings(cells))) == SUITE_HEADER  # restored


def test_a_suite_metric_can_leave_or_join_a_view() -> None:
    cells = _cells()
    moved = replace(spec_of("lps"), headline=False), replace(spec_of("privacy"), headline=True)
    with registered(*moved):
        header = _header(render_leaderboard(standings(cells)))
        arms = summary_json(cells, ["fixture-001"])["arms"]
    assert header == [*SUITE_HEADER[:9], "Privacy"]
    assert "lps" not in arms[0] and "privacy" in arms[0]


def test_an_example_metric_appears_by_its_registration_alone() -> None:
    with registered(example_spec("RECALL_ACCURACY"), example_spec("EMPTY_READS")):
        cells = _cells()
        rows = standings(cells)
        text = render_leaderboard(rows)
        summary = summary_json(cells, ["fixture-001"])
        lines = comparison_lines(_compare(arm(), amnesiac_arm()))
    assert _header(text) == [*SUITE_HEADER, "Recall"]
    recall = rows[0].rows["recall_accuracy"]
    assert recall.value == pytest.approx((1.0 + 1 / 3) / 2)
    assert text.splitlines()[2].split("  ")[-1].startswith(f"{recall.value:.2f} [")
    metrics = summary["cells"][0]["metrics"]
    assert list(metrics) == [*SUITE_JSON, "recall_accuracy", "empty_reads"]
    assert metrics["recall_accuracy"]["value"] == pytest.approx(recall.value)
    assert metrics["empty_reads"] == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert summary["arms"][0]["recall_accuracy"]["value"] == pytest.approx(recall.value)
    assert [line.split()[0] for line in lines][-2:] == ["storage_per_session", "recall_accuracy"]
    # fact_store answers 4 of 6 recall probes right, the amnesiac 1 of 6.
    assert lines[-1].split()[1] == f"{(1.0 + 1 / 3) / 2 - (0 + 1 / 3) / 2:+.3f}"


def test_digits_and_null_when_undefined() -> None:
    cells = _cells()
    with registered(replace(spec_of("mvot"), digits=4)):
        text = render_leaderboard(standings(cells))
    mvot = standings(cells)[0].rows["mvot"]
    assert f"{mvot.value:.4f} [" in text
    # No canary probe, no Privacy figure: null, where other undefined figures are objects.
    metrics = summary_json(cells, ["fixture-001"])["cells"][0]["metrics"]
    assert metrics["privacy"] is None
    with registered(replace(spec_of("privacy"), null_when_undefined=False)):
        metrics = summary_json(cells, ["fixture-001"])["cells"][0]["metrics"]
    assert metrics["privacy"] == {"value": None, "ci_low": None, "ci_high": None}


def test_compare_lines_follow_the_compare_view() -> None:
    diff = _compare(arm(), arm())
    lines = comparison_lines(diff)
    assert [line.split()[0] for line in lines] == [
        "drift_c",
        "drift_c_lift",
        "drift_e",
        "mvot",
        "selectivity",
        "revision_accuracy",
        "action_alignment",
        "tes",
        "lps",
        "read_ms_p99",
        "storage_per_session",
    ]
    assert lines[0] == "  drift_c                +0.000  [+0.000, +0.000]"


def test_tes_is_the_geometric_mean_across_scenarios() -> None:
    base = _cells()[0]
    # The same cell under two scenario names, one with TES scaled: the arithmetic mean of
    # (t, 100 t) would be 50.5 t; the geometric mean is 10 t.
    tes = base.metrics.samples["tes"]
    scaled = replace(tes, value=(tes.value or 0.0) * 100, draws=tes.draws * 100)
    other = replace(base.metrics, samples={**base.metrics.samples, "tes": scaled})
    cells = [base, _Cell("fixture-002", "short", 2, base.arm, other)]
    row = standings(cells)[0].rows["tes"]
    assert row.value == pytest.approx((tes.value or 0.0) * 10)


def _canary_cells() -> list[_Cell]:
    """The fixture's cells on its world with its canary probe (every view has Privacy)."""
    cells = []
    for key, data in (("fact_store@hard", arm()), ("amnesiac@hard", amnesiac_arm())):
        metrics = compute_cell(data, answers(AMNESIAC), REFERENCE, "short", FAST)
        cells.append(_Cell("fixture-001", "short", 2, Arm.parse(key), metrics))
    return cells


def test_privacy_sits_beside_drift_c_where_a_canary_measured_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    register_canary(monkeypatch)
    # The fixture's world with its canary probe: every view gains a Privacy figure.
    cells = _canary_cells()
    rows = standings(cells)
    privacy = rows[0].rows["privacy"]
    assert privacy.value is not None
    header = _header(render_leaderboard(rows))
    assert header[:3] == ["arm", "DRIFT-C", "Privacy"]
    # Never Privacy without its price: keeping nothing scores it, as the amnesiac shows.
    keeps_nothing = next(s for s in rows if s.backend == "amnesiac")
    price = (
        f"amnesiac@hard: Privacy {keeps_nothing.rows['privacy'].value:.3f} at DRIFT-C "
        f"{keeps_nothing.rows['drift_c'].value:.3f}"
    )
    assert price in render_leaderboard(rows)
    assert "run --backend amnesiac beside it" in render_leaderboard(standings(cells[:1]))
    summary = summary_json(cells, ["fixture-001"])
    assert summary["arms"][0]["privacy"]["value"] == pytest.approx(privacy.value)
    assert summary["cells"][0]["metrics"]["privacy"]["value"] is not None
    # Without the canary the column is gone, not shown empty.
    assert "Privacy" not in _header(render_leaderboard(standings(_cells())))


def test_an_allowed_leak_is_marked_on_every_view_and_its_privacy_not_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    register_canary(monkeypatch)
    # A memory kept for every entity that drops what sounds secret gives no canary away: its
    # Privacy would read perfect. The run allowed it to leak, and the check saw it leak.
    cells = _canary_cells()
    seen = "it leaks across entities: a fact stored for B (X-1) was returned to A"
    conformance = {
        "fact_store": {"passed": True, "leak": seen, "leak_allowed": True},
        "other": {"passed": True, "leak": None, "leak_allowed": True},  # allowed, not seen
    }
    leaks = allowed_leaks(conformance)
    assert leaks == {"fact_store": seen}
    rows = standings(cells, None, leaks)
    leaker = next(s for s in rows if s.backend == "fact_store")
    assert leaker.leak == seen and leaker.rows["privacy"].value is None
    board = render_leaderboard(rows)
    line = next(row for row in board.splitlines() if row.startswith("fact_store@hard"))
    assert f"[{ALLOWED_LEAK_MARK}]" in line and "not measured" in line
    assert (
        f"fact_store@hard: Privacy not measured: {ALLOWED_LEAK_MARK}: the conformance check "
        f"saw it ({seen})"
    ) in board
    assert "amnesiac@hard" in board and "Privacy 1.000" not in line
    summary = summary_json(cells, ["fixture-001"], leaks=leaks)
    row = next(r for r in summary["arms"] if r["backend"] == "fact_store")
    assert row["leak_allowed"] == seen and row["privacy"] is None
    assert row["not_measured"]["privacy"].startswith(ALLOWED_LEAK_MARK)
    cell = next(c for c in summary["cells"] if c["backend"] == "fact_store")
    assert cell["leak_allowed"] == seen and cell["metrics"]["privacy"] is None
    assert cell["not_measured"]["privacy"].startswith(ALLOWED_LEAK_MARK)
    kept = next(r for r in summary["arms"] if r["backend"] == "amnesiac")
    assert kept["leak_allowed"] is None and kept["privacy"]["value"] is not None
    assert all(r["leak_allowed"] == seen for r in summary["horizons"]["short"][:1])
    # The stored record's views: the terminal board and the HTML table.
    assert f"fact_store@hard [{ALLOWED_LEAK_MARK}]" in render_record_board(
        {"leaderboard": summary["arms"], "horizons": summary["horizons"]}
    )
    html = _html_leaderboard(summary["arms"], "board", "record")
    assert f'<span class="leak-mark">[{ALLOWED_LEAK_MARK}]</span>' in html
    assert "not measured" in html
