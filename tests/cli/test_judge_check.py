import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main
from drift_pipeline.evaluation import _reader_figures


def test_write_figures_re_measures_every_shipped_set_into_the_figures_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "reader_figures.json"
    monkeypatch.setattr(_reader_figures, "_package_file", lambda: target)
    result = CliRunner().invoke(main, ["judge-check", "--write-figures"])
    assert result.exit_code == 0, result.output
    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["reader"] == _reader_figures.CURRENT_READER
    assert written["command"] == "drift judge-check --write-figures"
    names = {record["name"] for record in written["sets"]}
    assert {"reader_check", "reader_check_others", "judge_check"} <= names
    assert str(target) in result.output


def test_held_out_sets_are_measured_only_when_writing_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "reader_figures.json"
    monkeypatch.setattr(_reader_figures, "_package_file", lambda: target)
    source = Path(_reader_figures.__file__).parent / "data" / "reader_check.jsonl"
    held = tmp_path / "held.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()[:5]
    held.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    refused = CliRunner().invoke(main, ["judge-check", "--held-out", str(held)])
    assert refused.exit_code == 2 and not target.exists()
    assert refused.output.strip() == "--held-out: only with --write-figures"
    result = CliRunner().invoke(main, ["judge-check", "--write-figures", "--held-out", str(held)])
    assert result.exit_code == 0, result.output
    written = json.loads(target.read_text(encoding="utf-8"))
    [whole] = [r for r in written["sets"] if r["name"] == "held_out"]
    assert whole["items"] == 5 and whole["held_out"] and whole["file"] == "held.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    failed = CliRunner().invoke(main, ["judge-check", "--write-figures", "--held-out", str(bad)])
    assert failed.exit_code == 2 and failed.output.strip().endswith(
        "bad.jsonl:1: not JSON (Expecting value)"
    )
    assert len(failed.output.strip().splitlines()) == 1
