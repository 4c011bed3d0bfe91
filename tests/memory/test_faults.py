"""Crash containment: a backend that raises, hangs, dies or returns the wrong type is recorded
per call, its worker restarted when needed, and the run goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pyarrow.parquet as pq
import pytest

from drift_pipeline.memory import Arm, BackendWorker, CellRun, Gate, LoopConfig, _client, run_cell
from drift_pipeline.storage import PART_FILE, PROBES, partition_dir

from .plugins import _support, faulty
from .plugins.crasher import EXIT_CODE

T = TypeVar("T")

FAULTY = "memory.plugins.faulty:FaultyBackend"
CRASHER = "memory.plugins.crasher:CrashOnce"
BAD_TEXT = "memory.plugins.faulty:BadText"
SLOW_START = "memory.plugins.faulty:SlowStart"
STALLER = "memory.plugins.stall:StallOnce"
TIMEOUT = 2.0  # seconds; generous enough that only the planned hang ever reaches it
SESSION = [
    {"speaker": "principal", "role": "user", "content": "I moved to Oslo.", "timestamp": "2027"},
]


def with_worker(
    backend: str,
    body: Callable[[BackendWorker], Awaitable[T]],
    options: dict[str, Any] | None = None,
    timeout: float = 5.0,
) -> T:
    """Start an isolated worker, run ``body`` against it, always close it."""

    async def go() -> T:
        worker = BackendWorker(backend, options or {}, [], timeout)
        try:
            started = await worker.start()
            assert started.ok, started.error
            return await body(worker)
        finally:
            await worker.close()

    return asyncio.run(go())


def store(worker: BackendWorker, session_id: str) -> Any:
    return worker.call(
        {"op": "store", "session_id": session_id, "messages": SESSION, "snapshot": False}
    )


def retrieve(worker: BackendWorker, query: str = "where?") -> Any:
    return worker.call(
        {"op": "retrieve", "session_id": "s", "entity_id": "assistant", "query": query}
    )


# --- one call at a time, at the worker boundary -------------------------------------------


def _raise_line() -> int:
    """The line of the planned failure's ``raise`` in the faulty backend's source."""
    lines = Path(faulty.__file__).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if "raise RuntimeError(" in line)


def test_a_raising_store_is_a_recorded_fault_and_the_worker_carries_on():
    async def body(worker: BackendWorker) -> None:
        results = [await store(worker, f"short-r0-s{i:05d}") for i in range(6)]
        errors = [r.error for r in results]
        # Each error names where it was raised in the backend's code, at the end of its line.
        where = f"{Path(faulty.__file__)}:{_raise_line()}"
        assert errors[2] == f"RuntimeError: planned failure on store call 3 at {where}"
        assert errors[5] == f"RuntimeError: planned failure on store call 6 at {where}"
        assert results[2].data["where"] == where
        assert [e for i, e in enumerate(errors) if i not in (2, 5)] == [None] * 4
        assert worker.restarts == 0  # an exception is not a reason to restart
        # The backend's prints went to stderr, not into the protocol: every reply parsed.
        assert all(r.data for r in results)
        snapshot = await worker.call({"op": "snapshot"})
        assert snapshot.data["snapshot"].split("\n") == [f"short-r0-s{i:05d}" for i in (0, 1, 3, 4)]

    with_worker(FAULTY, body)


def test_a_hang_times_out_restarts_the_worker_and_counts_as_slow():
    async def body(worker: BackendWorker) -> None:
        await store(worker, "short-r0-s00000")
        hung = await retrieve(worker)
        assert not hung.ok
        assert hung.error == "timeout after 1s; worker restarted"
        assert hung.backend_ms >= 1000  # the hang is not reported as a fast call
        assert hung.round_trip_ms >= hung.backend_ms
        assert worker.restarts == 1
        # The fresh worker answers; its in-memory state is gone, the hang is not repeated.
        after = await retrieve(worker)
        assert after.ok and after.data["context"] == "sessions kept: "
        wrong_type = await retrieve(worker)
        assert wrong_type.error == "retrieve() returned dict, expected str"
        assert worker.restarts == 1

    with_worker(FAULTY, body, timeout=1.0)


def test_a_worker_that_dies_is_recorded_as_a_crash_and_restarted():
    async def body(worker: BackendWorker) -> None:
        fine = await store(worker, "short-r0-s00000")
        died = await store(worker, "short-r0-s00001")
        again = await store(worker, "short-r0-s00001")
        assert fine.ok and again.ok
        assert died.error == f"worker crashed (exit {EXIT_CODE}); worker restarted"
        assert worker.restarts == 1
        snapshot = await worker.call({"op": "snapshot"})
        assert snapshot.data["snapshot"] == "short-r0-s00001"  # what it kept died with it

    with_worker(CRASHER, body, options={"crash_at": 2})


def test_text_that_is_not_unicode_is_a_fault_not_a_harness_crash():
    async def body(worker: BackendWorker) -> None:
        answer = await retrieve(worker)
        assert answer.error == "retrieve() returned text that is not valid Unicode (surrogates)"
        stored = await worker.call(
            {"op": "store", "session_id": "s", "messages": SESSION, "snapshot": True}
        )
        assert stored.error is not None and "not valid Unicode" in stored.error

    with_worker(BAD_TEXT, body)


def test_a_reply_over_the_line_limit_is_a_fault_and_a_restart(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_client, "_MAX_LINE", 1 << 20)

    async def body(worker: BackendWorker) -> None:
        huge = await retrieve(worker, "huge")
        assert huge.error == "oversized reply from worker; worker restarted"
        assert worker.restarts == 1
        small = await retrieve(worker, "small")
        assert small.ok and small.data["context"] == "x" * 10

    with_worker("memory.plugins.faulty:Huge", body)


def test_construction_is_not_bound_by_the_per_call_timeout():
    async def body(worker: BackendWorker) -> None:
        answer = await retrieve(worker)
        assert answer.ok and answer.data["context"] == "ready"

    with_worker(SLOW_START, body, options={"seconds": 1.5}, timeout=0.5)


def test_a_constructor_that_hangs_is_a_start_fault(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_client, "START_TIMEOUT", 1.0)

    async def go() -> None:
        worker = BackendWorker(SLOW_START, {"seconds": 60}, [], 0.5)
        try:
            started = await worker.start()
            assert started.error == "backend construction timed out after 1s"
            assert (await retrieve(worker)).error == "worker is not running"
        finally:
            await worker.close()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("backend", "options", "expected"),
    [
        ("memory.plugins.no_such_module:X", {}, "cannot import module"),
        ("memory.plugins.faulty:NoSuchClass", {}, "has no attribute 'NoSuchClass'"),
        (FAULTY, {"no_such_option": 1}, "rejects options ['no_such_option']"),
    ],
)
def test_a_backend_that_cannot_start_is_a_fault_and_every_later_call_too(
    backend: str, options: dict[str, Any], expected: str
):
    async def go() -> None:
        worker = BackendWorker(backend, options, [], 5.0)
        try:
            started = await worker.start()
            assert not started.ok
            assert started.error is not None and expected in started.error
            later = await store(worker, "s")
            assert later.error is not None and not later.ok
        finally:
            await worker.close()

    asyncio.run(go())


# --- whole cells ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("faults")
    return _support.generate_world(base / "scenarios", base / "data", "loop-faults-t")


def _cell(
    world: Path, backend: str, timeout: float = TIMEOUT, max_consecutive_faults: int = 5
) -> CellRun:
    return run_cell(
        world,
        "loop-faults-t",
        "short",
        _support.REPLICATES,
        Arm(backend, Gate("hard")),
        config=LoopConfig(
            call_timeout=timeout,
            protect=(world,),
            max_consecutive_faults=max_consecutive_faults,
            # Every call is made, however many fault: the recording of each is what is checked.
            max_fault_rate=1.0,
        ),
    )


def _probe_count(world: Path) -> int:
    path = partition_dir(world, PROBES, {"scenario": "loop-faults-t", "horizon": "short"})
    return pq.read_table(path / PART_FILE).num_rows


def _assert_complete(world: Path, cell: CellRun) -> None:
    snapshots = cell.snapshots.to_pydict()
    pairs = list(zip(snapshots["replicate"], snapshots["session_index"], strict=True))
    assert pairs == [(r, s) for r in range(_support.REPLICATES) for s in range(_support.SESSIONS)]
    assert cell.retrievals.num_rows == _probe_count(world)


def test_a_cell_with_raises_hangs_and_wrong_types_completes_with_every_fault_recorded(
    world: Path,
):
    cell = _cell(world, FAULTY)
    _assert_complete(world, cell)
    store_errors = [e for e in cell.snapshots.column("error").to_pylist() if e]
    read_errors = cell.retrievals.column("error").to_pylist()
    session_read_errors = [
        e for errors in cell.snapshots.column("session_read_errors").to_pylist() for e in errors
    ]
    assert store_errors and all(e.startswith("RuntimeError: planned failure") for e in store_errors)
    # It hangs once per replicate, on its first retrieve: the read before the first session.
    timeouts = [e for e in session_read_errors if e and e.startswith("timeout after 2s")]
    assert len(timeouts) == _support.REPLICATES
    assert "retrieve() returned dict, expected str" in read_errors
    assert "retrieve() returned dict, expected str" in session_read_errors
    assert None in read_errors  # and it also answered sometimes
    # Every faulted call is in the cell's fault list, naming replicate and call.
    assert len(cell.faults) == len(store_errors) + sum(
        e is not None for e in [*read_errors, *session_read_errors]
    )
    assert any(" store short-r" in f for f in cell.faults)
    assert any(" retrieve before short-r" in f and "timeout" in f for f in cell.faults)
    # A timed-out retrieve counts at least its timeout as latency; a failed one has no context.
    rows = cell.retrievals.to_pylist()
    for row in rows:
        if row["error"] and row["error"].startswith("timeout"):
            assert row["read_ms"] >= TIMEOUT * 1000 and row["context"] == ""
        if row["error"] == "retrieve() returned dict, expected str":
            assert row["context"] == ""


def test_a_worker_that_dies_mid_run_is_restarted_and_token_accounting_goes_on(world: Path):
    cell = _cell(world, CRASHER, timeout=10.0)
    _assert_complete(world, cell)
    rows = cell.snapshots.to_pylist()
    crashed = [(r["replicate"], r["session_index"]) for r in rows if r["error"]]
    assert crashed == [(0, 4), (1, 4)]  # crash_at=5: the fifth session of each replicate
    assert all(
        r["error"] == f"worker crashed (exit {EXIT_CODE}); worker restarted"
        for r in rows
        if r["error"]
    )
    assert len(cell.faults) == 2
    # The restarted instance counts from zero again; the loop must keep counting per call.
    assert [r["write_tokens"] for r in rows if not r["error"]] == [7] * (len(rows) - 2)
    assert [r["write_tokens"] for r in rows if r["error"]] == [0, 0]
    assert set(cell.retrievals.column("llm_read_tokens").to_pylist()) == {2}
    # What the first instance kept in memory died with it: the snapshot at the checkpoint after
    # session index 7 holds indices 5..7 only (the store that crashed, index 4, is lost too).
    at_eight = next(r for r in rows if r["session_index"] == 7 and r["replicate"] == 0)
    assert at_eight["snapshot"] == "\n".join(f"short-r0-s{i:05d}" for i in (5, 6, 7))
    assert cell.isolation


def test_unicode_garbage_from_a_backend_does_not_stop_the_run(world: Path):
    # Every call of this backend faults: without a limit, each one is made and recorded.
    cell = _cell(world, BAD_TEXT, timeout=10.0, max_consecutive_faults=0)
    _assert_complete(world, cell)
    assert set(cell.retrievals.column("error").to_pylist()) == {
        "retrieve() returned text that is not valid Unicode (surrogates)"
    }
    assert all(cell.snapshots.column("error").to_pylist())


def test_a_store_that_hangs_mid_run_times_out_and_the_rest_of_the_run_reaches_a_new_worker(
    world: Path,
):
    cell = _cell(world, STALLER)
    _assert_complete(world, cell)
    rows = cell.snapshots.to_pylist()
    # stall_at=3: the third session of each replicate, in the middle of the run up to the
    # checkpoint after index 7 (sessions go to the worker one run per message).
    stalled = [(r["replicate"], r["session_index"]) for r in rows if r["error"]]
    assert stalled == [(0, 2), (1, 2)]
    for row in rows:
        if row["error"]:
            assert row["error"] == f"timeout after {TIMEOUT:g}s; worker restarted"
            assert row["write_ms"] >= TIMEOUT * 1000
    assert len(cell.faults) == 2
    # The restarted instance got every later session of that run, one store each.
    at_eight = next(r for r in rows if r["session_index"] == 7 and r["replicate"] == 0)
    assert at_eight["snapshot"] == "\n".join(f"short-r0-s{i:05d}" for i in range(3, 8))
    assert cell.retrievals.column("error").to_pylist() == [None] * cell.retrievals.num_rows
