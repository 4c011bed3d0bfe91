"""Who is speaking, and when: ``store`` told whose memory, asynchronous ingestion waited for.

The backends are written here into a folder outside the repository, as a user's adapter would
be. The world has two assistants in every session, so each session goes into two memories.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_scenario

from drift_pipeline.cli import main
from drift_pipeline.memory import Arm, CellRun, Gate, LoopConfig, run_cell
from drift_pipeline.memory._honesty import SnapshotIndex
from drift_pipeline.scenario import load_scenario
from drift_pipeline.tokens import count_tokens_lines
from drift_pipeline.world import generate_worlds

from .plugins import _support

SCENARIO = """\
id: entity-t
paradigm: user_assistant
seed: 31
replicates: 2
horizon:
  short: { sessions: 8, session_gap_hours: 30 }
noise_ratio: 0.4
entities:
  - id: principal
    type: human
    profile:
      big_five: { O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }
  - id: work_assistant
    type: assistant_agent
    capability_profile: { context_window: 32000 }
  - id: home_assistant
    type: assistant_agent
    capability_profile: { context_window: 32000 }
topology:
  - { session_range: [0, -1], active: [principal, work_assistant, home_assistant], pattern: linear }
checkpoints:
  - { after_session: 4, probe_types: [recall] }
  - { after_session: 8, probe_types: [recall] }
