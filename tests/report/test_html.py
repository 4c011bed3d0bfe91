"""The HTML report: self-contained, every plot drawn, and its numbers are the JSON's."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.report import PLOT_TITLES, ProbeTrace
from drift_pipeline.report._html import LEADERBOARD_COLUMNS, render_html
from drift_pipeline.report._report_data import ReportData
from report.tiny_world import TinyRun, invoke


class _Cells(HTMLParser):
    """Each leaderboard table's rows: arm → the data-value of every cell, by column label."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, dict[str, str]]] = {}
        self._table: str | None = None
        self._head: list[str] = []
        self._row: list[str] | None = None
        self._in_th = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        kinds = (found.get("class") or "").split()
        if tag == "table" and ("leaderboard" in kinds or "budget" in kinds):
            self._table, self._head = str(found["id"]), []
            self.tables[self._table] = {}
        elif self._table and tag == "th":
            self._in_th = True
            self._head.append("")
        elif self._table and tag == "tr" and "data-arm" in found:
            self._row = []
        elif self._row is not None and tag == "td":
            self._row.append(found.get("data-value") or "")

    def handle_data(self, data: str) -> None:
        if self._in_th:
            self._head[-1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "th":
            self._in_th = False
        elif tag == "tr" and self._row is not None and self._table:
            values = dict(zip(self._head, self._row, strict=False))
            self.tables[self._table][values["arm"]] = values
            self._row = None
        elif tag == "table":
            self._table = None


@pytest.fixture(scope="module")
def page(
    tmp_path_factory: pytest.TempPathFactory, tiny_run: TinyRun
) -> tuple[Path, dict[str, Any]]:
    folder = tiny_run.copy(tmp_path_factory.mktemp("html"))
    summary = tiny_run.summary
    result = invoke("report", str(folder / "data"))
    assert result.exit_code == 0, result.output
    path = Path(result.output.strip())
    assert path == folder / "data" / "_reports" / "report.html"
    return path, summary


BUDGET_LABELS = {
    "read": "Read p99 ms",
    "write": "Write p99 ms",
    "ttfrt": "TTFRT p99 ms",
    "dialectic": "Dialectic p99 ms",
}


def test_the_page_numbers_equal_the_json_summary(page: tuple[Path, dict[str, Any]]):
    path, summary = page
    parser = _Cells()
    parser.feed(path.read_text(encoding="utf-8"))
    tables = {"leaderboard-all": summary["arms"]} | {
        f"leaderboard-{h}": rows for h, rows in summary["horizons"].items()
    }
    assert set(parser.tables) == {*tables, "budget-table"}
    for table, rows in tables.items():
        shown = parser.tables[table]
        assert list(shown) == [row["arm"] for row in rows]  # same arms, same order
        for row in rows:
            cells = shown[row["arm"]]
            assert cells["rank"] == str(row["rank"])
            assert cells["status"] == row["verification"]["status"]
            assert cells["fault rate"] == repr(row["fault_rate"])
            # Every figure column, exactly the JSON's value (the text shows it rounded).
            for key, label in LEADERBOARD_COLUMNS:
                value = (row[key] or {}).get("value")
                assert cells[label] == ("" if value is None else repr(value)), (table, label)
    budget = parser.tables["budget-table"]
    assert list(budget) == [row["arm"] for row in summary["arms"] if row["budget"]]
    for row in summary["arms"]:
        for figure, label in BUDGET_LABELS.items():
            p99 = row["budget"]["figures"][figure]["p99_ms"]
            assert budget[row["arm"]][label] == ("" if p99 is None else repr(p99))


def test_the_page_is_self_contained_and_draws_every_plot(page: tuple[Path, dict[str, Any]]):
    path, _ = page
    text = path.read_text(encoding="utf-8")
    # Nothing fetched at view time: no external script, style, image or font.
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "<script src" not in text
    for name in PLOT_TITLES:
        assert f'id="plot-{name}"' in text
        assert (path.parent / f"{name}.svg").read_text().startswith("<svg")
        assert (path.parent / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    assert text.count("<svg") >= len(PLOT_TITLES)
    # The manifest names the scenario's hash; the record is named.
    assert json.loads((path.parent.parent / "_manifests" / "run.json").read_text())["scenarios"]
    assert "report-tiny" in text and "drift verify" in text


def test_an_unranked_arm_is_marked_with_its_fault_rate(tmp_path: Path):
    row = {"arm": "bm25@hard", "valid": False, "rank": None, "fault_rate": 0.125, "drift_c": None}
    record = {"leaderboard": [row], "horizons": {}, "signature": {}}
    data = ReportData(tmp_path / "r.json", record, {}, [], [], [], [], [], {})
    text = render_html(data, [], {})
    assert 'class="invalid" data-arm="bm25@hard"' in text
    assert "(not ranked: 12.5% of calls faulted)" in text


def test_a_privacy_figure_sits_beside_drift_c(tmp_path: Path):
    row = {
        "arm": "fact_store@hard",
        "rank": 1,
        "drift_c": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6},
        "privacy_score": {"value": 0.9, "ci_low": 0.8, "ci_high": 1.0},
    }
    record = {"leaderboard": [row], "horizons": {}, "signature": {}}
    trace = ProbeTrace(
        "w",
        "short",
        0,
        "fact_store@hard",
        "p1",
        6,
        "recall",
        "fact",
        "Where?",
        "Oslo",
        (2,),
        ({"session": 2, "stored_tokens": 5, "snapshot_session": 5, "snapshot": "Oslo"},),
        "lives in Oslo",
        "Oslo",
        True,
        "current: 'Oslo' (rule stated-as-current)",
        "careful@5",
    )
    data = ReportData(tmp_path / "r.json", record, {}, [], [], [], [], [], {row["arm"]: [trace]})
    text = render_html(data, [], {})
    assert text.index(">DRIFT-C<") < text.index(">Privacy score<") < text.index(">Lift<")
    assert 'data-value="0.9"' in text
    assert f'href="#{trace.anchor}"' in text and f'id="{trace.anchor}"' in text


def test_plots_without_the_drill_down_are_the_same_plots(page: tuple[Path, dict[str, Any]]):
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import gather, report_plots

    path, _ = page
    folder = path.parent.parent
    full = gather(folder, connect(folder))
    light = gather(folder, connect(folder), drill_down=False)
    assert full.traces and not light.traces
    assert [(p.name, p.spec) for p in report_plots(light)] == [
        (p.name, p.spec) for p in report_plots(full)
    ]


def test_the_plots_figures_are_the_json_summarys(page: tuple[Path, dict[str, Any]]):
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import gather, report_plots

    path, summary = page
    folder = path.parent.parent
    plots = {plot.name: plot for plot in report_plots(gather(folder, connect(folder)))}
    # The SVG written beside the page is this very spec drawn.
    assert set(plots) == set(PLOT_TITLES)
    mvot = {
        (p["horizon"], p["arm"]): p["value"]
        for p in plots["mvot_by_horizon"].spec["data"]["values"]
    }
    expected = {
        (horizon, row["arm"]): row["mvot"]["value"]
        for horizon, rows in summary["horizons"].items()
        for row in rows
        if row["mvot"] and row["mvot"]["value"] is not None
    }
    assert mvot == expected
    abilities = {
        (p["arm"], p["ability"]): p["value"] for p in plots["abilities"].spec["data"]["values"]
    }
    for row in summary["arms"]:
        for ability, key in (("revision", "revision_accuracy"), ("action", "action_alignment")):
            value = (row[key] or {}).get("value")
            assert abilities.get((row["arm"], ability)) == value


def test_privacy_is_shown_with_what_keeping_nothing_costs(tmp_path: Path) -> None:
    def row(arm: str, rank: int | None, drift_c: float | None, privacy: float) -> dict[str, Any]:
        figure = None if drift_c is None else {"value": drift_c, "ci_low": None, "ci_high": None}
        return {
            "arm": f"{arm}@hard",
            "backend": arm,
            "rank": rank,
            "ranked": rank is not None,
            "reference": rank is None,  # leaky_shared: a reference for Privacy, never ranked
            "drift_c": figure,
            "privacy": {"value": privacy, "ci_low": None, "ci_high": None},
        }

    rows = [
        row("bm25", 1, 0.61, 1.0),
        row("amnesiac", 2, 0.08, 1.0),
        row("leaky_shared", None, None, 0.25),
    ]
    record = {"leaderboard": rows, "horizons": {}, "signature": {}}
    text = render_html(ReportData(tmp_path / "r.json", record, {}, [], [], [], [], [], {}), [], {})
    assert "amnesiac@hard: Privacy 1.000 at DRIFT-C 0.080" in text
    assert "leaky_shared@hard</a> (reference, not ranked)" in text
