"""``drift leaderboard`` prints a stored board again; two runs a day apart both make the trend."""

from __future__ import annotations

from pathlib import Path

import pytest
import time_machine
from report.tiny_world import invoke, run_tiny

from drift_pipeline.report import list_records


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("board")
    with time_machine.travel("2026-03-01 09:00:00+00:00", tick=True):
        first, _ = run_tiny(base)
    with time_machine.travel("2026-03-02 09:00:00+00:00", tick=True):
        run_tiny(base, "--backend", "bm25")
    # The terminal board of the run: one table per horizon, then the composite.
    text = first.output
    assert text.index("horizon short:") < text.index("horizon medium:") < text.index("all horizons")
    return base / "data"


def test_each_record_is_printed_again(folder: Path):
    first, second = list_records(folder)
    assert first.name.startswith("20260301T09") and second.name.startswith("20260302T09")
    latest = invoke("leaderboard", str(folder))
    assert latest.exit_code == 0 and latest.output.startswith(f"record {second.name}\n")
    assert "bm25@hard" in latest.output
    earlier = invoke("leaderboard", str(folder), "--record", first.name)
    assert earlier.exit_code == 0 and "bm25@hard" not in earlier.output
    for text in (latest.output, earlier.output):
        assert text.index("horizon short:") < text.index("horizon medium:")
        assert "all horizons" in text and "status" in text
    assert "recorded 2026-03-01T09:" in earlier.output
    listed = invoke("leaderboard", str(folder), "--list")
    assert listed.output.split() == [first.name, second.name]


def test_the_trend_view_has_a_row_per_record_and_arm(folder: Path):
    result = invoke(
        "query",
        "select created, arm, drift_c from leaderboard_trend where horizon = 'all' "
        "and arm = 'fact_store@hard' order by created",
        "--out",
        str(folder),
        "--format",
        "csv",
    )
    lines = result.output.splitlines()
    assert lines[0] == "created,arm,drift_c"
    assert [line.split(",")[0][:10] for line in lines[1:]] == ["2026-03-01", "2026-03-02"]
    assert all(float(line.split(",")[2]) >= 0 for line in lines[1:])


def test_a_missing_record_or_folder_exits_2(folder: Path, tmp_path: Path):
    assert invoke("leaderboard", str(folder), "--record", "nope.json").exit_code == 2
    empty = invoke("leaderboard", str(tmp_path))
    assert empty.exit_code == 2 and "no leaderboard record" in empty.output
