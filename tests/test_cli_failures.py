"""``drift run`` when backends fail as a user's would: each failure is loud, never a score.

The failing backends are written at test time outside the repository and imported through
``PYTHONPATH``, as a user's own modules would be.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import process_alive, unchecked, worker_temp
from memory.plugins import _support

from drift_pipeline.memory import _worker_template

DRIFT = str(Path(sys.executable).with_name("drift"))
EXIT_BACKEND_START = 4
EXIT_INVALID_ARM = 5
EXIT_ROOT_BUSY = 6

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


def drift_run(
    folder: Path, *args: str, out: Path | None = None, env: Mapping[str, str] | None = None
) -> Run:
    modules = _modules(folder / "modules")
    scenario = _support.write_scenario(folder / "scenarios", "cli-fail-t")
    out = out or folder / "data"
    done = subprocess.run(
        [DRIFT, "run", str(scenario), "--out", str(out), "--json", str(folder / "s.json"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(modules), **(env or {})},
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
    # Found by the conformance check, before any world or cell: nothing was written.
    assert not (run.out / "memory_snapshots").exists()


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


def test_with_keep_going_a_run_of_arms_that_all_cannot_start_records_nothing(tmp_path: Path):
    run = drift_run(tmp_path, "--keep-going", "--backend", "needs_server:NeedsServer")
    assert run.code == EXIT_BACKEND_START, run.stderr
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert lines[0].startswith("backend needs_server:NeedsServer@hard could not start: ")
    assert lines[1:] == [
        "no arm was scored, so nothing was recorded (no leaderboard, record or --json summary)"
    ]
    assert [path.name for path in run.out.iterdir()] == [".drift-run.lock"]
    assert not (tmp_path / "s.json").exists()


def test_an_arm_past_the_fault_limit_is_listed_unranked_and_the_run_says_so(tmp_path: Path):
    faulting = unchecked(
        "flaky:OneInFive",
        "fails one store in five and keeps nothing; how a run ranks a faulting arm is tested",
    )
    run = drift_run(tmp_path, "--backend", "flaky:OneInFive", "--backend", "bm25", env=faulting)
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
    again = drift_run(
        tmp_path / "again",
        *("--backend", "flaky:OneInFive", "--max-fault-rate", "0.5"),
        env=faulting,
    )
    assert again.code == 0, again.stderr
    assert "not ranked" not in again.stdout


def _start(
    folder: Path, out: Path, *args: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    scenario = _support.write_scenario(folder / "scenarios", "cli-fail-t")
    return subprocess.Popen(
        [DRIFT, "run", str(scenario), "--out", str(out), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def _wait_for(predicate: Callable[[], bool], seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def _tables(out: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the cell tables, timings left out, sorted: what a rerun must reproduce."""
    found = {}
    for table, columns in (
        ("memory_snapshots", "arm, replicate, session_index, storage_tokens, error"),
        ("retrievals", "arm, replicate, probe_id, context, error"),
        ("probe_answers", "arm, replicate, probe_id, correct, score"),
    ):
        rows = _support.query(out, f"select {columns} from {{{table}}} order by all")
        found[table] = [tuple(row.values()) for row in rows]
    return found


def test_a_second_run_on_the_same_folder_is_refused_and_the_first_completes(tmp_path: Path):
    out = tmp_path / "data"
    first = _start(tmp_path, out, "--backend", "bm25")
    try:
        lock = out / ".drift-run.lock"
        _wait_for(lambda: lock.exists() and "pid" in lock.read_text())
        # The first run is held still while it holds the lock, so the second meets it however
        # fast the first would otherwise finish on an idle machine or start on a busy one.
        os.kill(first.pid, signal.SIGSTOP)
        try:
            second = drift_run(tmp_path / "second", "--backend", "bm25", out=out)
        finally:
            os.kill(first.pid, signal.SIGCONT)
        assert second.code == EXIT_ROOT_BUSY, second.stderr
        assert second.stderr.strip() == (
            f"{out} is in use by drift run (pid {first.pid}); wait for it to finish or give "
            "another --out"
        )
    finally:
        _, stderr = first.communicate(timeout=300)
    assert first.returncode == 0, stderr
    rows = Run(0, "", "", out).rows_per_arm()
    assert rows == {"reference_compressor@hard": FULL, "bm25@hard": FULL}


