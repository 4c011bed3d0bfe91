"""A run whose sanity arm does not lose: every row of every view says it is unverified, and why.

The sanity arm ``sentence_log`` (a dated log of every first-person sentence) beside ``bm25``
alone, on a world of the test's own: the log beats the keyword retriever, so nothing shows
that the probes reward memory rather than keeping everything, and no row may claim otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from report.tiny_world import invoke, run_world

REASON = "sanity arm sentence_log@hard did not stay 0.10 DRIFT-C below bm25"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, object]]:
    folder = tmp_path_factory.mktemp("unverified")
    summary = folder / "summary.json"
    arms = ("--backend", "bm25", "--backend", "sentence_log")
    result = run_world(folder, "--horizon", "short", *arms, "--json", str(summary))
    assert result.exit_code == 0, result.output
    return folder / "data", result.output, json.loads(summary.read_text(encoding="utf-8"))


def test_the_terminal_marks_every_row_unverified_with_the_reason(run):
    _, output, _ = run
    lines = output.splitlines()
    rows = [line for line in lines if line.startswith(("bm25@hard ", "sentence_log@hard "))]
    assert len(rows) >= 2 and all(line.rstrip().endswith("unverified") for line in rows[:2])
    assert any(line.startswith(f"unverified (every row): {REASON}") for line in lines)


def test_the_json_the_record_and_the_page_mark_every_row_unverified(run):
    data, _, summary = run
    rows = [*summary["arms"], *(r for rows in summary["horizons"].values() for r in rows)]
    for row in rows:
        assert row["verification"]["status"] == "unverified"
        assert row["verification"]["checks"]["sanity"] is False
        assert any(line.startswith(REASON) for line in row["verification"]["reasons"])
        assert row["record"].endswith(".json")
    record = json.loads(next((data / "_records" / "leaderboards").glob("*.json")).read_text())
    assert {r["verification"]["status"] for r in record["leaderboard"]} == {"unverified"}
    board = invoke("leaderboard", str(data))
    assert board.exit_code == 0
    table, _, budget = board.output.partition("budget (spec §7.8, p99 ms)")
    shown = [line for line in table.splitlines() if line.startswith(("bm25@", "sentence_log@"))]
    assert len(shown) == 2 and all(line.rstrip().endswith("unverified") for line in shown)
    assert "sentence_log@hard" in budget  # the stored latency budget, printed again
    page = invoke("report", str(data))
    text = Path(page.output.strip()).read_text(encoding="utf-8")
    tables = [record["leaderboard"], *record["horizons"].values()]
    shown_rows = text.count('data-value="unverified" class="unverified reasons"')
    assert shown_rows == sum(len(rows) for rows in tables)  # each table's every row
    assert 'data-value="verified"' not in text and REASON in text
