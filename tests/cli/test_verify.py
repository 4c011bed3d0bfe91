"""``drift verify``: a run's record as written passes; one with a changed figure is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report.tiny_world import TinyRun, invoke

from drift_pipeline.report import latest_record


@pytest.fixture(scope="module")
def record(tiny_run: TinyRun) -> Path:
    summary = tiny_run.summary
    path = latest_record(tiny_run.folder / "data")
    assert f"run record (signed): {path}" in tiny_run.output
    # Every row of the JSON names the record it came from and how far to trust it.
    for row in (*summary["arms"], *(r for rows in summary["horizons"].values() for r in rows)):
        assert row["record"] == path.name
        assert row["verification"]["status"] in {"verified", "unverified"}
        assert row["verification"]["checks"]["audit"] is True  # the stored worlds passed
        assert row["scoring"][0]["reader_figures"]
    return path


def test_a_record_as_written_verifies(record: Path):
    result = invoke("verify", str(record))
    assert result.exit_code == 0
    assert result.output.startswith(f"verified: {record} (created ")
    body = json.loads(record.read_text())
    assert body["scenarios"][0]["id"] == "report-tiny" and len(body["scenarios"][0]["sha256"]) == 64
    assert set(body["horizons"]) == {"short", "medium"}


def test_a_record_with_a_changed_figure_is_rejected_in_one_line(record: Path, tmp_path: Path):
    body = json.loads(record.read_text())
    row = body["leaderboard"][0]
    row["drift_c"]["value"] = round(row["drift_c"]["value"] + 0.01, 6)
    changed = tmp_path / record.name
    changed.write_text(json.dumps(body))
    result = invoke("verify", str(changed))
    assert result.exit_code == 1
    assert result.output == (
        f"{changed}: leaderboard row {row['arm']}: its figures differ from what was recorded "
        "(row sha256 mismatch) (and 1 more)\n"
    )


def test_a_file_that_is_not_a_record_exits_2(tmp_path: Path):
    other = tmp_path / "summary.json"
    other.write_text("[]")
    result = invoke("verify", str(other))
    assert result.exit_code == 2 and "not a leaderboard record" in result.output
