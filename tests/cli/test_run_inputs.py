"""The ``--backend-config`` file: every key names a backend the command runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main
from drift_pipeline.cli.errors import CommandError
from drift_pipeline.cli.run_inputs import backend_config

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "ua-baseline-001.yaml"


def _config(folder: Path, text: str) -> Path:
    path = folder / "backends.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_misspelt_backend_in_the_config_stops_drift_run_before_anything_is_written(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, "bm25: {}\nbm52: {x: 1}\n")
    out = tmp_path / "data"
    result = CliRunner().invoke(
        main,
        [
            *("run", str(SCENARIO), "--backend", "bm25", "--backend", "amnesiac"),
            *("--backend-config", str(config), "--out", str(out)),
        ],
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"{config}: 'bm52' names no backend of this run "
        "(backends run: bm25, amnesiac, reference_compressor)"
    ]
    assert not out.exists()


def test_drift_compare_and_check_backend_refuse_it_too(tmp_path: Path) -> None:
    config = _config(tmp_path, "bm52: {top_k: 8}\n")
    compare = CliRunner().invoke(
        main,
        [
            *("compare", str(SCENARIO), "--backend-a", "bm25", "--backend-b", "amnesiac"),
            *("--backend-config", str(config), "--out", str(tmp_path / "data")),
        ],
    )
    assert compare.exit_code == 2, compare.output
    assert "'bm52' names no backend of this run (backends run: bm25, amnesiac, " in compare.stderr
    check = CliRunner().invoke(main, ["check-backend", "bm25", "--backend-config", str(config)])
    assert check.exit_code == 2, check.output
    assert check.stderr.strip() == (
        f"{config}: 'bm52' names no backend of this run (backends run: bm25)"
    )


def test_the_reference_compressor_run_beside_every_arm_takes_options(tmp_path: Path) -> None:
    config = _config(tmp_path, "reference_compressor: {summariser: template}\nbm25: {}\n")
    options = backend_config(config, ["bm25", "reference_compressor"])
    assert options == {"reference_compressor": {"summariser": "template"}, "bm25": {}}
    with pytest.raises(CommandError, match=r"'reference_compressor' names no backend"):
        backend_config(config, ["bm25"])