def test_kill_9_mid_run_and_a_rerun_give_the_tables_of_an_uninterrupted_run(tmp_path: Path):
    clean = drift_run(tmp_path / "clean", "--backend", "bm25", "--backend", "fact_store")
    assert clean.code == 0, clean.stderr
    out = tmp_path / "killed"
    with worker_temp() as temp:
        args = ("--backend", "bm25", "--backend", "fact_store")
        killed = _start(tmp_path, out, *args, env={"TMPDIR": str(temp)})
        try:
            # Once the first cell has landed, the run is mid-way: kill it and every worker.
            _wait_for(lambda: any((out / "memory_snapshots").glob("**/*.parquet")))
        finally:
            os.killpg(killed.pid, signal.SIGKILL)
            killed.communicate()
    rerun = drift_run(tmp_path / "rerun", "--backend", "bm25", "--backend", "fact_store", out=out)
    assert rerun.code == 0, rerun.stderr
    assert rerun.rows_per_arm() == {
        "reference_compressor@hard": FULL,
        "bm25@hard": FULL,
        "fact_store@hard": FULL,
    }
    assert _tables(out) == _tables(clean.out)


def test_an_unknown_backend_name_is_exit_2_in_one_line_and_writes_nothing(tmp_path: Path):
    run = drift_run(tmp_path, "--backend", "no_such_memory")
    assert run.code == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_memory" in lines[0], run.stderr
    assert not run.out.exists() or not any(run.out.iterdir())


SLOW = """\
import asyncio
import os
import time

from drift_pipeline.memory import TokenCounts


class Slow:
    def __init__(self, marker):
        self.marker = marker

    def _mark(self):
        # A file per worker (each its own user) once a store has begun: the test waits for
        # every replicate to be inside one.
        open(os.path.join(self.marker, f"worker-{os.getpid()}"), "a").close()

    async def store(self, session_id, messages):
        self._mark()
        await asyncio.sleep(0.3)

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""


class Blocked(Slow):
    async def store(self, session_id, messages):
        self._mark()
        time.sleep(3600)  # blocks the worker's whole event loop: it never reads its input
"""


def _workers_of(pid: int) -> set[int]:
    """Worker processes of the harness ``pid``: started by it, or forked by its worker template.

    The template itself is counted too: it must not outlive the harness either.
    """
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int(
                (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            )
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
    mine = {child for child, parent in parents.items() if parent == pid}
    templates = {child for child in mine if b"memory._worker_template" in commands[child]}
    forked = {child for child, parent in parents.items() if parent in templates}
    launched = {child for child in mine if commands[child].endswith(b"memory._worker\x00")}
    return launched | forked | templates


@pytest.mark.parametrize("backend", ["Slow", "Blocked"])
def test_workers_left_behind_by_a_killed_harness_exit_on_their_own(tmp_path: Path, backend: str):
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "slow_memory.py").write_text(SLOW)
    # Somewhere a sandboxed worker (another uid) may write: not under the 0700 test folders.
    shared = Path(tempfile.mkdtemp(prefix="drift-orphan-"))
    shared.chmod(0o777)
    config = tmp_path / "backends.yaml"
    config.write_text(json.dumps({f"slow_memory:{backend}": {"marker": str(shared)}}))
    scenario = _support.write_scenario(tmp_path / "scenarios", "cli-orphan-t")
    with worker_temp() as temp:
        harness = subprocess.Popen(
            [DRIFT, "run", str(scenario), "--out", str(tmp_path / "data"), "--backend",
             f"slow_memory:{backend}", "--backend-config", str(config), "--call-timeout", "600"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={
                **os.environ,
                "TMPDIR": str(temp),
                "PYTHONPATH": str(modules),
                **unchecked(
                    f"slow_memory:{backend}",
                    "Slow keeps nothing and Blocked hangs its worker; what their workers do "
                    "once the harness is killed is what is tested",
                ),
            },
        )  # fmt: skip
        try:
            # Mid-cell: every replicate's worker is inside a store.
            _wait_for(lambda: len(list(shared.iterdir())) >= _support.REPLICATES)
            workers = _workers_of(harness.pid)
            # One worker per replicate, and the template they were forked from (unless off).
            assert len(workers) == _support.REPLICATES + _worker_template.enabled()
        finally:
            harness.kill()  # the harness alone, as an OOM kill would: its workers live on
            harness.wait()
            shutil.rmtree(shared, ignore_errors=True)
        _wait_for(lambda: not any(process_alive(pid) for pid in workers), seconds=20)
