"""Garbage from a backend is a recorded, bounded fault; the cell completes every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell

from .plugins import _support

GARBAGE = "memory.plugins.garbage:Garbage"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("garbage")
    return _support.generate_world(base / "scenarios", base / "data", "loop-garbage-t")


def _cell(world: Path, mode: str) -> CellRun:
    cell = run_cell(
        world,
        "loop-garbage-t",
        "short",
        _support.REPLICATES,
        Arm(GARBAGE, Gate("hard")),
        {"mode": mode},
        LoopConfig(
            call_timeout=20.0, protect=(world,), max_consecutive_faults=0, max_fault_rate=1.0
        ),
    )
    assert cell.snapshots.num_rows == _support.SESSIONS * _support.REPLICATES
    # Whatever the backend claimed, recorded counts are sane numbers.
    for name in ("write_tokens", "storage_tokens"):
        values = cell.snapshots.column(name).to_pylist()
        assert all(0 <= v < 2**53 for v in values), (name, values)
    assert all(0 <= v < 2**53 for v in cell.retrievals.column("llm_read_tokens").to_pylist())
    return cell


def _store_errors(cell: CellRun, checkpoints_only: bool = False) -> list[str | None]:
    rows = cell.snapshots.to_pylist()
    return [r["error"] for r in rows if r["checkpoint"] or not checkpoints_only]


def test_a_100_mb_context_is_refused_in_the_worker_and_recorded(world: Path):
    cell = _cell(world, "huge_context")
    errors = set(cell.retrievals.column("error").to_pylist())
    assert errors == {
        f"retrieve() returned {100 << 20} characters, over the {16 << 20} the harness "
        "accepts; not recorded"
    }
    assert set(cell.retrievals.column("context").to_pylist()) == {""}


def test_a_100_mb_snapshot_is_refused_and_the_checkpoint_store_is_a_fault(world: Path):
    cell = _cell(world, "huge_snapshot")
    at_checkpoints = _store_errors(cell, checkpoints_only=True)
    assert at_checkpoints and all(
        e and e.startswith(f"ValueError: snapshot() returned {100 << 20} characters")
        for e in at_checkpoints
    )
    assert not any(r["snapshot"] for r in cell.snapshots.to_pylist())
    # Between checkpoints it counted its own storage, truthfully: no fault there.
    assert sum(e is None for e in _store_errors(cell)) == len(_store_errors(cell)) - len(
        at_checkpoints
    )
    assert cell.retrievals.column("error").null_count == cell.retrievals.num_rows


def test_a_retrieve_of_the_wrong_type_is_a_fault_naming_the_type(world: Path):
    cell = _cell(world, "wrong_types")
    errors = set(cell.retrievals.column("error").to_pylist())
    assert errors == {
        f"retrieve() returned {kind}, expected str" for kind in ("bytes", "NoneType", "int")
    }


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("counts_negative", "token_counts(): ValueError: write is -5, outside 0.."),
        ("counts_huge", f"token_counts(): ValueError: write is {10**30}, outside 0.."),
        ("counts_not_numbers", "token_counts(): ValueError: write is 'many', expected an int"),
        ("counts_not_counts", "token_counts(): AttributeError: 'dict' object has no attribute"),
    ],
)
def test_impossible_token_counts_are_faults_and_count_nothing(
    world: Path, mode: str, expected: str
):
    cell = _cell(world, mode)
    errors = [*_store_errors(cell), *cell.retrievals.column("error").to_pylist()]
    # (At checkpoints its storage count also disagrees with its snapshot: both are recorded.)
    assert all(e and expected in e for e in errors), set(errors)
    assert set(cell.snapshots.column("write_tokens").to_pylist()) == {0}


def test_counters_that_go_down_are_lies_recorded_as_faults(world: Path):
    cell = _cell(world, "counts_go_down")
    rows = cell.snapshots.to_pylist()
    for replicate in range(_support.REPLICATES):
        errors = [r["error"] for r in rows if r["replicate"] == replicate]
        # The first store sets the counter; every later one goes down (the read before each
        # session is a call of the backend's too, so its count is 998 after the first store).
        assert errors[0] is None
        assert all(e and "token_counts().write went down from 998 to " in e for e in errors[1:])
    assert set(cell.snapshots.column("write_tokens").to_pylist()) == {0, 998}


def test_a_storage_count_that_disagrees_with_the_snapshot_is_recounted(world: Path):
    cell = _cell(world, "storage_lies")
    rows = cell.snapshots.to_pylist()
    for row in rows:
        if row["checkpoint"]:
            assert row["error"] == "storage count mismatch; recounted"
            assert row["storage_tokens"] > 1
        else:
            assert row["error"] is None


def test_a_storage_count_past_int64_is_a_fault_not_a_crash(world: Path):
    cell = _cell(world, "storage_huge")
    assert all(
        e and e.startswith(f"TypeError: storage_tokens() returned {10**30}")
        for e in _store_errors(cell)
    )
