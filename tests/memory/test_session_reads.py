"""The agent reads memory in every session (spec §5.1 step 4), measured for every arm.

One long world (the smallest long horizon that has several sessions per replicate) is run twice:
with the default policy (a read at each session start) and with a read before every user turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import write_scenario

from drift_pipeline.memory import Arm, LoopConfig
from drift_pipeline.memory._session_reads import read_requests
from drift_pipeline.pipeline import RunOptions, RunResult, connect, run_benchmark
from drift_pipeline.sources import ScenarioSource

SCENARIO = """\
id: reads-t
seed: 4242
replicates: 2
probes_per_checkpoint: 8
paradigm: user_assistant
horizon:
  long: {{ sessions: 10, session_gap_days: 20 }}
noise_ratio: 0.5
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.5, C: 0.6, E: 0.4, A: 0.5, N: 0.4 }}
  - id: helper
    type: assistant_agent
    capability_profile: {{ context_window: 3000 }}
checkpoints:
  - {{ every: 5, probe_types: [recall, action, revision] }}
{policy}"""

ARMS = [Arm.parse("amnesiac@hard"), Arm.parse("bm25@hard"), Arm.parse("full_context@hard")]
ALL_ARMS = {*(arm.key for arm in ARMS), "reference_compressor@hard"}


def _run(folder: Path, policy: str) -> RunResult:
    path = write_scenario(folder, SCENARIO.format(policy=policy))
    return run_benchmark([ScenarioSource.load(path)], RunOptions(arms=ARMS, out=folder / "data"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[RunResult, Path]]:
    out = {}
    for policy, line in (("session_start", ""), ("user_turn", "memory_reads: user_turn\n")):
        folder = tmp_path_factory.mktemp(policy)
        out[policy] = (_run(folder, line), folder / "data")
    return out


def _query(root: Path, sql: str) -> list[dict[str, Any]]:
    con = connect(root)
    try:
        relation = con.sql(sql)
        return relation.to_arrow_table().to_pylist()  # type: ignore[no-any-return]
    finally:
        con.close()


def _metric(root: Path, arm: str, metric: str) -> dict[str, Any]:
    """One whole-cell row of ``cell_metrics`` (every arm's, the reference compressor's too)."""
    rows = _query(
        root,
        f"select value, n from cell_metrics where arm = '{arm}' and metric = '{metric}' "
        "and checkpoint = 'all'",
    )
    assert len(rows) == 1, (arm, metric, rows)
    return rows[0]


def test_every_session_of_every_arm_records_its_read(
    runs: dict[str, tuple[RunResult, Path]],
) -> None:
    _, root = runs["session_start"]
    sessions = _query(
        root, "select arm, replicate, session_index, session_reads from memory_snapshots"
    )
    assert {row["arm"] for row in sessions} == ALL_ARMS
    assert len(sessions) == len(ALL_ARMS) * 2 * 10
    assert all(row["session_reads"] == 1 for row in sessions)
    # The view: one row per read, with how much memory there was to read.
    reads = _query(
        root,
        "select arm, replicate, session_index, sessions_stored, storage_tokens_before, "
        "read_index, read_ms, read_round_trip_ms, read_tokens, error from session_reads",
    )
    assert len(reads) == len(sessions)
    for row in reads:
        assert row["error"] is None and row["read_index"] == 0
        assert row["sessions_stored"] == row["session_index"]
        # (The harness's wait for a read's reply can be shorter than the read: the worker
        # answers it while the harness is still handling the call before.)
        assert row["read_ms"] >= 0 and row["read_round_trip_ms"] >= 0
        assert row["read_tokens"] >= 0
        if row["session_index"] == 0:
            assert row["read_tokens"] == 0 and row["storage_tokens_before"] is None
    by_arm: dict[str, list[int]] = {}
    for row in sorted(reads, key=lambda r: (r["replicate"], r["session_index"])):
        by_arm.setdefault(row["arm"], []).append(row["read_tokens"])
    assert set(by_arm["amnesiac@hard"]) == {0}  # it stores nothing, so it returns nothing
    # A keep-everything memory hands back more as it grows (up to the asker's window).
    full = by_arm["full_context@hard"][:10]
    assert full[1] > 0 and full[-1] >= full[1]
    for arm in ALL_ARMS:
        assert _metric(root, arm, "q_rate")["value"] == 1.0
        # Read latency pools the probes' retrieves and the reads before sessions.
        retrieves = _metric(root, arm, "read_tokens_per_retrieve")["n"]
        assert _metric(root, arm, "read_ms_p99")["n"] == retrieves + 20
        assert _metric(root, arm, "session_read_tokens_per_read")["n"] == 20


def test_q_rate_is_user_turns_per_session_when_the_agent_reads_before_every_turn(
    runs: dict[str, tuple[RunResult, Path]],
) -> None:
    _, root = runs["user_turn"]
    turns = _query(
        root,
        "select replicate, session_index, count(*) as users from transcripts "
        "where role = 'user' group by all",
    )
    per_session = {(r["replicate"], r["session_index"]): r["users"] for r in turns}
    assert max(per_session.values()) > 1  # the policy makes a difference on this world
    sessions = _query(
        root, "select arm, replicate, session_index, session_reads from memory_snapshots"
    )
    for row in sessions:
        assert row["session_reads"] == per_session.get((row["replicate"], row["session_index"]), 0)
    expected = (
        sum(
            sum(n for (r, _), n in per_session.items() if r == replicate) / 10
            for replicate in (0, 1)
        )
        / 2
    )
    for arm in ALL_ARMS:
        assert _metric(root, arm, "q_rate")["value"] == pytest.approx(expected)


def test_reads_before_sessions_change_no_probe_answer(
    runs: dict[str, tuple[RunResult, Path]],
) -> None:
    columns = "arm, replicate, probe_id, answer, correct"
    first, second = (
        _query(root, f"select {columns} from probe_answers order by all")
        for _, root in runs.values()
    )
    assert first and first == second
    contexts = "select arm, replicate, probe_id, context from retrievals order by all"
    assert _query(runs["session_start"][1], contexts) == _query(runs["user_turn"][1], contexts)


def test_the_opening_user_message_is_the_query_of_the_agent_of_the_session() -> None:
    messages: list[Any] = [
        {
            "speaker": "principal",
            "role": "user",
            "content": "hi, I moved to Porto",
            "timestamp": "",
        },
        {"speaker": "helper", "role": "assistant", "content": "noted", "timestamp": ""},
        {"speaker": "principal", "role": "user", "content": "and I cook vegan", "timestamp": ""},
    ]
    start = read_requests("s1", messages, "session_start")
    assert start == [
        {
            "op": "retrieve",
            "session_id": "s1",
            "entity_id": "helper",
            "query": "hi, I moved to Porto",
        }
    ]
    turns = read_requests("s1", messages, "user_turn")
    assert [r["query"] for r in turns] == ["hi, I moved to Porto", "and I cook vegan"]
    assert read_requests("s2", [], "user_turn") == []
    assert read_requests("s2", [], "session_start")[0]["query"] == ""
    no_user = read_requests("s3", messages[1:2], "session_start")
    assert [(r["entity_id"], r["query"]) for r in no_user] == [("helper", "noted")]
    with pytest.raises(ValueError, match="memory read policy 'often': expected one of"):
        LoopConfig(reads="often")
