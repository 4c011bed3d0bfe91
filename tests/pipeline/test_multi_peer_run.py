"""A multi-peer world through the whole harness: scopes, Privacy, the multi-peer figures.

The world is written here (two teams that never meet, and a newcomer that joins the first team
after the first checkpoint), run once through every arm the checks need, and read back from
the run's tables. The leaky backend of the last arm is written into the test's own folder, as a
user's would be, and handed over as an object.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from drift_pipeline import DriftHarness, DriftReport
from drift_pipeline.memory import Arm, run_cell

SCENARIO = """\
id: peer-run-t
paradigm: multi_peer
seed: 2718
replicates: 2
horizon:
  short: { sessions: 64, session_gap_hours: 6 }
noise_ratio: 0.5
entities:
  - { id: ana, type: human }
  - { id: ben, type: human }
  - { id: desk, type: assistant_agent, name: Desk }
  - { id: bench, type: assistant_agent, name: Bench }
  - { id: late, type: assistant_agent, name: Late }
topology:
  - { session_range: [0, -1], active: [ana, desk], pattern: linear }
  - { session_range: [0, -1], every: 2, offset: 1, active: [ben, bench], pattern: mesh }
  - { session_range: [18, -1], every: 4, active: [ana, desk, late], pattern: broadcast }
checkpoints:
  - { every: 16, probe_types: [recall, revision, canary, consistency, attribution, handoff] }
