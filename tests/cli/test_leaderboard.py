"""``drift leaderboard`` prints a stored board again; two runs a day apart both make the trend.

"A day apart" is the records' dates, set with ``DRIFT_RECORD_TIME`` (the documented clock of
records), not a day of waiting.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from report.tiny_world import invoke, run_tiny, run_world

from drift_pipeline.report import list_records


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("board")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DRIFT_RECORD_TIME", "2026-03-01T09:00:00Z")
        first, _ = run_tiny(base)
        patch.setenv("DRIFT_RECORD_TIME", "2026-03-02T09:00:00Z")
        run_tiny(base, "--backend", "bm25")
    # The terminal board of the run: one table per horizon, then the composite.
    text = first.output
    assert text.index("horizon short:") < text.index("horizon medium:") < text.index("all horizons")
    return base / "data"


def test_each_record_is_printed_again(folder: Path):
    first, second = list_records(folder)
    assert first.name.startswith("20260301T090000Z-")
    assert second.name.startswith("20260302T090000Z-")
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


def test_the_report_plots_both_records(folder: Path):
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import gather, report_plots

    page = invoke("report", str(folder))
    assert page.exit_code == 0, page.output
    assert 'id="plot-drift_c_trend"' in Path(page.output.strip()).read_text(encoding="utf-8")
    plots = {p.name: p for p in report_plots(gather(folder, connect(folder)))}
    points = plots["drift_c_trend"].spec["data"]["values"]
    fact_store = sorted(p["created"] for p in points if p["arm"] == "fact_store@hard")
    assert fact_store == ["2026-03-01T09:00:00Z", "2026-03-02T09:00:00Z"]


def test_a_record_time_that_is_not_a_time_is_one_line(tmp_path: Path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DRIFT_RECORD_TIME", "yesterday")
        result = run_world(tmp_path, "--horizon", "short", "--backend", "amnesiac")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        "DRIFT_RECORD_TIME='yesterday': not an ISO 8601 time (e.g. 2026-03-02T09:00:00Z) "
        "(the run's tables are written; no record)"
    )
    assert not (tmp_path / "data" / "_records").exists()
