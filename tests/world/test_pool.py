"""Kept generation workers: reused, replaced when stale or failed, not holding our files."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pytest
from helpers import COMMUTER, tree_bytes, write_scenario

import drift_pipeline.pipeline._worlds as worlds_module
import drift_pipeline.world._write as write_module
from drift_pipeline.pipeline._worlds import ensure_worlds
from drift_pipeline.scenario import load_scenario
from drift_pipeline.sources import ScenarioSource
from drift_pipeline.world._pool import WorkerDied, WorkerPool, close_workers


def _echo(payload: object, replicates: Sequence[int]) -> dict[int, dict[str, pa.Table]]:
    """A job that says which process ran it."""
    if payload == "die":
        os._exit(7)
    if payload == "fail":
        raise ValueError("replicate refused")
    return {r: {"pid": pa.table({"pid": [os.getpid()]})} for r in replicates}


def _pid(parts: dict[int, dict[str, pa.Table]], replicate: int) -> int:
    value = parts[replicate]["pid"].column("pid")[0].as_py()
    assert isinstance(value, int)
    return value


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(_echo, "test-worker")
    yield pool
    pool.close()


def test_workers_are_kept_and_reused(pool: WorkerPool) -> None:
    with pool.lease(2) as workers:
        for worker in workers:
            worker.request("go", [1])
        first = [_pid(worker.reply(), 1) for worker in workers]
    assert first == pool.pids() and os.getpid() not in first
    with pool.lease(1) as workers:
        workers[0].request("go", [3])
        assert _pid(workers[0].reply(), 3) == first[0]
    pool.close()
    assert pool.pids() == []
    assert not any(_alive(pid) for pid in first)  # stopped and reaped, not zombies


def test_an_error_is_raised_here_and_the_worker_replaced(pool: WorkerPool) -> None:
    with pytest.raises(ValueError, match="replicate refused"), pool.lease(1) as workers:
        (before,) = pool.pids()
        workers[0].request("fail", [0])
        workers[0].reply()
    assert not _alive(before)
    with pool.lease(1) as workers:
        workers[0].request("go", [0])
        assert _pid(workers[0].reply(), 0) != before


def test_a_dead_worker_is_reported_with_its_exit_code(pool: WorkerPool) -> None:
    died = pytest.raises(WorkerDied, match="test-worker-1 died \\(exit code 7\\)")
    with died, pool.lease(1) as workers:
        workers[0].request("die", [0])
        workers[0].reply()
    with pool.lease(1) as workers:  # a new one takes its place
        workers[0].request("go", [0])
        assert _pid(workers[0].reply(), 0) in pool.pids()


def test_workers_do_not_hold_the_parents_pipes(pool: WorkerPool) -> None:
    read_end, write_end = os.pipe()
    try:
        with pool.lease(1) as workers:  # forked while this process holds both ends
            workers[0].request("go", [0])
            workers[0].reply()
        os.close(write_end)
        write_end = -1
        # End of file although the worker (which inherited the write end) is still running.
        ready, _, _ = select.select([read_end], [], [], 5.0)
        assert ready and os.read(read_end, 1) == b""
        assert pool.pids()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_workers_are_replaced_when_what_they_inherited_changed() -> None:
    state = ["a"]
    pool = WorkerPool(_echo, "test-worker", state=lambda: tuple(state))
    try:
        with pool.lease(1) as workers:
            workers[0].request("go", [0])
            first = _pid(workers[0].reply(), 0)
        state.append("b")  # as a newly registered entity type would
        with pool.lease(1) as workers:
            workers[0].request("go", [0])
            assert _pid(workers[0].reply(), 0) != first
        assert not _alive(first)
    finally:
        pool.close()


def test_a_forked_child_does_not_use_its_parents_workers(pool: WorkerPool) -> None:
    with pool.lease(1) as workers:
        workers[0].request("go", [0])
        parents = _pid(workers[0].reply(), 0)
    child = os.fork()
    if child == 0:  # pragma: no cover - reports through its exit code
        code = 1
        try:
            with pool.lease(1) as workers:
                workers[0].request("go", [0])
                code = 3 if _pid(workers[0].reply(), 0) == parents else 0
            pool.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert pool.pids() == [parents]  # the parent's worker is untouched


def test_generation_reuses_its_workers_with_identical_output(tmp_path: Path) -> None:
    close_workers()
    loaded = load_scenario(write_scenario(tmp_path / "scenarios", COMMUTER))
    trees = []
    for run in range(2):
        out = tmp_path / f"run-{run}"
        write_module.generate_worlds([loaded], out, workers=2)
        trees.append(tree_bytes(out))
        if run == 0:
            pids = write_module._WORKERS.pids()
    assert len(pids) == 1 and write_module._WORKERS.pids() == pids
    write_module.generate_worlds([loaded], tmp_path / "serial", workers=1)
    assert trees[0] == trees[1] == tree_bytes(tmp_path / "serial")
    close_workers()
    assert write_module._WORKERS.pids() == [] and not _alive(pids[0])


def test_workers_are_stopped_when_their_process_exits(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path / "scenarios", COMMUTER)
    script = (
        "import sys\n"
        "import drift_pipeline.world._write as w\n"
        "from drift_pipeline.scenario import load_scenario\n"
        "w.generate_worlds([load_scenario(sys.argv[1])], sys.argv[2], workers=2)\n"
        "print(*w._WORKERS.pids())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(scenario), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (pid,) = map(int, done.stdout.split())
    assert not _alive(pid)  # reaped by the exiting process, not left running or as a zombie


def test_ensure_worlds_stops_the_workers_once_the_worlds_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    close_workers()
    monkeypatch.setattr(write_module, "PARALLEL_MIN_SESSIONS", 1)  # parallel even when tiny
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    running: list[int] = []
    real_close = worlds_module.close_workers

    def close() -> None:
        running.extend(write_module._WORKERS.pids())
        real_close()

    monkeypatch.setattr(worlds_module, "close_workers", close)
    loaded = load_scenario(write_scenario(tmp_path / "scenarios", COMMUTER))
    worlds, generated = ensure_worlds(tmp_path / "out", [ScenarioSource(loaded)], ())
    assert len(generated) == len(worlds) > 0
    assert len(running) == 1  # a kept worker generated the worlds…
    assert write_module._WORKERS.pids() == [] and not _alive(running[0])  # …and is gone
