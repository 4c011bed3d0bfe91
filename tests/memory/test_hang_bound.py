"""A hanging backend costs a bounded number of timeouts, never one per call.

The backends are one class written at test time outside the repository, as a user's module
would be: a fault-free variant, one that hangs on every call and one that hangs on one call in
five (each awaiting forever, the common hang of an async client). The three are the arms of one
whole ``drift run`` with ``--call-timeout 1``, on a short world shaped like the shipped baseline
scenario's (fewer sessions: every one in five of them costs a timeout). What a
hang costs is the calls that waited for the timeout: after ``--max-consecutive-faults`` faults
of one kind (store, retrieve) in a row in a replicate, that replicate's remaining calls of that
kind are recorded as skipped. The test counts those calls from the stored tables rather than
timing the runs (wall time belongs to ``drift bench``, not to a shared machine's tests): a
backend that hangs on every call costs exactly the limit per kind and replicate, and one that
hangs on one call in five costs those calls and no more.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from helpers import unchecked, write_scenario

DRIFT = str(Path(sys.executable).with_name("drift"))
SCENARIO = """\
id: hang-bound-t
paradigm: user_assistant
seed: 101
replicates: 4
horizon:
  short: { sessions: 12, session_gap_hours: 8 }
noise_ratio: 0.5
entities:
  - { id: principal, type: human }
  - { id: assistant, type: assistant_agent }
checkpoints:
  - { after_session: 12, probe_types: [recall, action] }
"""
EXIT_INVALID_ARM = 5

BACKENDS = """\
import asyncio

from drift_pipeline.memory import TokenCounts


class Fine:
    every = 0

    def __init__(self):
        self.calls = 0
        self.kept = []

    async def _maybe_hang(self):
        self.calls += 1
        if self.every and self.calls % self.every == 0:
            await asyncio.sleep(3600)

    async def store(self, session_id, messages):
        await self._maybe_hang()
        self.kept.append(session_id)

    async def retrieve(self, session_id, entity_id, query):
        await self._maybe_hang()
        return "\\n".join(self.kept[-5:])

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return "\\n".join(self.kept[-5:])


class HangsAlways(Fine):
    every = 1


class HangsOneInFive(Fine):
    every = 5
"""


def _run(folder: Path, backends: tuple[str, ...]) -> tuple[int, str]:
    """Exit status and output of one ``drift run`` with ``backends`` as its arms."""
    modules = folder / "modules"
    modules.mkdir(exist_ok=True)
    (modules / "hanging_memory.py").write_text(BACKENDS, encoding="utf-8")
    arms = [option for name in backends for option in ("--backend", f"hanging_memory:{name}")]
    scenario = write_scenario(folder / "scenarios", SCENARIO)
    done = subprocess.run(
        [
            DRIFT, "run", str(scenario), "--horizon", "short", *arms, "--call-timeout", "1",
            "--out", str(folder / "data"),
        ],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(modules),
            **unchecked(
                " and ".join(f"hanging_memory:{name}" for name in backends),
                "the hanging variants hang on purpose and Fine keeps only session ids; the "
                "timeouts a run waits through are what is counted",
            ),
        },
        timeout=600,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


MAX_CONSECUTIVE_FAULTS = 5
MAX_FAULT_RATE = 0.05
REPLICATES = 4
"""The defaults of `drift run` and the scenario's replicates, run at once (one call in flight
each). With four, one replicate's faults of one kind (one call in ten) stay under the cell's
fault budget (one call in twenty of four replicates' calls)."""


def _calls(out: Path, backend: str) -> dict[str, int]:
    """Calls of ``backend``'s cell by outcome: ``ok``, ``waited`` (a timeout) or ``skipped``."""
    counts = {"ok": 0, "waited": 0, "skipped": 0}

    def read(table: str) -> str:
        return f"read_parquet('{out}/{table}/**/*.parquet', hive_partitioning=true)"

    # Stores, probes and the agent's reads before each session.
    for column, table in (
        ("error", "memory_snapshots"),
        ("error", "retrievals"),
        ("unnest(session_read_errors)", "memory_snapshots"),
    ):
        rows = duckdb.sql(
            f"select {column} from {read(table)} where backend = ?",
            params=[f"hanging_memory:{backend}"],
        ).fetchall()
        for (error,) in rows:
            if error is None:
                counts["ok"] += 1
            elif error.startswith("skipped"):
                counts["skipped"] += 1
            else:
                assert error.startswith("timeout"), error
                counts["waited"] += 1
    return counts


@pytest.mark.slow
def test_a_hanging_backend_waits_for_a_bounded_number_of_timeouts(tmp_path: Path) -> None:
    backends = ("Fine", "HangsAlways", "HangsOneInFive")
    # One run with the three as its arms: one world, the same calls planned for each.
    code, output = _run(tmp_path, backends)
    assert code == EXIT_INVALID_ARM, output
    assert "invalid: hanging_memory:Fine@hard" not in output
    for backend in backends[1:]:
        assert f"invalid: hanging_memory:{backend}@hard" in output
    calls = {backend: _calls(tmp_path / "data", backend) for backend in backends}
    planned = sum(calls["Fine"].values())
    assert calls["Fine"] == {"ok": planned, "waited": 0, "skipped": 0}
    for backend in ("HangsAlways", "HangsOneInFive"):
        assert sum(calls[backend].values()) == planned, calls  # every planned call is recorded
    # In a row: the limit for each kind of call (store, retrieve) in each replicate, exactly.
    assert calls["HangsAlways"]["waited"] == 2 * MAX_CONSECUTIVE_FAULTS * REPLICATES, calls
    # One in five: a replicate's faults of one kind stay under the whole cell's fault budget,
    # so nothing is skipped; every fifth call of each replicate waited.
    assert calls["HangsOneInFive"]["skipped"] == 0, calls
    assert planned // 5 - REPLICATES <= calls["HangsOneInFive"]["waited"] <= planned // 5, calls
    assert calls["HangsOneInFive"]["waited"] > MAX_FAULT_RATE * planned  # invalid all the same
