"""Latent facts, validity intervals and soft signals, checked against the stored tables."""

from __future__ import annotations

import itertools
from collections import defaultdict

from helpers import Worlds, replay_current

from drift_pipeline.scenario import checkpoints_for


def _truth(worlds: Worlds, scenario: str, horizon: str, replicate: int) -> list[dict]:
    return worlds.query(
        "select * from {ground_truth} where scenario = ? and horizon = ? and replicate = ? "
        "order by checkpoint, fact_id",
        scenario,
        horizon,
        replicate,
    )


def test_facts_have_validity_intervals(worlds: Worlds):
    rows = worlds.query("select * from {ground_truth}")
    assert rows
    for row in rows:
        assert row["valid_from"] < row["checkpoint"], row
        if row["valid_to"] is not None:
            assert row["valid_from"] < row["valid_to"] < row["checkpoint"], row
        if row["tier"] == "initial":
            assert row["valid_from"] == -1 and row["source_session"] is None, row
        else:
            assert row["source_session"] == row["valid_from"] >= 0, row
            assert row["event_id"] is not None
            assert row["source_session"] in row["evidence_sessions"], row


def test_current_facts_are_exactly_the_valid_ones(worlds: Worlds):
    rows = worlds.query("select * from {ground_truth}")
    for row in rows:
        valid = row["valid_from"] < row["checkpoint"] and (
            row["valid_to"] is None or row["valid_to"] >= row["checkpoint"]
        )
        assert row["current"] == valid, row
        # Closed facts are kept (revision probes need them), marked as not current.
        assert row["current"] == (row["valid_to"] is None), row


def test_functional_slots_hold_at_most_one_current_fact(worlds: Worlds):
    rows = worlds.query(
        "select scenario, horizon, replicate, checkpoint, subject, slot, count(*) as n "
        "from {ground_truth} where current and slot_kind = 'functional' group by all "
        "having count(*) > 1"
    )
    assert rows == []
    # The latent initial employer and city are always there (a value to be replaced).
    initial = worlds.query(
        "select count(*) as n from {ground_truth} where tier = 'initial' "
        "and slot in ('employer', 'city')"
    )
    assert initial[0]["n"] > 0


def test_current_facts_equal_the_replayed_schedule(worlds: Worlds):
    """Ground truth at each checkpoint = latent initial state + schedule events, replayed."""
    checked = 0
    for scenario, horizon, replicate in worlds.worlds():
        snapshots = replay_current(worlds, scenario, horizon, replicate)
        by_checkpoint: dict[int, set[tuple[str, str, str]]] = defaultdict(set)
        for row in _truth(worlds, scenario, horizon, replicate):
            if row["current"]:
                by_checkpoint[row["checkpoint"]].add((row["subject"], row["slot"], row["value"]))
        spec = worlds.scenarios[scenario].spec
        for checkpoint in checkpoints_for(spec, horizon):
            after = checkpoint.after_session
            assert by_checkpoint[after] == snapshots[after], (scenario, horizon, replicate, after)
            checked += 1
    assert checked > 10


def test_closed_facts_are_followed_by_their_replacement(worlds: Worlds):
    for scenario, horizon, replicate in worlds.worlds():
        rows = _truth(worlds, scenario, horizon, replicate)
        last = max(row["checkpoint"] for row in rows)
        final = [row for row in rows if row["checkpoint"] == last]
        by_slot: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for row in final:
            by_slot[(row["subject"], row["slot"])].append(row)
        for facts in by_slot.values():
            if facts[0]["slot_kind"] != "functional":
                assert all(fact["valid_to"] is None for fact in facts)
                continue
            facts.sort(key=lambda fact: fact["valid_from"])
            for older, newer in itertools.pairwise(facts):
                assert older["valid_to"] == newer["valid_from"]
            assert facts[-1]["current"]


