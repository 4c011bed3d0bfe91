"""A hanging backend costs a bounded number of timeouts, never one per call.

The backends are one class written at test time outside the repository, as a user's module
would be: a fault-free variant, one that hangs on every call and one that hangs on one call in
five (each awaiting forever, the common hang of an async client). Each runs through the whole
``drift run`` on the shipped baseline scenario's short world with ``--call-timeout 1``. What a
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
import time
from pathlib import Path

import duckdb
import pytest

DRIFT = str(Path(sys.executable).with_name("drift"))
SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "ua-baseline-001.yaml"
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


def _timed_run(folder: Path, backend: str, attempt: int) -> tuple[float, int, str]:
    """Wall time, exit status and stdout of one ``drift run`` into a fresh output folder."""
    modules = folder / "modules"
    modules.mkdir(exist_ok=True)
    (modules / "hanging_memory.py").write_text(BACKENDS, encoding="utf-8")
    started = time.perf_counter()
    done = subprocess.run(
        [
            DRIFT, "run", str(SCENARIO), "--horizon", "short",
            "--backend", f"hanging_memory:{backend}", "--call-timeout", "1",
            "--out", str(folder / f"{backend}-{attempt}"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(modules)},
        timeout=600,
    )  # fmt: skip
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


MAX_CONSECUTIVE_FAULTS = 5
MAX_FAULT_RATE = 0.05
REPLICATES = 4
"""The defaults of `drift run`; the replicates run at once (one call in flight each)."""


def _calls(out: Path) -> dict[str, int]:
    """Calls of the cell by outcome: ``ok``, ``waited`` (a timeout) or ``skipped``."""
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
            f"select {column} from {read(table)} where backend like 'hanging_memory%'"
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
    calls: dict[str, dict[str, int]] = {}
    for backend in ("Fine", "HangsAlways", "HangsOneInFive"):
        _, code, output = _timed_run(tmp_path, backend, 0)
        expected = 0 if backend == "Fine" else EXIT_INVALID_ARM
        assert code == expected, output
        if backend != "Fine":
            assert f"invalid: hanging_memory:{backend}@hard" in output
        calls[backend] = _calls(tmp_path / f"{backend}-0")
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
