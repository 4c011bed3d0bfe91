"""Hangs are bounded: cancelled in the worker, and after K faults in a row no longer waited for."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell

from .plugins import _support

TIMEOUT = 0.5
LIMIT = 5
LOADED_TIMEOUTS = (1.0, 2.0)
"""Timeouts a cell is run again with when the harness's own deadline was hit first.

The worker cancels a hung call 10% before the harness gives up on it (0.45 s of 0.5 s): on a
loaded machine a worker not scheduled within that margin answers late, or an answer that never
hung takes longer than the whole timeout, and the harness restarts the worker. That says nothing
about the rule under test, so the cell runs again with a wider margin (the same checks then
apply to it); a worker that never cancels a hang itself still fails every attempt.
"""
WORKER_DEADLINE = {0.5: "0.45", 1.0: "0.9", 2.0: "1.8"}
"""The worker's own deadline for each harness timeout, as its fault lines print it."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bounded")
    return _support.generate_world(base / "scenarios", base / "data", "loop-bounded-t")


@dataclass(frozen=True)
class Timed:
    """A cell, its wall time, and the harness timeout it ran with."""

    cell: CellRun
    wall: float
    timeout: float

    @property
    def cancelled(self) -> str:
        """The fault line of a call the worker cancelled itself."""
        return f"timeout after {WORKER_DEADLINE[self.timeout]}s; cancelled in the worker"

    @property
    def late(self) -> str:
        """The fault line of a call the harness gave up on first (the worker restarted)."""
        return f"timeout after {self.timeout:g}s; worker restarted"


def _cell(world: Path, backend: str, limit: int = LIMIT, max_fault_rate: float = 0.05) -> Timed:
    """The cell at :data:`TIMEOUT`, or at a wider one if the machine was too busy to keep it."""
    for timeout in (TIMEOUT, *LOADED_TIMEOUTS):
        started = time.perf_counter()
        cell = run_cell(
            world,
            "loop-bounded-t",
            "short",
            _support.REPLICATES,
            Arm(f"memory.plugins.hangs:{backend}", Gate("hard")),
            config=LoopConfig(
                call_timeout=timeout,
                protect=(world,),
                max_consecutive_faults=limit,
                max_fault_rate=max_fault_rate,
            ),
        )
        timed = Timed(cell, time.perf_counter() - started, timeout)
        if not any(e == timed.late for errors in _errors(cell) for e in errors):
            break
    return timed


def _errors(cell: CellRun) -> list[list[str | None]]:
    """Per replicate, the error of every call in the order made (each session's read, its
    store, then each probe)."""
    calls: dict[int, list[tuple[int, int, str | None]]] = {}
    for row in cell.snapshots.to_pylist():
        mine = calls.setdefault(row["replicate"], [])
        mine += [(row["session_index"], 0, error) for error in row["session_read_errors"]]
        mine.append((row["session_index"], 1, row["error"]))
    for row in cell.retrievals.to_pylist():
        calls.setdefault(row["replicate"], []).append((row["checkpoint"] - 1, 2, row["error"]))
    return [[error for *_, error in sorted(calls[r], key=lambda c: c[:2])] for r in sorted(calls)]


def _kinds(cell: CellRun) -> list[list[tuple[str, str | None]]]:
    """Per replicate, ``(kind, error)`` of every call in the order made."""
    calls: dict[int, list[tuple[int, int, str, str | None]]] = {}
    for row in cell.snapshots.to_pylist():
        mine = calls.setdefault(row["replicate"], [])
        index = row["session_index"]
        mine += [(index, 0, "retrieve", error) for error in row["session_read_errors"]]
        mine.append((index, 1, "store", row["error"]))
    for row in cell.retrievals.to_pylist():
        calls.setdefault(row["replicate"], []).append(
            (row["checkpoint"] - 1, 2, "retrieve", row["error"])
        )
    return [[(kind, e) for *_, kind, e in sorted(calls[r], key=lambda c: c[:2])] for r in calls]


