"""An arm whose calls faulted past the limit in a cell is listed with its fault rate, unranked."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.test_metrics import FAST, REFERENCE, amnesiac_arm, arm

from drift_pipeline.evaluation import CellMetrics, compute_cell, metric_specs
from drift_pipeline.memory import Arm
from drift_pipeline.report import render_board, render_leaderboard, standings, summary_json
from report.test_leaderboard import _amnesiac, _arm


@dataclass
class _Cell:
    scenario: str
    horizon: str
    replicates: int
    arm: Arm
    metrics: CellMetrics
    faults: list[str] = field(default_factory=list)
    valid: bool = True
    fault_rate: float = 0.0


def _cells(invalid_rate: float | None) -> list[_Cell]:
    """fact_store (the better one) and amnesiac; fact_store invalid when a rate is given."""
    out = []
    for key, data in (("fact_store@hard", arm()), ("amnesiac@hard", amnesiac_arm())):
        metrics = compute_cell(_arm(data), _amnesiac(), REFERENCE, "short", FAST)
        cell = _Cell("fixture-001", "short", 2, Arm.parse(key), metrics)
        if invalid_rate is not None and key.startswith("fact_store"):
            cell.valid, cell.fault_rate = False, invalid_rate
        out.append(cell)
    return out


def test_an_invalid_arm_comes_after_the_ranked_ones_with_its_fault_rate_and_no_figures():
    valid = standings(_cells(None))
    assert [s.arm for s in valid] == ["fact_store@hard", "amnesiac@hard"]
    rows = standings(_cells(0.375))
    assert [(s.arm, s.valid) for s in rows] == [("amnesiac@hard", True), ("fact_store@hard", False)]
    lines = render_leaderboard(rows).splitlines()
    assert lines[2].startswith("amnesiac@hard ")
    assert lines[3].startswith("fact_store@hard (not ranked: 37.5% of calls faulted)")
    assert set(lines[3].split(")", 1)[1].split()) == {"—"}  # no figure to read as a score
    markdown = render_leaderboard(rows, markdown=True)
    assert "| fact_store@hard (not ranked: 37.5% of calls faulted) | — |" in markdown


def test_the_json_summary_says_which_cells_and_arms_are_invalid_and_their_fault_rates():
    payload = summary_json(_cells(0.375), ["fixture-001"])
    cells = {c["arm"]: (c["valid"], c["fault_rate"]) for c in payload["cells"]}
    assert cells == {"fact_store@hard": (False, 0.375), "amnesiac@hard": (True, 0.0)}
    # The arms keep their order: the invalid one after the ranked ones.
    assert [a["arm"] for a in payload["arms"]] == ["amnesiac@hard", "fact_store@hard"]
    # Every per-arm list marks it: not valid, no rank, and no figure a reader could rank it by.
    for rows in (payload["arms"], *payload["horizons"].values()):
        arms = {a["arm"]: a for a in rows}
        unranked, ranked = arms["fact_store@hard"], arms["amnesiac@hard"]
        assert (unranked["valid"], unranked["rank"], unranked["fault_rate"]) == (False, None, 0.375)
        assert unranked["drift_c"] is None and unranked["mvot"] is None
        assert (ranked["valid"], ranked["rank"]) == (True, 1)
        assert ranked["drift_c"]["value"] is not None
        verification = unranked["verification"]
        assert verification["status"] == "unverified"
        assert verification["checks"]["fault_rate"] is False
        assert any("37.5% of its calls faulted" in line for line in verification["reasons"])


def test_cells_without_call_counts_are_taken_as_valid():
    @dataclass
    class _Stored:  # as rebuilt from stored tables: no validity fields at all
        scenario: str
        horizon: str
        replicates: int
        arm: Arm
        metrics: CellMetrics
        faults: list[str] = field(default_factory=list)

    cell = _cells(None)[0]
    stored = _Stored(cell.scenario, cell.horizon, 2, cell.arm, cell.metrics)
    assert standings([stored])[0].valid
    assert summary_json([stored], ["fixture-001"])["cells"][0]["valid"] is True


def _two_horizons() -> list[_Cell]:
    """fact_store past the limit at the medium horizon only; every other cell valid."""
    out = []
    for horizon in ("short", "medium"):
        for cell in _cells(0.2 if horizon == "medium" else None):
            cell.horizon = horizon
            out.append(cell)
    return out


def _no_figure(row: dict[str, object]) -> None:
    names = [spec.name for spec in metric_specs("headline")]
    assert all(row[name] is None for name in names)
    assert row["recall_by_subtype"] == row["score_by_subtype"] == {}
    assert row["budget"] is None and row["llm_tokens"] is None and row["privacy"] is None


def test_an_arm_past_the_limit_in_one_cell_is_unranked_in_every_summary_with_no_figure():
    cells = _two_horizons()
    payload = summary_json(cells, ["fixture-001"], 0.05)
    lists = {"arms": payload["arms"], **payload["horizons"]}
    assert set(lists) == {"arms", "short", "medium"}
    for name, rows in lists.items():
        row = next(r for r in rows if r["arm"] == "fact_store@hard")
        assert (row["valid"], row["rank"], row["fault_rate"]) == (False, None, 0.2), name
        assert row["verification"]["checks"]["fault_rate"] is False
        _no_figure(row)
        # The other arm is ranked, first, in every list.
        assert [r["arm"] for r in rows] == ["amnesiac@hard", "fact_store@hard"]
    # Each of its cells too, the valid short one included, keeping its own fault rate.
    for cell in payload["cells"]:
        if cell["arm"] == "fact_store@hard":
            assert cell["valid"] is False and cell["metrics"] is None, cell["horizon"]
            assert cell["latency_ms"] is None and cell["tokens"] is None
            assert cell["fault_rate"] == (0.2 if cell["horizon"] == "medium" else 0.0)
        else:
            assert cell["valid"] is True and cell["metrics"]["drift_c"]["value"] is not None
    # The terminal: not ranked in both horizon tables, and no budget row for it.
    board = render_board(cells, 0.05)
    assert board.count("fact_store@hard (not ranked: 20.0% of calls faulted)") == 3
    budget = board.split("budget (spec §7.8, p99 ms)")[1]
    assert "fact_store@hard" not in budget.split("scored by")[0]
