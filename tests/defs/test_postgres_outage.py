"""PostgreSQL going away mid-run: ``drift run --via dagster`` fails with one line, and once the
server is back the same command resumes and leaves complete tables, identical to a run that
was never interrupted.

The instance is the project's ``dagster.postgres.yaml`` against a real server on loopback,
killed with ``pg_ctl stop -m immediate`` (no clean shutdown) while the run is writing cells.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from drift_pipeline.memory import Arm
from drift_pipeline.orchestration.launch import run_via_dagster

from .conftest import PostgresServer, postgres_instance, write_tiny

DRIFT = str(Path(sys.executable).with_name("drift"))
BACKENDS = ("bm25", "fact_store")
ARMS = tuple(option for name in BACKENDS for option in ("--backend", name))


def _start(home: Path, scenario: Path, out: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [DRIFT, "run", str(scenario), *ARMS, "--out", str(out), "--via", "dagster"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, "DAGSTER_HOME": str(home)},
    )


def _tables(out: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the run's tables, timings left out, sorted: what a rerun must reproduce."""
    found = {}
    with duckdb.connect() as con:
        for table, columns in (
            ("transcripts", "scenario, replicate, session_index, turn_index, content"),
            ("probes", "scenario, replicate, probe_id, question"),
            ("memory_snapshots", "arm, replicate, session_index, storage_tokens, error"),
            ("retrievals", "arm, replicate, probe_id, context, error"),
            ("probe_answers", "arm, replicate, probe_id, correct, score"),
            ("cost_curves", "arm, checkpoint, cumulative_tokens"),
        ):
            rows = con.sql(
                f"select {columns} from read_parquet('{out}/{table}/**/*.parquet', "
                "hive_partitioning=true) order by all"
            ).fetchall()
            found[table] = [tuple(row) for row in rows]
    return found


@pytest.mark.slow
def test_postgres_killed_mid_run_fails_in_one_line_and_a_rerun_resumes(
    postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = postgres_server.env
    scenario = write_tiny(tmp_path / "scenarios")
    home = tmp_path / "pg-home"
    postgres_instance(home, env, monkeypatch).dispose()  # an empty instance on the server

    out = tmp_path / "data"
    run = _start(home, scenario, out, env)
    try:
        # Mid-run: the world is written and the first cell's memory run has landed.
        deadline = time.monotonic() + 300
        while not any((out / "memory_snapshots").glob("**/*.parquet")):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the run never reached its first cell"
            time.sleep(0.05)
        postgres_server.stop("immediate")
        # The same run, never interrupted, in this process (its own instance on SQLite: storage
        # does not matter; the interrupted run and its rerun are the command itself). It is made
        # while the command spends its retries on the dead server, which are mostly sleep.
        (tmp_path / "clean-home").mkdir()
        with dg.DagsterInstance.local_temp(str(tmp_path / "clean-home")) as clean_instance:
            arms = [Arm.parse(f"{name}@hard") for name in BACKENDS]
            run_via_dagster([scenario], arms, out=tmp_path / "clean", instance=clean_instance)
        stdout, stderr = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        if not postgres_server.running:
            postgres_server.start()

    assert run.returncode == 1, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    progress = [line for line in lines if line.startswith("[")]
    errors = [line for line in lines if line not in progress]
    assert "Traceback" not in stderr
    assert len(errors) == 1, stderr
    assert errors[0].startswith(
        f"the Dagster instance's database is unreachable (PostgreSQL at 127.0.0.1:"
        f"{env['DRIFT_PG_PORT']})"
    ), errors[0]
    assert "rerun the same command" in errors[0]
    assert stdout == ""  # no leaderboard, no figures

    # The server is back: the same command resumes and completes.
    rerun = _start(home, scenario, out, env)
    stdout, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert "bm25@hard" in stdout and "fact_store@hard" in stdout
    assert _tables(out) == _tables(tmp_path / "clean")


def test_an_outage_that_does_not_name_the_server_is_named_from_the_instance() -> None:
    # A connection the server closes mid-statement says only that; the line still names where.
    import sqlalchemy.exc

    from drift_pipeline.orchestration.launch import instance_database_error

    closed = sqlalchemy.exc.OperationalError(
        "SELECT 1", {}, Exception("server closed the connection unexpectedly")
    )
    found = instance_database_error(RuntimeError("step failed"), "127.0.0.1:5433")
    assert found is None  # nothing of the database in the chain: not an outage
    wrapped = RuntimeError("step failed")
    wrapped.__cause__ = closed
    error = instance_database_error(wrapped, "127.0.0.1:5433")
    assert error is not None
    assert str(error).startswith(
        "the Dagster instance's database is unreachable (PostgreSQL at 127.0.0.1:5433): "
        "server closed the connection unexpectedly;"
    )
    assert "\n" not in str(error)
