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
