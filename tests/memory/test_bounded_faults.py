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


def _cell(world: Path, backend: str, limit: int = LIMIT) -> tuple[CellRun, float]:
    started = time.perf_counter()
    cell = run_cell(
        world,
        "loop-bounded-t",
        "short",
        _support.REPLICATES,
        Arm(f"memory.plugins.hangs:{backend}", Gate("hard")),
        config=LoopConfig(call_timeout=TIMEOUT, protect=(world,), max_consecutive_faults=limit),
    )
    return cell, time.perf_counter() - started


def _errors(cell: CellRun) -> list[list[str | None]]:
    """Per replicate, the error of every call in the order made (stores, then each probe)."""
    calls: dict[int, list[tuple[int, int, str | None]]] = {}
    for row in cell.snapshots.to_pylist():
        calls.setdefault(row["replicate"], []).append((row["session_index"], 0, row["error"]))
    for row in cell.retrievals.to_pylist():
        calls.setdefault(row["replicate"], []).append((row["checkpoint"] - 1, 1, row["error"]))
    return [[error for *_, error in sorted(calls[r], key=lambda c: c[:2])] for r in sorted(calls)]


def test_a_backend_that_hangs_on_every_call_costs_a_few_timeouts_not_one_per_call(world: Path):
    fine, fine_wall = _cell(world, "Fine")
    assert not fine.faults
    hung, hung_wall = _cell(world, "HangsAlways")
    # Every call has its row: the first LIMIT timed out (cancelled in the worker, which was not
    # killed), every later one is recorded as skipped without being made.
    assert hung.snapshots.num_rows == fine.snapshots.num_rows
    assert hung.retrievals.num_rows == fine.retrievals.num_rows
    for errors in _errors(hung):
        assert all(e and e.startswith("timeout after 0.45s; cancelled in the worker")
                   for e in errors[:LIMIT]), errors[:LIMIT]
        assert set(errors[LIMIT:]) == {f"skipped: {LIMIT} consecutive faults before this call"}
    assert set(hung.retrievals.column("context").to_pylist()) == {""}
    # Replicates run at once: LIMIT timeouts each, on top of what the fault-free cell costs.
    assert hung_wall < 2 * fine_wall + LIMIT * TIMEOUT * 2, (hung_wall, fine_wall)


def test_hangs_between_answers_are_cancelled_in_the_worker_and_never_add_up_to_a_skip(
    world: Path,
):
    cell, _ = _cell(world, "HangsOneInFive")
    for errors in _errors(cell):
        faulted = [e for e in errors if e]
        # Every fifth call, none skipped: an answer in between resets the count.
        assert len(faulted) == len(errors) // 5
        assert all(e.startswith("timeout after 0.45s; cancelled in the worker") for e in faulted)
    # No worker was killed: what the backend kept survived its hangs (4 of every 5 stores).
    last = [r for r in cell.snapshots.to_pylist() if r["checkpoint"] and r["replicate"] == 0][-1]
    assert last["snapshot"].count("short-r0-") == 5


def test_without_a_limit_every_call_is_still_made(world: Path):
    cell, _ = _cell(world, "HangsAlways", limit=0)
    assert not any(e.startswith("skipped") for errors in _errors(cell) for e in errors if e)