"""

# One global log for every entity: what any entity was told, any other can read.
LEAKY = '''\
from drift_pipeline import Message, TokenCounts


class GlobalLog:
    """Every turn in one list; a question from anyone gets the lines sharing a word with it."""

    name = "global_log"

    def __init__(self):
        self.lines = []

    async def store(self, session_id, messages):
        self.lines.extend(f"{m['speaker']}: {m['content']}" for m in messages)

    async def retrieve(self, session_id, entity_id, query):
        words = {w.strip("?.,'").lower() for w in query.split() if len(w) > 3}
        hits = [line for line in self.lines if words & set(line.lower().split())]
        return "\\n".join(hits[-40:])

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return "\\n".join(self.lines)
'''

# Records which memory each session is stored into: its speaking agents and attending askers.
RECORDER = '''\
from drift_pipeline import TokenCounts


class WhoseMemory:
    """Logs (session, entity) of every store; answers nothing."""

    name = "whose_memory"
    keeps_nothing = True  # what it answers: nothing, on purpose

    def __init__(self):
        self.log = []

    async def store(self, session_id, messages, *, entity_id):
        self.log.append(f"{session_id} {entity_id}")

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return "\\n".join(self.log)
'''

ARMS = [
    "amnesiac",
    "bm25",
    "fact_store",
    "full_context",
    "reference_compressor",
    "temporal_graph",
    "sentence_log",
    "leaky_shared",
]


def _outside(folder: Path, name: str, source: str, cls: str) -> Any:
    """Import a module written into ``folder`` (outside the repository) and build ``cls``."""
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, cls)()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[DriftReport, Path]:
    base = tmp_path_factory.mktemp("peer-run")
    scenario = base / "peer-run-t.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    outside = [
        _outside(base, "user_leaky_memory", LEAKY, "GlobalLog"),
        _outside(base, "user_recorder", RECORDER, "WhoseMemory"),
    ]
    try:
        # The global log leaks on purpose: the run accepts it (as `--allow-leak` does) so that
        # Privacy, not the check before the run, is what catches it here.
        report = DriftHarness(
            backend=[*ARMS, *outside],
            scenario_path=scenario,
            out=base / "data",
            allow_leaks=("global_log",),
        ).run_sync()
    finally:
        sys.modules.pop("user_leaky_memory", None)
        sys.modules.pop("user_recorder", None)
    return report, base / "data"


def _figure(report: DriftReport, arm: str, metric: str) -> float:
    cell = next(c for c in report.to_dict()["cells"] if c["arm"] == f"{arm}@hard")
    value = cell["metrics"][metric]["value"]
    return math.inf if value == "inf" else float(value)


def test_scoped_built_ins_keep_every_canary_and_the_leaky_ones_do_not(
    run: tuple[DriftReport, Path],
) -> None:
    report, _ = run
    for arm in ARMS[:-1]:
        assert _figure(report, arm, "privacy") == 1.0, arm
    # The built-in reference and a leaky memory written elsewhere are both caught: the one by
    # its canaries, the other by the check the run allowed it through, which marks its row and
    # leaves its Privacy not measured (its canaries' leaks are still listed).
    assert _figure(report, "leaky_shared", "privacy") < 0.8
    arms = {row["arm"]: row for row in report.to_dict()["arms"]}
    leaker = arms["global_log@hard"]
    assert leaker["leak_allowed"].startswith("it leaks across entities")
    assert leaker["privacy"] is None and "privacy" in leaker["not_measured"]
    leaks = leaker["leaks"]
    assert leaks and all(leak["asker"] and leak["recalled"] for leak in leaks)
    assert not arms["bm25@hard"]["leaks"]
    # The reference shows Privacy only and is never ranked; every other arm is.
    reference = arms["leaky_shared@hard"]
    assert reference["ranked"] is False and reference["rank"] is None
    assert reference["drift_c"] is None and reference["privacy"]["value"] < 0.8
    assert arms["bm25@hard"]["rank"] is not None
    board = report.leaderboard()
    assert "leaky_shared@hard (reference, not ranked)" in board
    assert "leaked canaries: global_log@hard:" in board
    assert "global_log@hard [leaks across entities, allowed]" in board
    assert "Privacy" in board.splitlines()[0]


def test_keeping_nothing_scores_privacy_perfectly_and_ranks_last(
    run: tuple[DriftReport, Path],
) -> None:
    report, _ = run
    # The cheapest perfect Privacy: the amnesiac keeps nothing, so it can leak nothing...
    assert _figure(report, "amnesiac", "privacy") == 1.0
    # ...and the board, ranked by DRIFT-C, puts it below every scoped memory that remembers.
    ranked = [row["arm"] for row in report.to_dict()["arms"] if row["rank"] is not None]
    for arm in ("bm25", "fact_store", "reference_compressor", "temporal_graph"):
        assert ranked.index(f"{arm}@hard") < ranked.index("amnesiac@hard"), arm
    # Privacy is never shown without what it cost: the note names the amnesiac's DRIFT-C.
    drift_c = _figure(report, "amnesiac", "drift_c")
    assert f"amnesiac@hard: Privacy 1.000 at DRIFT-C {drift_c:.3f}" in report.leaderboard()


def test_consistency_and_attribution_tell_a_memory_per_entity_from_a_global_one(
    run: tuple[DriftReport, Path],
) -> None:
    report, _ = run
    # The same lexical memory, once per entity and once for everyone: only scope differs.
    for metric in ("consistency", "attribution"):
        scoped = _figure(report, "bm25", metric)
        shared = _figure(report, "leaky_shared", metric)
        assert scoped >= shared + 0.1, (metric, scoped, shared)
    assert _figure(report, "amnesiac", "consistency") == 0.0


def test_hand_over_is_finite_for_the_compressor_and_infinite_for_the_amnesiac(
    run: tuple[DriftReport, Path],
) -> None:
    report, _ = run
    assert math.isfinite(_figure(report, "reference_compressor", "handoff_sessions"))
    assert _figure(report, "amnesiac", "handoff_sessions") == math.inf
    cell = next(c for c in report.to_dict()["cells"] if c["arm"] == "amnesiac@hard")
    assert cell["metrics"]["handoff_sessions"]["value"] == "inf"  # reported as such


def _rows(sql: str) -> list[tuple[Any, ...]]:
    return duckdb.execute(sql).fetchall()


def test_each_session_goes_into_the_memory_of_its_agents_and_asked_attendees_only(
    run: tuple[DriftReport, Path],
) -> None:
    _, data = run
    stored = _rows(
        f"""
        select replicate, snapshot from read_parquet(
            '{data}/memory_snapshots/**/*.parquet', hive_partitioning=true)
        where arm = 'whose_memory@hard' and snapshot is not null
        qualify session_index = max(session_index) over (partition by replicate)
        """
    )
    schedule = _rows(
        f"""
        select replicate, session_id, session_index, participants from read_parquet(
            '{data}/event_schedules/**/*.parquet', hive_partitioning=true)
        """
    )
    agents = {
        (replicate, index, speaker)
        for replicate, index, speaker in _rows(
            f"select distinct replicate, session_index, speaker from read_parquet("
            f"'{data}/transcripts/**/*.parquet', hive_partitioning=true) "
            "where role = 'assistant'"
        )
    }
    askers = set(
        _rows(
            f"select distinct replicate, asker from read_parquet("
            f"'{data}/probes/**/*.parquet', hive_partitioning=true)"
        )
    )
    for replicate, snapshot in stored:
        logged = sorted(tuple(line.split(" ")) for line in snapshot.splitlines())
        expected = sorted(
            (session_id, entity)
            for rep, session_id, index, participants in schedule
            if rep == replicate
            for entity in participants
            if (replicate, entity) in askers or (replicate, index, entity) in agents
        )
        # Never an entity absent from the session; every asked attendee and speaking agent.
        assert logged == expected


def test_a_soft_gate_buffer_holds_only_the_asker_s_own_sessions(
    run: tuple[DriftReport, Path],
) -> None:
    _, data = run
    # The amnesiac keeps nothing: whatever a context holds comes from the soft-gate buffer.
    cell = run_cell(data, "peer-run-t", "short", 2, Arm.parse("amnesiac@soft:6"))
    probes = _rows(
        f"select replicate, probe_id, probe_type, answer from read_parquet("
        f"'{data}/probes/**/*.parquet', hive_partitioning=true)"
    )
    kind = {(r, p): (t, a) for r, p, t, a in probes}
    contexts = cell.retrievals.select(["replicate", "probe_id", "context"]).to_pylist()
    canaries = [row for row in contexts if kind[(row["replicate"], row["probe_id"])][0] == "canary"]
    # The buffer is there (an entity that attended nothing yet has none)...
    assert canaries and sum(bool(row["context"]) for row in contexts) > len(contexts) / 2
    # ...and never holds a session the asker was absent from.
    for row in canaries:
        assert kind[(row["replicate"], row["probe_id"])][1] not in row["context"]