def test_a_backend_that_hangs_on_every_call_costs_a_few_timeouts_per_replicate(world: Path):
    fine = _cell(world, "Fine")
    assert not fine.cell.faults
    timed = _cell(world, "HangsAlways")
    hung = timed.cell
    # Every call has its row: in each replicate the first LIMIT calls of each kind timed out
    # (cancelled in the worker, which was not killed), every later one is recorded as skipped
    # without being made.
    assert hung.snapshots.num_rows == fine.cell.snapshots.num_rows
    assert hung.retrievals.num_rows == fine.cell.retrievals.num_rows
    timeout = timed.cancelled
    # Should the machine stay too busy at every timeout tried, the worker's answer can miss the
    # harness's own deadline by a hair: that call is a timeout too, with the worker restarted
    # (and given the same rule).
    late = timed.late
    for calls in _kinds(hung):
        for kind in ("store", "retrieve"):
            errors = [e for k, e in calls if k == kind]
            skipped = (
                f"skipped: {LIMIT} consecutive {kind} faults in this replicate before this call"
            )
            assert all(e in (timeout, late) for e in errors[:LIMIT]), errors
            assert errors[LIMIT:] == [skipped] * (len(errors) - LIMIT), errors
    assert set(hung.retrievals.column("context").to_pylist()) == {""}
    # Replicates run at once, each costing 2 × LIMIT timeouts on top of the fault-free cost.
    assert timed.wall < 2 * fine.wall + 2 * LIMIT * timed.timeout + 2, (timed.wall, fine.wall)
    summary = hung.fault_summary
    assert summary.faulted == {
        "store": _support.REPLICATES * _support.SESSIONS,
        "read before a session": _support.REPLICATES * _support.SESSIONS,
        "probe": hung.retrievals.num_rows,
    }
    assert summary.total - sum(summary.skipped.values()) == 2 * LIMIT * _support.REPLICATES
    assert summary.first_error is not None and summary.first_error.error in (timeout, late)
    assert summary.first_error.replicate == 0 and summary.first_exception is None


def test_hangs_between_answers_are_cancelled_in_the_worker_and_never_add_up_to_a_skip(
    world: Path,
):
    # A fault-rate limit that never cuts the cell off: only the faults in a row could.
    timed = _cell(world, "HangsOneInFive", max_fault_rate=1.0)
    cell = timed.cell
    for errors in _errors(cell):
        faulted = [e for e in errors if e]
        # Every fifth call, none skipped: an answer in between resets the count.
        assert len(faulted) == len(errors) // 5
        assert all(e.startswith(timed.cancelled) for e in faulted), faulted
    # No worker was killed: what the backend kept survived its hangs (4 of every 5 stores).
    last = [r for r in cell.snapshots.to_pylist() if r["checkpoint"] and r["replicate"] == 0][-1]
    assert last["snapshot"].count("short-r0-") == 5


def test_without_a_limit_every_call_is_still_made(world: Path):
    # Faults that cost no wait show the rule alone: however many fault in a row, each call is
    # made and records the backend's own error, never a skip.
    cell = _cell(world, "RaisesAlways", limit=0, max_fault_rate=1.0).cell
    errors = [error for errors in _errors(cell) for error in errors]
    assert len(errors) == cell.calls > 2 * LIMIT
    assert all(e is not None and e.startswith("RuntimeError: planned failure") for e in errors)


def test_past_the_fault_rate_limit_a_replicate_stops_making_calls_of_the_kind_that_faults(
    world: Path,
):
    planned = _cell(world, "Fine").cell.calls
    # A limit low enough that one replicate's faults of one kind pass it (every fifth call
    # hangs, alternately a read and a store).
    rate = 0.02
    budget = int(rate * planned)
    timed = _cell(world, "HangsOneInFive", max_fault_rate=rate)
    cell = timed.cell
    cut_off = 0
    for calls in _kinds(cell):
        for kind in ("store", "retrieve"):
            errors = [e for k, e in calls if k == kind]
            faulted = [e for e in errors if e and not e.startswith("skipped")]
            skips = {e for e in errors if e and e.startswith("skipped")}
            if not skips:  # this kind never faulted past the budget in this replicate
                assert len(faulted) <= budget
                continue
            # Cut off at its first fault past the budget: from then on the cell is invalid
            # whatever this replicate's remaining calls of that kind would have done.
            cut_off += 1
            assert len(faulted) == budget + 1, (kind, errors)
            first_skip = next(n for n, e in enumerate(errors) if e and e.startswith("skipped"))
            assert all(e and e.startswith("skipped") for e in errors[first_skip:])
            assert skips == {
                f"skipped: {budget + 1} faulted {kind} calls in this replicate already put the "
                "cell past its fault-rate limit"
            }
    assert cut_off
    assert not cell.valid and cell.calls == planned
    # That a rerun skips the same calls is checked where faults do not depend on timing
    # (tests/memory/test_actionable_faults.py): a hang the harness times out first restarts the
    # worker, which shifts this backend's one-in-five pattern.
