"""Isolation is checked before a run: a worker that cannot start stops it with one line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

import drift_pipeline
from drift_pipeline import cli
from drift_pipeline.memory import IsolationError, check_isolation

from .plugins import _support

PACKAGE_PARENT = Path(drift_pipeline.__file__).resolve().parent.parent


def test_the_check_starts_a_worker_and_reports_the_level_it_reached():
    level = asyncio.run(check_isolation([]))
    assert level in {"unprivileged-user+mount-namespace", "user+mount-namespace", "process"}


def test_a_worker_that_cannot_reach_the_package_is_one_line_with_the_cause_and_the_fix():
    if asyncio.run(check_isolation([])) == "process":
        pytest.skip("no mount namespace here: nothing can be covered")
    # Covering the checkout (as a data root around it would) hides the package from the worker.
    with pytest.raises(IsolationError) as raised:
        asyncio.run(check_isolation([PACKAGE_PARENT]))
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("isolation could not start:")
    assert "cannot reach" in message and "chmod o+x" in message


def test_drift_run_stops_before_any_world_when_isolation_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    async def refuse(protect: list[Path], isolate: bool = True) -> str:
        raise IsolationError("isolation could not start: mount /root: Operation not permitted; fix")

    monkeypatch.setattr("drift_pipeline.pipeline._run.check_isolation", refuse)
    scenario = _support.write_scenario(tmp_path / "scenarios", "iso-stop-t")
    out = tmp_path / "data"
    result = CliRunner().invoke(
        cli.main, ["run", str(scenario), "--backend", "bm25", "--out", str(out)]
    )
    assert result.exit_code == cli.EXIT_ISOLATION == 3
    assert result.output.strip().splitlines() == [
        "isolation could not start: mount /root: Operation not permitted; fix"
    ]
    assert not list(out.rglob("*.parquet"))
