"""``drift query --format csv``: values holding commas, quotes or line breaks stay one field."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from click.testing import CliRunner

from drift_pipeline.cli.group import main


def test_csv_quotes_fields_that_hold_separators(tmp_path: Path) -> None:
    sql = (
        "select 'moved to Lyon, France' as said, 'she said \"no\"' as quoted, "
        "'two\nlines' as broken, null as missing, 3 as n"
    )
    result = CliRunner().invoke(
        main, ["query", sql, "--out", str(tmp_path), "--format", "csv"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.output)))
    assert rows == [
        ["said", "quoted", "broken", "missing", "n"],
        ["moved to Lyon, France", 'she said "no"', "two\nlines", "", "3"],
    ]
