"""Every leaderboard view names its reader and judge with their measured figures."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from drift_pipeline.evaluation import (
    OFFLINE_SCORING,
    Scoring,
    SetFigures,
    ShippedFigures,
    load_shipped_figures,
)
from drift_pipeline.evaluation import _reader_figures as figures_module
from drift_pipeline.report import EXACT_PATH_LINE, render_leaderboard, standings, summary_json
from report.test_leaderboard import _Cell, _cells

LLM_READER = "llm:scripted-model@0123456789ab/cap8192"
LLM_JUDGE = "llm:scripted-model@ba9876543210"


@dataclass
class _ScoredCell(_Cell):
    scoring: Scoring = OFFLINE_SCORING


def _scored(scoring: Scoring) -> list[_ScoredCell]:
    # The fixture's hand-built cells record no scoring (the leaderboard takes the default);
    # these say who scored them, as a run's cells do.
    return [
        _ScoredCell(c.scenario, c.horizon, c.replicates, c.arm, c.metrics, c.faults, scoring)
        for c in _cells()
    ]


def test_the_terminal_leaderboard_names_the_offline_reader_and_judge_and_their_figures() -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    lines = render_leaderboard(standings(_cells())).splitlines()
    scored = lines.index(f"scored by: reader {OFFLINE_SCORING.reader}, judge context@2")
    figures = lines[scored + 1]
    own, others = shipped.by_name("reader_check"), shipped.by_name("reader_check_others")
    assert own is not None and others is not None
    assert (
        f"hand-written, {own.items:,} items: accuracy {100 * (own.accuracy or 0):.1f}%" in figures
    )
    assert f"by other authors and used to revise its rules, 11 sets, {others.items:,} items" in (
        figures
    )
    assert f"false accepts {100 * (others.false_accept_rate or 0):.1f}%" in figures
    assert lines[scored + 2].startswith("  on text it has not met (")
    assert lines[scored + 3].strip() == EXACT_PATH_LINE
    assert "`--reader llm` is the exact path" in EXACT_PATH_LINE


def test_the_json_summary_carries_the_reader_judge_and_figures() -> None:
    summary = summary_json(_cells(), ["fixture-001"])
    shipped = load_shipped_figures()
    assert shipped is not None
    [scoring] = summary["scoring"]
    assert scoring["reader"] == OFFLINE_SCORING.reader and scoring["judge"] == "context@2"
    assert scoring["offline_reader"] is True and scoring["note"] == EXACT_PATH_LINE
    names = [f["name"] for f in scoring["reader_figures"]]
    assert names[:2] == ["reader_check", "reader_check_others"]
    assert names == [s.name for s in shipped.sets if s.scores == "reader"] and len(names) >= 13
    first = shipped.sets[0]
    assert scoring["reader_figures"][0]["accuracy"] == first.accuracy
    assert scoring["reader_figures"][0]["reader"] == OFFLINE_SCORING.reader
    assert {(c["reader"], c["judge"]) for c in summary["cells"]} == {
        (OFFLINE_SCORING.reader, "context@2")
    }


def test_the_markdown_leaderboard_lists_them_too() -> None:
    markdown = render_leaderboard(standings(_cells()), markdown=True).splitlines()
    assert f"- scored by: reader {OFFLINE_SCORING.reader}, judge context@2" in markdown
    assert f"  - {EXACT_PATH_LINE}" in markdown


def test_an_llm_reader_and_judge_are_named_and_said_to_be_not_measured() -> None:
    cells = _scored(Scoring(LLM_READER, LLM_JUDGE, False))
    text = render_leaderboard(standings(cells))
    assert f"scored by: reader {LLM_READER}, judge {LLM_JUDGE}" in text
    assert f"reader {LLM_READER}: not measured" in text
    assert f"judge {LLM_JUDGE}: not measured here (`drift judge-check` measures it" in text
    assert EXACT_PATH_LINE not in text and "%" not in text.split("scored by:")[1]
    [scoring] = summary_json(cells, ["fixture-001"])["scoring"]
    assert scoring["reader_figures"] is None and scoring["judge_figures"] is None
    assert scoring["note"] is None


def test_the_rule_judge_of_an_llm_reader_quotes_its_answer_set_figures() -> None:
    judge = f"rule:context@2+{OFFLINE_SCORING.reader}"
    cells = _scored(Scoring(LLM_READER, judge, False))
    text = render_leaderboard(standings(cells))
    shipped = load_shipped_figures()
    assert shipped is not None
    answers = shipped.by_name("judge_check")
    assert answers is not None
    assert "on the 36 labelled answers shipped with the package: accuracy " in text
    assert f"{100 * (answers.accuracy or 0):.1f}%" in text
    [scoring] = summary_json(cells, ["fixture-001"])["scoring"]
    assert [f["name"] for f in scoring["judge_figures"]] == ["judge_check"]


def test_figures_of_another_reader_version_are_never_quoted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    # The reader changed and nobody re-measured: the file is for another version.
    monkeypatch.setattr(figures_module, "_loaded", [replace(shipped, reader="careful@0")])
    text = render_leaderboard(standings(_cells()))
    assert f"reader {OFFLINE_SCORING.reader}: not measured (the shipped figures are for " in text
    assert "careful@0; drift judge-check --write-figures re-measures" in text
    assert "hand-written" not in text
    [scoring] = summary_json(_cells(), ["fixture-001"])["scoring"]
    assert scoring["reader_figures"] is None


def _with_held_out(shipped: ShippedFigures, reader: str) -> ShippedFigures:
    """The shipped figures and two held-out sets measured with ``reader``."""

    def held(name: str, items: int, accuracy: float, false_accepts: float) -> SetFigures:
        return SetFigures(
            name, "set.jsonl", "other authors", "reader", items, accuracy, false_accepts,
            0.2, reader, "context@2", True, "0123456789ab",
        )  # fmt: skip

    sets = (held("held_out", 250, 0.8, 0.12), held("held_out/qa", 130, 0.75, 0.16))
    sets += (held("held_out/qb", 120, 0.85, 0.08),)
    return replace(shipped.shipped_only(), sets=shipped.shipped_only().sets + sets)


def test_the_figures_on_text_the_reader_has_not_met_are_on_their_own_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    figures = _with_held_out(shipped, shipped.reader)
    monkeypatch.setattr(figures_module, "_loaded", [figures])
    lines = render_leaderboard(standings(_cells())).splitlines()
    scored = lines.index(f"scored by: reader {OFFLINE_SCORING.reader}, judge context@2")
    assert "used to revise its rules, 11 sets" in lines[scored + 1]
    assert lines[scored + 2] == (
        "  on text it has not met (by other authors, kept outside the package and never used to "
        "revise its rules), 2 sets, 250 items: accuracy 80.0% (75.0%–85.0% per set), false "
        "accepts 12.0% (8.0%–16.0%)"
    )
    assert lines[scored + 3].strip() == EXACT_PATH_LINE
    [scoring] = summary_json(_cells(), ["fixture-001"])["scoring"]
    held = [f for f in scoring["reader_figures"] if f["held_out"]]
    assert [f["name"] for f in held] == ["held_out", "held_out/qa", "held_out/qb"]
    assert held[0]["digest"] == "0123456789ab"


def test_held_out_figures_of_another_reader_are_said_to_be_not_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    for figures in (shipped.shipped_only(), _with_held_out(shipped, "careful@0")):
        monkeypatch.setattr(figures_module, "_loaded", [figures])
        text = render_leaderboard(standings(_cells()))
        assert (
            "  on text it has not met (sets by other authors never used to revise its rules): "
            "not measured for this reader (drift judge-check --write-figures --held-out FILE "
            "measures them)"
        ) in text.splitlines()
        assert "250 items" not in text
        [scoring] = summary_json(_cells(), ["fixture-001"])["scoring"]
        assert not any(f["held_out"] for f in scoring["reader_figures"])
