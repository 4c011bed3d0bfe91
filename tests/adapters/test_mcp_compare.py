"""``drift compare`` with an adapter by its registered name against a class by import path."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from drift_pipeline.cli import EXIT_BACKEND_START, main

from .test_mcp_backend import SCENARIO, scripted

BY_PATH = "drift_pipeline.memory.backends.bm25:BM25Backend"  # a class by its import path


def test_compare_runs_an_adapter_with_its_config_against_an_import_path(tmp_path: Path) -> None:
    scenario = tmp_path / "mcp-scripted-check.yaml"
    scenario.write_text(SCENARIO)
    config = tmp_path / "backends.yaml"
    config.write_text(yaml.safe_dump({"mcp": scripted()}))
    args = ["compare", str(scenario), "--backend-a", "mcp", "--backend-b", BY_PATH]
    args += ["--backend-config", str(config), "--out", str(tmp_path / "data")]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert f"mcp-scripted-check: mcp@hard − {BY_PATH}@hard (paired" in done.output
    assert "  mvot " in done.output
    # Without its config the adapter cannot start, and compare says so in one line (a new
    # gate, so the arms run again on the world already made).
    broken = CliRunner().invoke(main, [*args[:6], "--gate", "soft:2", *args[-2:]])
    assert broken.exit_code == EXIT_BACKEND_START
    assert "mcp: give exactly one of command" in broken.output
