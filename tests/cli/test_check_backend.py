"""``drift check-backend``: the conformance check of one backend from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from memory.plugins import _support

from drift_pipeline.cli import main
from drift_pipeline.memory import check_script

PLUGIN = "plugins.conformance"
CHECK = check_script()  # what the check stores without a seed, as the command runs it


@pytest.fixture(autouse=True)
def plugins_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(_support.PLUGINS_ROOT))


def test_a_backend_that_passes_exits_0_with_its_figures(tmp_path: Path) -> None:
    report = tmp_path / "check.json"
    result = CliRunner().invoke(main, ["check-backend", f"{PLUGIN}:Honest", "--json", str(report)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{PLUGIN}:Honest: passed the conformance check (queryable within")
    assert "  declares: stores_for_entity yes, asynchronous yes, snapshot yes" in result.stdout
    assert "  service service: a log kept outside the package" in lines
    assert "  model tokens: metered" in lines
    figures = json.loads(report.read_text())
    assert figures["passed"] and figures["reason"] is None and figures["read_ms_p50"] >= 0
    assert figures["model_tokens"] == "metered"


def test_a_backend_whose_model_spend_is_unknown_passes_and_is_told_it_will_not_rank(
    tmp_path: Path,
) -> None:
    report = tmp_path / "check.json"
    args = ["check-backend", f"{PLUGIN}:ServiceModels", "--json", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith("; model tokens unknown: a run will not rank it)")
    assert "models_outside_meter yes" in result.stdout and "  token counts: unknown" in lines
    assert "  model tokens: unknown" in lines
    assert json.loads(report.read_text())["model_tokens"] == "unknown"


def test_a_backend_that_fails_exits_5_with_the_reason_on_its_first_line() -> None:
    result = CliRunner().invoke(main, ["check-backend", f"{PLUGIN}:Leaky"])
    assert result.exit_code == 5
    (a, b), token = CHECK.entities, CHECK.fact_b.token
    assert result.stdout.splitlines()[0] == (
        f"{PLUGIN}:Leaky: failed the conformance check: it leaks across entities: a fact "
        f"stored for {b} ({token}) was returned to {a}"
    )
    assert "  scope: FAIL" in result.stdout and "  capabilities: not reached" in result.stdout


def test_a_leak_the_user_accepts_passes_and_is_reported(tmp_path: Path) -> None:
    report = tmp_path / "check.json"
    args = ["check-backend", f"{PLUGIN}:Leaky", "--allow-leak", "--json", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"{PLUGIN}:Leaky: passed the conformance check (")
    (a, b), token = CHECK.entities, CHECK.fact_b.token
    assert first.endswith(
        f"; it leaks across entities: a fact stored for {b} ({token}) was "
        f"returned to {a}, allowed: its row is marked and its Privacy not measured)"
    )
    assert "  scope: leaks (allowed)" in result.stdout.splitlines()
    figures = json.loads(report.read_text())
    assert figures["leak_allowed"] and figures["leak"].startswith("it leaks across entities")


def test_an_unknown_backend_or_a_missing_model_variable_is_bad_input(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unknown = CliRunner().invoke(main, ["check-backend", "no_such_memory"])
    assert unknown.exit_code == 2 and "unknown backend" in unknown.stderr
    config = tmp_path / "backends.yaml"
    config.write_text("mem0: {infer: true}\n", encoding="utf-8")
    for variable in ("DRIFT_LLM_BASE_URL", "DRIFT_LLM_MODEL", "DRIFT_MEM0_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    unset = CliRunner().invoke(main, ["check-backend", "mem0", "--backend-config", str(config)])
    assert unset.exit_code == 2
    assert unset.stderr.strip() == (
        "mem0 infer llm: DRIFT_LLM_BASE_URL is not set (or give llm_base_url in the backend config)"
    )


def test_drift_run_refuses_an_adapter_without_its_model_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for variable in ("DRIFT_LLM_BASE_URL", "DRIFT_LLM_MODEL", "DRIFT_MEM0_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "backends.yaml"
    config.write_text("mem0: {infer: true}\n", encoding="utf-8")
    scenario = _support.write_scenario(tmp_path / "scenarios", "mem0-unset-t")
    out = tmp_path / "data"
    arguments = ["run", str(scenario), "--backend", "mem0", "--backend-config", str(config)]
    result = CliRunner().invoke(main, [*arguments, "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith("mem0 infer llm: DRIFT_LLM_BASE_URL is not set")
    assert not out.exists()


def test_a_backend_that_cannot_be_built_exits_4_as_in_a_run(tmp_path: Path) -> None:
    misspelt = CliRunner().invoke(main, ["check-backend", f"{PLUGIN}:Honset"])
    assert misspelt.exit_code == 4, misspelt.output
    assert "Honset" in misspelt.stdout.splitlines()[0]
    config = tmp_path / "backends.yaml"
    config.write_text(f"{PLUGIN}:Honest: {{bogus_option: 3}}\n", encoding="utf-8")
    args = ["check-backend", f"{PLUGIN}:Honest", "--backend-config", str(config)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 4, refused.output
    assert "bogus_option" in refused.stdout.splitlines()[0]