"""

LIBRARY = '''\
import asyncio
import time

from drift_pipeline.memory import TokenCounts


class PerAgent:
    """One memory per agent; what a store keeps is found only after a background step."""

    delay = 0.05
    version = "0.3"

    def __init__(self, api_key="none", never_ready=False, hang=False):
        self.memories = {}
        self.pending = {}
        self.log = []
        self.api_key = api_key
        self.never_ready = never_ready
        self.hang = hang

    async def store(self, session_id, messages, *, entity_id):
        self.log.append(f"store {session_id} {entity_id}")
        self.pending.setdefault(entity_id, []).extend(m["content"] for m in messages)

    async def wait_until_queryable(self, session_id):
        if self.hang:
            await asyncio.sleep(3600)
        await asyncio.sleep(self.delay)  # the service's background processing
        if self.never_ready:
            raise TimeoutError(f"{session_id} still processing after 30 polls")
        for entity, texts in self.pending.items():
            self.memories.setdefault(entity, []).extend(texts)
        self.pending = {}
        self.log.append(f"queryable {session_id}")

    async def retrieve(self, session_id, entity_id, query):
        return "\\n".join([f"memory of {entity_id}", *self.memories.get(entity_id, [])[-3:]])

    def snapshot(self):
        return "\\n".join(self.log)

    def token_counts(self):
        return TokenCounts()

    def service_info(self):
        return {"service": "per-agent-memory", "service_version": "unknown", "sdk": "none",
                "sdk_version": self.version, "endpoint": f"https://memory.example/{self.api_key}"}
'''

ARM = "entity_library:PerAgent"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("entity")
    generate_worlds([load_scenario(write_scenario(base / "scenarios", SCENARIO))], base / "data")
    with _support.outside_module("entity_library", LIBRARY):
        yield base / "data"


def _cell(world: Path, timeout: float = 20.0, limit: int = 5, **options: object) -> CellRun:
    config = LoopConfig(
        call_timeout=timeout, protect=(world,), max_fault_rate=1.0, max_consecutive_faults=limit
    )
    return run_cell(
        world, "entity-t", "short", 2, Arm(ARM, Gate("hard")), options=dict(options), config=config
    )


def test_each_session_is_stored_into_each_agents_memory_then_waited_for(world: Path):
    cell = _cell(world, api_key="sk-secret-123456")
    assert cell.faults == []
    rows = cell.snapshots.to_pylist()
    last = next(r for r in rows if r["replicate"] == 0 and r["session_index"] == 7)
    log = last["snapshot"].splitlines()
    expected = []
    for index in range(8):
        session = f"short-r0-s{index:05d}"
        # The agents in the order they first speak in it: the session's own transcript decides.
        agents = [line.split()[2] for line in log if line.startswith(f"store {session} ")]
        assert sorted(agents) == ["home_assistant", "work_assistant"]
        expected += [f"store {session} {agent}" for agent in agents]
        expected.append(f"queryable {session}")
    assert log == expected
    # Each store's wait is measured apart from the store itself, and summarised for the cell.
    for row in rows:
        assert row["queryable_ms"] >= 50.0
        assert row["write_ms"] < row["queryable_ms"]
    figures = cell.time_to_queryable
    assert figures is not None and figures["sessions"] == len(rows)
    assert 50.0 <= figures["p50"] <= figures["p95"] <= figures["max"]
    # Scoped by agent: each asks its own memory, which holds what it took part in.
    assert all(r["context"] for r in cell.retrievals.to_pylist())
    # What it runs against is kept with the cell, with the key it was given taken out.
    assert cell.service == {
        "service": "per-agent-memory",
        "service_version": "unknown",
        "sdk": "none",
        "sdk_version": "0.3",
        "endpoint": "https://memory.example/[redacted]",
    }


def test_a_store_that_never_becomes_queryable_is_a_fault_naming_the_wait(world: Path):
    cell = _cell(world, never_ready=True)
    errors = [r["error"] for r in cell.snapshots.to_pylist()]
    assert all(errors)
    assert errors[0].startswith(
        "NeverQueryable: wait_until_queryable(): TimeoutError: short-r0-s00000 still processing"
    )
    assert "/entity_library.py:" in errors[0]
    assert cell.time_to_queryable is None
    assert cell.snapshots.column("queryable_ms").null_count == cell.snapshots.num_rows


def test_a_wait_that_outlasts_the_call_timeout_is_cancelled_and_named(world: Path):
    # One timed-out wait per replicate is enough to read its error; the rest are skipped.
    cell = _cell(world, timeout=1.0, limit=1, hang=True)
    errors = [r["error"] for r in cell.snapshots.to_pylist() if not r["error"].startswith("skip")]
    waited = "timeout after 0.9s while waiting until queryable; cancelled in the worker"
    assert len(errors) == 2 and waited in errors


def test_the_run_reports_time_to_queryable_and_the_service(world: Path, tmp_path: Path):
    scenario = write_scenario(tmp_path / "scenarios", SCENARIO)
    out = tmp_path / "data"
    result = CliRunner().invoke(
        main, ["run", str(scenario), "--backend", ARM, "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("time to queryable after each store (asynchronous ingestion, waited for):")
    line = lines[start + 1]
    assert line.startswith(f"  {ARM}@hard on entity-t/short: p50 ")
    assert line.endswith(" over 16 sessions (column queryable_ms of memory_snapshots)")
    manifest = json.loads((out / "_manifests" / "run.json").read_text(encoding="utf-8"))
    assert manifest["services"][ARM]["service"] == "per-agent-memory"
    assert manifest["simulated_clock"] is True


@pytest.mark.parametrize("backend", ["full_context", "bm25"])
def test_askers_taking_turns_get_their_reads_and_storage_counted_exactly(
    world: Path, backend: str
) -> None:
    # Each agent's memory answers its own probes and grows apart from the other's: the read
    # counts follow each asker's answers, the storage count the joined snapshot of both.
    config = LoopConfig(call_timeout=20.0, protect=(world,))
    cell = run_cell(world, "entity-t", "short", 2, Arm(backend, Gate("hard")), config=config)
    assert cell.faults == []
    reads = cell.retrievals.to_pylist()
    askers = [r["asker"] for r in reads]
    assert len(set(askers)) == 2
    assert any(a != b for a, b in itertools.pairwise(askers))  # they take turns
    for row in reads:
        assert row["read_tokens"] == count_tokens_lines(row["context"])
        assert row["unreported"] is None and row["error"] is None
    for row in cell.snapshots.to_pylist():
        assert row["error"] is None  # the reported count matched the harness's recount
        if row["snapshot"] is not None:
            assert row["storage_tokens"] == count_tokens_lines(row["snapshot"])


def test_each_askers_unreported_lines_are_those_of_its_own_answer(world: Path) -> None:
    # This library's snapshot is its call log, so every answer holds lines it does not account
    # for, the first naming the asker; askers take turns and each one's memory answers alike
    # until the next store, so the check of an asker's repeated answer is reused: it must still
    # name that answer's own line.
    cell = _cell(world)
    assert cell.faults == []
    snapshots = {
        (r["replicate"], r["session_index"]): r["snapshot"] for r in cell.snapshots.to_pylist()
    }
    reads = cell.retrievals.to_pylist()
    assert any(a["asker"] != b["asker"] for a, b in itertools.pairwise(reads))
    named = 0
    for row in reads:
        expected = SnapshotIndex(snapshots[row["replicate"], row["checkpoint"] - 1])
        assert row["unreported"] == expected.unreported(row["context"])
        named += row["unreported"] is not None
    assert named == len(reads)
