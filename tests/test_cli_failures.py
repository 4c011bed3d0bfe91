"""``drift run`` when backends fail as a user's would: each failure is loud, never a score.

The failing backends are written at test time outside the repository and imported through
``PYTHONPATH``, as a user's own modules would be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from memory.plugins import _support

DRIFT = str(Path(sys.executable).with_name("drift"))
EXIT_BACKEND_START = 4
EXIT_INVALID_ARM = 5

BROKEN_SYNTAX = """\
class Broken:
    def store(self
"""
NEEDS_SERVER = """\
from drift_pipeline.memory import TokenCounts


def _connect():
    raise ConnectionRefusedError("memory server at localhost:9 refused the connection")


class NeedsServer:
    def __init__(self):
        _connect()

    async def store(self, session_id, messages):
        return None

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""
"""

FLAKY = """\
from drift_pipeline.memory import TokenCounts


class OneInFive:
    def __init__(self):
        self.calls = 0

    async def store(self, session_id, messages):
        self.calls += 1
        if self.calls % 5 == 0:
            raise RuntimeError("one call in five fails")

    async def retrieve(self, session_id, entity_id, query):
        return "nothing kept"

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""
"""


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path

    def rows_per_arm(self) -> dict[str, int]:
        rows = _support.query(
            self.out, "select arm, count(*) as n from {memory_snapshots} group by arm"
        )
        return {row["arm"]: row["n"] for row in rows}


def _modules(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken_syntax.py").write_text(BROKEN_SYNTAX)
    (folder / "needs_server.py").write_text(NEEDS_SERVER)
    (folder / "flaky.py").write_text(FLAKY)
    return folder


def drift_run(folder: Path, *args: str) -> Run:
    modules = _modules(folder / "modules")
    scenario = _support.write_scenario(folder / "scenarios", "cli-fail-t")
    out = folder / "data"
    done = subprocess.run(
        [DRIFT, "run", str(scenario), "--out", str(out), "--json", str(folder / "s.json"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(modules)},
        timeout=300,
    )
    return Run(done.returncode, done.stdout, done.stderr, out)


FULL = _support.SESSIONS * _support.REPLICATES


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        ("broken_syntax:Broken", "SyntaxError: '(' was never closed"),
        ("needs_server:NoSuchClass", "module 'needs_server' has no attribute 'NoSuchClass'"),
        ("needs_server:NeedsServer", "ConnectionRefusedError: memory server at localhost:9"),
    ],
)
def test_a_backend_that_cannot_start_stops_the_run_with_one_line_and_no_rows(
    tmp_path: Path, backend: str, expected: str
):
    run = drift_run(tmp_path, "--backend", "bm25", "--backend", backend)
    assert run.code == EXIT_BACKEND_START, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith(f"backend {backend}@hard could not start: "), lines
    assert expected in lines[-1]
    assert "Traceback" not in run.stderr and "init must come first" not in run.stderr
    if "NoSuchClass" not in backend:  # the backend's own code: where it went wrong
        module = backend.split(":")[0]
        line = 2 if module == "broken_syntax" else 5
        assert f"{tmp_path}/modules/{module}.py:{line}" in lines[-1]
    assert "DRIFT-C" not in run.stdout  # no leaderboard
    # The arms before it were written whole; the failing one has no row at all.
    assert run.rows_per_arm() == {"reference_compressor@hard": FULL, "bm25@hard": FULL}


def test_with_keep_going_the_other_arms_complete_and_the_status_still_says_so(tmp_path: Path):
    run = drift_run(
        tmp_path,
        "--keep-going",
        "--backend",
        "needs_server:NeedsServer",
        "--backend",
        "bm25",
        "--backend",
        "broken_syntax:Broken",
    )
    assert run.code == EXIT_BACKEND_START, run.stderr
    failed = [line for line in run.stderr.splitlines() if "could not start" in line]
    assert len(failed) == 2
    assert "bm25@hard" in run.stdout
    assert "needs_server" not in run.stdout and "broken_syntax" not in run.stdout
    assert run.rows_per_arm() == {"reference_compressor@hard": FULL, "bm25@hard": FULL}


def test_an_arm_past_the_fault_limit_is_listed_unranked_and_the_run_says_so(tmp_path: Path):
    run = drift_run(tmp_path, "--backend", "flaky:OneInFive", "--backend", "bm25")
    assert run.code == EXIT_INVALID_ARM, run.stderr
    board = run.stdout.split("\n\n")[0].splitlines()
    assert board[2].startswith("bm25@hard ")
    assert board[3].startswith("flaky:OneInFive@hard (not ranked: ")
    assert "invalid: flaky:OneInFive@hard on cli-fail-t/short: " in run.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    cells = {c["arm"]: c for c in summary["cells"]}
    assert cells["bm25@hard"]["valid"] is True and cells["bm25@hard"]["fault_rate"] == 0.0
    flaky = cells["flaky:OneInFive@hard"]
    assert flaky["valid"] is False and flaky["fault_rate"] > 0.05
    # Its rows are still written: the faults are data.
    assert run.rows_per_arm()["flaky:OneInFive@hard"] == FULL
    # With a higher limit it is ranked again, and the run succeeds.
    again = drift_run(tmp_path / "again", "--backend", "flaky:OneInFive", "--max-fault-rate", "0.5")
    assert again.code == 0, again.stderr
    assert "not ranked" not in again.stdout