def test_facts_accumulate_across_checkpoints(worlds: Worlds):
    for scenario, horizon, replicate in worlds.worlds():
        ids: dict[int, set[str]] = defaultdict(set)
        for row in _truth(worlds, scenario, horizon, replicate):
            ids[row["checkpoint"]].add(row["fact_id"])
        ordered = [ids[c] for c in sorted(ids)]
        for earlier, later in itertools.pairwise(ordered):
            assert earlier <= later


def test_every_event_that_enters_ground_truth_is_one_fact(worlds: Worlds):
    for scenario, horizon, replicate in worlds.worlds():
        events = worlds.query(
            "select event_id, session_index, subject, slot, value, tier from {event_schedules} "
            "where scenario = ? and horizon = ? and replicate = ? and enters_ground_truth",
            scenario,
            horizon,
            replicate,
        )
        rows = _truth(worlds, scenario, horizon, replicate)
        last = max(row["checkpoint"] for row in rows)
        facts = {
            row["event_id"]: row for row in rows if row["checkpoint"] == last and row["event_id"]
        }
        before_last = [e for e in events if e["session_index"] < last]
        assert {e["event_id"] for e in before_last} == set(facts)
        for event in before_last:
            fact = facts[event["event_id"]]
            assert (fact["subject"], fact["slot"], fact["value"], fact["tier"]) == (
                event["subject"],
                event["slot"],
                event["value"],
                event["tier"],
            )
            assert fact["valid_from"] == event["session_index"]


# --- soft signals ----------------------------------------------------------------------------


def test_soft_preference_enters_ground_truth_only_at_its_kth_mention(worlds: Worlds):
    entered = 0
    pending_seen = 0
    for scenario, horizon, replicate in worlds.worlds():
        k = worlds.scenarios[scenario].spec.soft_signal_mentions
        events = worlds.query(
            "select event_id, session_index, subject, slot, value, mention, enters_ground_truth "
            "from {event_schedules} where scenario = ? and horizon = ? and replicate = ? "
            "and tier = 'soft' order by session_index",
            scenario,
            horizon,
            replicate,
        )
        mentions: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        established: dict[str, list[int]] = {}
        for event in events:
            key = (event["subject"], event["slot"], event["value"])
            mentions[key].append(event["session_index"])
            assert event["mention"] == len(mentions[key]), event
            assert event["enters_ground_truth"] == (event["mention"] == k), event
            if event["enters_ground_truth"]:
                established[event["event_id"]] = mentions.pop(key)
        pending_seen += sum(1 for sessions in mentions.values() if sessions)
        rows = _truth(worlds, scenario, horizon, replicate)
        soft_facts = [row for row in rows if row["tier"] == "soft"]
        for fact in soft_facts:
            sessions = established[fact["event_id"]]
            assert len(sessions) == k
            assert fact["valid_from"] == sessions[-1]
            assert list(fact["evidence_sessions"]) == sessions
            entered += 1
        # At each checkpoint the soft facts are exactly the values whose k-th mention came
        # before it: fewer mentions by then, and the value is not ground truth there.
        soft_at: dict[int, set[str]] = defaultdict(set)
        for row in soft_facts:
            soft_at[row["checkpoint"]].add(row["event_id"])
        for checkpoint in {row["checkpoint"] for row in rows}:
            expected = {e for e, sessions in established.items() if sessions[-1] < checkpoint}
            assert soft_at[checkpoint] == expected, (scenario, horizon, replicate, checkpoint)
    assert entered > 0
    assert pending_seen > 0  # some preferences were still accumulating: the rule was exercised


def test_soft_mentions_with_k_of_two_and_four(worlds: Worlds):
    ks = {
        row["scenario"]: row["k"]
        for row in worlds.query(
            "select scenario, max(mention) as k from {event_schedules} where tier = 'soft' "
            "group by scenario"
        )
    }
    assert ks == {"test-commuter-a": 3, "test-two-desks-b": 2, "test-habit-loop-c": 4}
