"""The memory loop over a real (small) world: order, boundaries, gates, costs.

Backends here are plugins from ``tests/memory/plugins`` that report what crossed the worker
boundary, run isolated exactly as ``drift run`` runs them.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from helpers import worker_temp

from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell
from drift_pipeline.memory.backends import backend_names, backend_registration
from drift_pipeline.storage import EVENT_SCHEDULES, PART_FILE, PROBES, TRANSCRIPTS, partition_dir
from drift_pipeline.tokens import count_tokens, count_tokens_lines

from .plugins import _support

SCENARIO = "loop-order-t"
RECORDER = "memory.plugins.recorder:Recorder"
KEEPER = "memory.plugins.keeper:RecentLines"
PEEKER = "memory.plugins.peeker:Peeker"
STRONGEST = "unprivileged-user+mount-namespace"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("loop")
    return _support.generate_world(base / "scenarios", base / "data", SCENARIO)


def _table(world: Path, table: Any) -> list[dict[str, Any]]:
    path = partition_dir(world, table, {"scenario": SCENARIO, "horizon": "short"}) / PART_FILE
    return pq.read_table(path).to_pylist()  # type: ignore[no-any-return]


def _cell(world: Path, backend: str, gate: str = "hard", **config: Any) -> CellRun:
    return run_cell(
        world,
        SCENARIO,
        "short",
        _support.REPLICATES,
        Arm(backend, Gate.parse(gate)),
        config=LoopConfig(call_timeout=20.0, protect=(world,), **config),
    )


@pytest.fixture(scope="module")
def recorded(world: Path) -> CellRun:
    return _cell(world, RECORDER)


@pytest.fixture(scope="module")
def session_ids(world: Path) -> dict[tuple[int, int], str]:
    return {
        (r["replicate"], r["session_index"]): r["session_id"]
        for r in _table(world, EVENT_SCHEDULES)
    }


def test_every_session_is_stored_once_in_order_with_only_the_message_fields(
    world: Path, recorded: CellRun, session_ids: dict[tuple[int, int], str]
):
    rows = recorded.snapshots.to_pylist()
    assert [(r["replicate"], r["session_index"]) for r in rows] == [
        (rep, s) for rep in range(_support.REPLICATES) for s in range(_support.SESSIONS)
    ]
    assert all(r["session_id"] == session_ids[(r["replicate"], r["session_index"])] for r in rows)
    checkpoints = {p["checkpoint"] for p in _table(world, PROBES)}
    assert checkpoints == set(_support.CHECKPOINTS)
    for row in rows:
        at_checkpoint = row["session_index"] + 1 in checkpoints
        assert row["checkpoint"] is at_checkpoint
        assert (row["snapshot"] is not None) is at_checkpoint
        assert row["error"] is None and row["transcript_tokens"] > 0
        if not at_checkpoint:
            continue
        # The snapshot is what the backend kept: every session so far, in order, and nothing
        # but speaker / role / content / timestamp ever reached it (no harness labels).
        seen = [json.loads(line) for line in row["snapshot"].splitlines()]
        assert [s["session_id"] for s in seen] == [
            session_ids[(row["replicate"], i)] for i in range(row["session_index"] + 1)
        ]
        assert all(s["keys"] == ["content", "role", "speaker", "timestamp"] for s in seen)
        assert all(s["tokenizer_ready"] for s in seen)  # loaded at start, not in a store
        # Storage is recounted by the harness from the snapshot itself.
        assert row["storage_tokens"] == count_tokens_lines(row["snapshot"])


def test_probes_are_asked_right_after_their_checkpoint_by_their_asker(
    world: Path, recorded: CellRun, session_ids: dict[tuple[int, int], str]
):
    probes = {(p["replicate"], p["probe_id"]): p for p in _table(world, PROBES)}
    rows = recorded.retrievals.to_pylist()
    assert sorted((r["replicate"], r["probe_id"]) for r in rows) == sorted(probes)
    for row in rows:
        probe = probes[(row["replicate"], row["probe_id"])]
        asked = json.loads(row["context"])
        now = probe["checkpoint"] - 1
        assert asked["session_id"] == session_ids[(row["replicate"], now)]
        assert (asked["entity_id"], asked["query"]) == (probe["asker"], probe["question"])
        assert row["asker"] == probe["asker"]
        # Nothing after the checkpoint had been stored yet, everything before it had.
        assert asked["stored"] == [session_ids[(row["replicate"], i)] for i in range(now + 1)]
        assert row["read_tokens"] == count_tokens_lines(row["context"])
        assert row["soft_buffer_tokens"] == 0 and row["error"] is None


def test_the_loop_runs_isolated_and_costs_little_per_call(recorded: CellRun):
    if os.geteuid() == 0:
        assert recorded.isolation == STRONGEST
    assert recorded.backend_version == "1"
    assert recorded.faults == []
    snapshots = recorded.snapshots.to_pydict()
    overhead = [
        rt - ms
        for rt, ms in zip(snapshots["write_round_trip_ms"], snapshots["write_ms"], strict=True)
    ]
    # Sessions go over in runs and the worker stores the next one while the harness records
    # the last, so one session's round trip can be shorter than its store; a replicate's
    # round trips add up to its store phase's wall time, which holds every store.
    for replicate in range(_support.REPLICATES):
        mine = [i for i, r in enumerate(snapshots["replicate"]) if r == replicate]
        assert sum(snapshots["write_round_trip_ms"][i] for i in mine) >= sum(
            snapshots["write_ms"][i] for i in mine
        )
    # The boundary (JSON over a pipe, token counting of the snapshot) costs well under a
    # millisecond a session; a generous bound keeps slow CI machines green.
    assert statistics.median(overhead) < 50.0


def test_transcript_tokens_are_each_sessions_messages_counted_once(world: Path, recorded: CellRun):
    expected: dict[tuple[int, int], int] = {}
    for turn in _table(world, TRANSCRIPTS):
        key = (turn["replicate"], turn["session_index"])
        expected[key] = expected.get(key, 0) + count_tokens(turn["content"])
    rows = recorded.snapshots.to_pylist()
    assert {(r["replicate"], r["session_index"]): r["transcript_tokens"] for r in rows} == expected


def test_the_loop_reports_its_own_timing(recorded: CellRun):
    timing = recorded.timing
    assert timing is not None
    snapshots = recorded.snapshots.to_pydict()
    reads = sorted(recorded.retrievals.column("read_ms").to_pylist())
    assert timing.sessions == recorded.snapshots.num_rows
    assert timing.retrievals == recorded.retrievals.num_rows
    assert timing.store_backend_ms == pytest.approx(sum(snapshots["write_ms"]))
    assert timing.store_loop_ms == pytest.approx(sum(snapshots["write_round_trip_ms"]))
    # The agent's reads before each session are backend time too, not the loop's.
    session_reads = sum(sum(ms) for ms in snapshots["session_read_ms"])
    assert timing.session_read_backend_ms == pytest.approx(session_reads)
    assert timing.overhead_us_per_session == pytest.approx(
        (timing.store_loop_ms - timing.store_backend_ms - session_reads) * 1000 / timing.sessions
    )
    # Nearest rank: the smallest observed latency with at least 99% of reads at or below it.
    assert timing.read_p99_ms in reads
    assert sum(r <= timing.read_p99_ms for r in reads) >= 0.99 * len(reads)
    assert sum(r < timing.read_p99_ms for r in reads) < 0.99 * len(reads)
    assert timing.wall_s * 1000 >= max(timing.store_loop_ms / _support.REPLICATES, 0.0)


def test_no_session_past_the_next_checkpoint_is_ever_within_a_backends_reach(world: Path):
    """Sessions cross in runs, but a backend that searches its whole process for session
    payloads finds none beyond the next checkpoint (whose probes must come first)."""
    cell = _cell(world, PEEKER)
    checkpoints = sorted(_support.CHECKPOINTS)
    looked_ahead = False
    lines = 0
    for row in cell.snapshots.to_pylist():
        for line in (row["snapshot"] or "").splitlines():
            stored, furthest = (int(part.rsplit("-s", 1)[1]) for part in line.split())
            next_checkpoint = min(c for c in checkpoints if c > stored)
            assert furthest <= next_checkpoint - 1, line
            looked_ahead |= furthest > stored
            lines += 1
    assert lines == _support.REPLICATES * sum(checkpoints)  # every snapshot lists every store
    assert looked_ahead  # the search works: it does see the rest of the current run


def test_output_does_not_depend_on_concurrency(world: Path, recorded: CellRun):
    serial = _cell(world, RECORDER, concurrency=1)
    for column in ("replicate", "session_index", "snapshot", "storage_tokens", "checkpoint"):
        assert serial.snapshots.column(column) == recorded.snapshots.column(column)
    for column in ("replicate", "probe_id", "context"):
        assert serial.retrievals.column(column) == recorded.retrievals.column(column)


def test_progress_is_reported_once_per_session(world: Path):
    ticks: list[int] = []
    run_cell(
        world,
        SCENARIO,
        "short",
        _support.REPLICATES,
        Arm("amnesiac", Gate("hard")),
        config=LoopConfig(protect=(world,)),
        progress=ticks.append,
    )
    assert sum(ticks) == _support.SESSIONS * _support.REPLICATES


def test_token_counters_become_per_call_costs(world: Path):
    cell = _cell(world, KEEPER)
    assert set(cell.snapshots.column("write_tokens").to_pylist()) == {10}
    assert set(cell.retrievals.column("llm_read_tokens").to_pylist()) == {3}
    assert cell.backend_version == "0.3"
    storage = cell.snapshots.column("storage_tokens").to_pylist()
    delta = cell.snapshots.column("storage_delta_tokens").to_pylist()
    for replicate in range(_support.REPLICATES):
        mine = slice(replicate * _support.SESSIONS, (replicate + 1) * _support.SESSIONS)
        assert sum(delta[mine]) == storage[mine][-1]


def test_soft_gate_appends_the_last_k_transcripts_to_every_context(world: Path):
    cell = _cell(world, "amnesiac", "soft:2")
    transcripts = _table(world, TRANSCRIPTS)
    for row in cell.retrievals.to_pylist():
        last = row["checkpoint"] - 1
        turns = [
            t["content"]
            for t in transcripts
            if t["replicate"] == row["replicate"] and t["session_index"] in (last - 1, last)
        ]
        lines = [line for line in row["context"].splitlines() if line]
        assert len(lines) == len(turns)
        assert all(turn in line for turn, line in zip(turns, lines, strict=True))
        assert row["soft_buffer_tokens"] == row["read_tokens"] == count_tokens_lines(row["context"])
        assert row["soft_buffer_tokens"] > 0
    # The backend itself still got the plain sessions and kept nothing.
    assert set(cell.snapshots.column("storage_tokens").to_pylist()) == {0}


def test_summary_gate_hands_backends_a_short_summary_from_every_participant(
    world: Path, recorded: CellRun
):
    cell = _cell(world, RECORDER, "summary:24")
    final = {r["replicate"]: r["snapshot"] for r in cell.snapshots.to_pylist() if r["snapshot"]}
    full = {r["replicate"]: r["snapshot"] for r in recorded.snapshots.to_pylist() if r["snapshot"]}
    for replicate in range(_support.REPLICATES):
        summary = [json.loads(line) for line in final[replicate].splitlines()]
        plain = [json.loads(line) for line in full[replicate].splitlines()]
        assert [s["session_id"] for s in summary] == [s["session_id"] for s in plain]
        for short, whole in zip(summary, plain, strict=True):
            assert short["speakers"] == whole["speakers"]
            assert short["messages"] == len(whole["speakers"])
            assert short["keys"] == whole["keys"]
            assert short["chars"] <= whole["chars"]
        assert sum(s["chars"] for s in summary) < sum(s["chars"] for s in plain) / 2
    # Write costs are still recorded per session, against the transcript the gate replaced.
    assert cell.snapshots.column("transcript_tokens") == recorded.snapshots.column(
        "transcript_tokens"
    )


def test_summary_gate_shrinks_what_full_context_stores(world: Path):
    hard = _cell(world, "full_context").snapshots.to_pylist()
    summary = _cell(world, "full_context", "summary:24").snapshots.to_pylist()
    for replicate in range(_support.REPLICATES):
        last_hard = [r for r in hard if r["replicate"] == replicate][-1]["storage_tokens"]
        last_summary = [r for r in summary if r["replicate"] == replicate][-1]["storage_tokens"]
        assert 0 < last_summary < last_hard
        assert last_summary <= _support.SESSIONS * (24 + 40)  # N tokens a session, plus framing


# Adapters to memory services and servers need a service (or a server named in their options):
# tests/adapters runs each one under the gate against its loopback server.
OFFLINE_BACKENDS = [
    name
    for name in backend_names()
    if not backend_registration(name).target_path.startswith("drift_pipeline.adapters.")
]


@pytest.mark.parametrize("backend", OFFLINE_BACKENDS)
def test_every_built_in_backend_runs_through_the_loop_without_faults(world: Path, backend: str):
    cell = _cell(world, backend)
    assert cell.faults == []
    assert cell.snapshots.num_rows == _support.SESSIONS * _support.REPLICATES
    assert cell.retrievals.num_rows == len(_table(world, PROBES))
    for row in cell.retrievals.to_pylist():
        assert row["read_tokens"] == count_tokens_lines(row["context"])


def test_a_failure_counting_transcript_tokens_is_raised_as_itself(
    world: Path, monkeypatch: pytest.MonkeyPatch
):
    # Tokens are counted while the workers start; a failure there is still the run's one error.
    from drift_pipeline.memory import _loop

    def broken(_transcripts: object) -> None:
        raise ValueError("cannot count")

    monkeypatch.setattr(_loop, "transcript_tokens", broken)
    with worker_temp() as temp:
        monkeypatch.setattr(tempfile, "tempdir", str(temp))
        with pytest.raises(ValueError, match="cannot count"):
            _cell(world, "amnesiac")
        # The sibling replicate, cancelled while it closed its worker, removed its folder too.
        assert not list(temp.iterdir())


def test_a_cell_names_every_service_version_its_replicates_ran_against() -> None:
    from drift_pipeline.memory._loop import merged_service

    same = {"service": "zep", "version": "1.2"}
    assert merged_service([same, dict(same), {}]) == same
    upgraded = merged_service([same, {"service": "zep", "version": "1.3", "sdk": "zep-cloud 3"}])
    assert upgraded == {"service": "zep", "version": "1.2 | 1.3", "sdk": "zep-cloud 3"}
