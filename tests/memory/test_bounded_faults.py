"""Hangs are bounded: cancelled in the worker, and after K faults in a row no longer waited for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell

from .plugins import _support

TIMEOUT = 0.5
LIMIT = 5


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bounded")
    return _support.generate_world(base / "scenarios", base / "data", "loop-bounded-t")


def _cell(
    world: Path, backend: str, limit: int = LIMIT, max_fault_rate: float = 0.05
) -> tuple[CellRun, float]:
    started = time.perf_counter()
    cell = run_cell(
        world,
        "loop-bounded-t",
        "short",
        _support.REPLICATES,
        Arm(f"memory.plugins.hangs:{backend}", Gate("hard")),
        config=LoopConfig(
            call_timeout=TIMEOUT,
            protect=(world,),
            max_consecutive_faults=limit,
            max_fault_rate=max_fault_rate,
        ),
    )
    return cell, time.perf_counter() - started


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


def test_a_backend_that_hangs_on_every_call_costs_a_few_timeouts_not_one_per_call(world: Path):
    fine, fine_wall = _cell(world, "Fine")
    assert not fine.faults
    hung, hung_wall = _cell(world, "HangsAlways")
    # Every call has its row: the first LIMIT timed out (cancelled in the worker, which was not
    # killed), every later one is recorded as skipped without being made.
    assert hung.snapshots.num_rows == fine.snapshots.num_rows
    assert hung.retrievals.num_rows == fine.retrievals.num_rows
    timeout = "timeout after 0.45s; cancelled in the worker"
    skipped = f"skipped: {LIMIT} consecutive faults before this call"
    timed_out = 0
    for errors in _errors(hung):
        # Each replicate: a few timeouts, then only skips (never a call made after the cut).
        made = [e for e in errors if e and e.startswith(timeout)]
        assert errors == [*made, *[skipped] * (len(errors) - len(made))], errors
        timed_out += len(made)
    # The faults in a row are counted over the cell, not per replicate: LIMIT timeouts in all,
    # plus at most one per other replicate that was already waiting when the cell was cut off.
    assert LIMIT <= timed_out <= LIMIT + _support.REPLICATES - 1, timed_out
    assert set(hung.retrievals.column("context").to_pylist()) == {""}
    # Replicates run at once: about LIMIT / REPLICATES timeouts on top of the fault-free cost.
    assert hung_wall < 2 * fine_wall + LIMIT * TIMEOUT, (hung_wall, fine_wall)


def test_hangs_between_answers_are_cancelled_in_the_worker_and_never_add_up_to_a_skip(
    world: Path,
):
    # A fault-rate limit that never cuts the cell off: only the faults in a row could.
    cell, _ = _cell(world, "HangsOneInFive", max_fault_rate=1.0)
    for errors in _errors(cell):
        faulted = [e for e in errors if e]
        # Every fifth call, none skipped: an answer in between resets the count.
        assert len(faulted) == len(errors) // 5
        assert all(e.startswith("timeout after 0.45s; cancelled in the worker") for e in faulted)
    # No worker was killed: what the backend kept survived its hangs (4 of every 5 stores).
    last = [r for r in cell.snapshots.to_pylist() if r["checkpoint"] and r["replicate"] == 0][-1]
    assert last["snapshot"].count("short-r0-") == 5


def test_without_a_limit_every_call_is_still_made(world: Path):
    cell, _ = _cell(world, "HangsAlways", limit=0, max_fault_rate=1.0)
    assert not any(e.startswith("skipped") for errors in _errors(cell) for e in errors if e)


def test_past_the_fault_rate_limit_the_rest_of_the_cell_is_skipped(world: Path):
    fine, _ = _cell(world, "Fine")
    planned = fine.calls
    cell, _ = _cell(world, "HangsOneInFive")
    errors = [e for errors in _errors(cell) for e in errors]
    made = [e for e in errors if e and not e.startswith("skipped")]
    skips = [e for e in errors if e and e.startswith("skipped")]
    # Cut off at the first fault past 5% of the planned calls (the others in flight then
    # still complete): the cell is invalid whatever its remaining calls would have done.
    assert int(0.05 * planned) < len(made) <= int(0.05 * planned) + _support.REPLICATES
    assert skips and set(skips) == {
        f"skipped: {int(0.05 * planned) + 1} faulted calls already put the cell past its "
        "fault-rate limit"
    }
    assert not cell.valid and cell.calls == planned
