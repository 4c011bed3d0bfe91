"""End-to-end world generation on scenarios that are not in the repository."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from helpers import TEST_SCENARIOS, Worlds, write_scenario

from drift_pipeline.scenario import checkpoints_for, load_scenario, parse_scenario_text, root_seed
from drift_pipeline.world._events import SIM_EPOCH


def test_test_scenarios_validate(tmp_path):
    for scenario_id, text in TEST_SCENARIOS.items():
        loaded = load_scenario(write_scenario(tmp_path, text))
        assert loaded.spec.id == scenario_id
        assert loaded.spec.paradigm == "user_assistant"


def test_every_declared_horizon_is_generated(worlds: Worlds):
    generated = {(s.scenario, s.horizon) for s in worlds.summaries}
    declared = {
        (scenario_id, name)
        for scenario_id, loaded in worlds.scenarios.items()
        for name, _ in loaded.spec.horizon.items()
    }
    assert generated == declared
    assert len(declared) == 4


def test_schedule_has_sessions_times_replicates_rows(worlds: Worlds):
    counts = {
        (row["scenario"], row["horizon"]): row
        for row in worlds.query(
            "select scenario, horizon, count(*) as n, count(distinct replicate) as reps, "
            "count(distinct (replicate, session_index)) as distinct_sessions "
            "from {event_schedules} group by all"
        )
    }
    expected = {
        (scenario_id, name): (horizon.sessions, loaded.spec.replicates)
        for scenario_id, loaded in worlds.scenarios.items()
        for name, horizon in loaded.spec.horizon.items()
    }
    assert set(counts) == set(expected)
    for key, (sessions, replicates) in expected.items():
        assert counts[key]["n"] == sessions * replicates, key
        assert counts[key]["reps"] == replicates, key
        assert counts[key]["distinct_sessions"] == sessions * replicates, key


def test_session_indices_and_times_follow_the_horizon(worlds: Worlds):
    for scenario_id, loaded in worlds.scenarios.items():
        for name, horizon in loaded.spec.horizon.items():
            rows = worlds.query(
                "select replicate, session_index, sim_time, session_id from {event_schedules} "
                "where scenario = ? and horizon = ? order by replicate, session_index",
                scenario_id,
                name,
            )
            by_replicate = defaultdict(list)
            for row in rows:
                by_replicate[row["replicate"]].append(row)
            for replicate, sessions in by_replicate.items():
                assert [r["session_index"] for r in sessions] == list(range(horizon.sessions))
                for row in sessions:
                    assert row["sim_time"] == SIM_EPOCH + horizon.gap * row["session_index"]
                    # Session ids are opaque: they carry no tier or event.
                    assert row["session_id"] == (f"{name}-r{replicate}-s{row['session_index']:05d}")


def test_realised_noise_share_is_the_scenarios(worlds: Worlds):
    rows = worlds.query(
        "select scenario, horizon, replicate, avg((tier = 'noise')::int) as noise, "
        "avg((tier = 'signal')::int) as signal, avg((tier = 'soft')::int) as soft "
        "from {event_schedules} group by all"
    )
    assert len(rows) == sum(
        loaded.spec.replicates * len(loaded.spec.horizon.items())
        for loaded in worlds.scenarios.values()
    )
    for row in rows:
        signal, soft, noise = worlds.scenarios[row["scenario"]].spec.tier_ratios()
        assert abs(row["noise"] - noise) <= 0.05, row
        assert abs(row["signal"] - signal) <= 0.05, row
        assert abs(row["soft"] - soft) <= 0.05, row


def test_tiers_match_the_events_they_carry(worlds: Worlds):
    rows = worlds.query(
        "select tier, event_id is not null as has_event, count(*) as n, "
        "count(distinct coalesce(op, '-')) as ops, min(op) as op from {event_schedules} "
        "group by all order by all"
    )
    shape = {(row["tier"], row["has_event"]): row for row in rows}
    assert set(shape) == {("noise", False), ("signal", True), ("soft", True)}
    assert shape[("soft", True)]["op"] == "mention"
    assert shape[("soft", True)]["ops"] == 1
    signal_ops = worlds.query(
        "select distinct op from {event_schedules} where tier = 'signal' order by op"
    )
    assert {row["op"] for row in signal_ops} <= {"set", "add"}


def test_every_checkpoint_has_probes(worlds: Worlds):
    for scenario_id, loaded in worlds.scenarios.items():
        for name, _ in loaded.spec.horizon.items():
            expected = [c.after_session for c in checkpoints_for(loaded.spec, name)]
            rows = worlds.query(
                "select replicate, checkpoint, count(*) as n from {probes} "
                "where scenario = ? and horizon = ? group by all",
                scenario_id,
                name,
            )
            got: dict[int, set[int]] = defaultdict(set)
            for row in rows:
                assert row["n"] > 0
                got[row["replicate"]].add(row["checkpoint"])
            assert set(got) == set(range(loaded.spec.replicates))
            for replicate, checkpoints in got.items():
                assert sorted(checkpoints) == expected, (scenario_id, name, replicate)


def test_probe_types_follow_the_checkpoint_spec(worlds: Worlds):
    for scenario_id, loaded in worlds.scenarios.items():
        for name, _ in loaded.spec.horizon.items():
            allowed = {
                c.after_session: set(c.probe_types) for c in checkpoints_for(loaded.spec, name)
            }
            rows = worlds.query(
                "select distinct checkpoint, probe_type from {probes} "
                "where scenario = ? and horizon = ?",
                scenario_id,
                name,
            )
            for row in rows:
                assert row["probe_type"] in allowed[row["checkpoint"]], (scenario_id, name, row)


def test_probe_ids_are_unique_and_counts_capped(worlds: Worlds):
    rows = worlds.query("select count(*) as n, count(distinct probe_id) as ids from {probes}")
    assert rows[0]["n"] == rows[0]["ids"] > 0
    per_checkpoint = worlds.query(
        "select scenario, max(n) as most from (select scenario, horizon, replicate, checkpoint, "
        "count(*) as n from {probes} group by all) group by scenario"
    )
    for row in per_checkpoint:
        assert row["most"] <= worlds.scenarios[row["scenario"]].spec.probes_per_checkpoint


def test_transcripts_are_varied(worlds: Worlds):
    rows = worlds.query(
        "select scenario, horizon, replicate, count(*) as turns, "
        "count(distinct content) as distinct_turns from {transcripts} group by all"
    )
    assert rows
    for row in rows:
        assert row["distinct_turns"] / row["turns"] > 0.5, row
    for summary in worlds.summaries:
        assert summary.distinct_turn_share > 0.5


def test_turns_alternate_between_principal_and_assistants(worlds: Worlds):
    rows = worlds.query(
        "select t.role, t.speaker, p.entity_type, count(*) as n from {transcripts} t "
        "join {latent_profiles} p on p.scenario = t.scenario and p.horizon = t.horizon "
        "and p.replicate = t.replicate and p.entity_id = t.speaker group by all"
    )
    for row in rows:
        expected_role = "user" if row["entity_type"] == "human" else "assistant"
        assert row["role"] == expected_role, row
    # Every session has at least one exchange and turn indices are dense from 0.
    gaps = worlds.query(
        "select count(*) as bad from (select scenario, horizon, replicate, session_index, "
        "count(*) as n, max(turn_index) as last, min(turn_index) as first from {transcripts} "
        "group by all) where n < 2 or first <> 0 or last <> n - 1"
    )
    assert gaps[0]["bad"] == 0
    n_turns = worlds.query(
        "select count(*) as bad from {event_schedules} s left join (select scenario, horizon, "
        "replicate, session_index, count(*) as n from {transcripts} group by all) t "
        "using (scenario, horizon, replicate, session_index) where t.n is null or t.n <> s.n_turns"
    )
    assert n_turns[0]["bad"] == 0


def test_verbosity_shapes_session_length(worlds: Worlds):
    # test-two-desks-b's principal is verbose, test-habit-loop-c's terse.
    rows = {
        row["scenario"]: row["mean_turns"]
        for row in worlds.query(
            "select scenario, avg(n_turns) as mean_turns from {event_schedules} group by all"
        )
    }
    assert rows["test-two-desks-b"] > rows["test-habit-loop-c"] + 2


def test_replicates_differ(worlds: Worlds):
    for scenario_id, loaded in worlds.scenarios.items():
        for name, _ in loaded.spec.horizon.items():
            tiers: dict[int, str] = {}
            events: dict[int, tuple[object, ...]] = {}
            for row in worlds.query(
                "select replicate, string_agg(tier, ',' order by session_index) as tiers, "
                "list(value order by session_index) as events from {event_schedules} "
                "where scenario = ? and horizon = ? group by replicate",
                scenario_id,
                name,
            ):
                tiers[row["replicate"]] = row["tiers"]
                events[row["replicate"]] = tuple(row["events"])
            texts = {
                row["replicate"]: row["text"]
                for row in worlds.query(
                    "select replicate, string_agg(content, '\n' order by session_index, "
                    "turn_index) as text from {transcripts} "
                    "where scenario = ? and horizon = ? group by replicate",
                    scenario_id,
                    name,
                )
            }
            replicates = sorted(tiers)
            assert len(replicates) == loaded.spec.replicates >= 2
            for a in replicates:
                for b in replicates:
                    if a < b:
                        assert tiers[a] != tiers[b], (scenario_id, name, a, b)
                        assert events[a] != events[b], (scenario_id, name, a, b)
                        assert texts[a] != texts[b], (scenario_id, name, a, b)


def test_horizons_are_separate_trajectories(worlds: Worlds):
    rows = worlds.query(
        "select horizon, string_agg(tier, ',' order by session_index) as tiers "
        "from {event_schedules} where scenario = 'test-commuter-a' and replicate = 0 "
        "and session_index < 40 group by horizon"
    )
    by_horizon = {row["horizon"]: row["tiers"] for row in rows}
    assert set(by_horizon) == {"short", "medium"}
    assert by_horizon["short"] != by_horizon["medium"]


def test_topology_decides_who_takes_part(worlds: Worlds):
    rows = worlds.query(
        "select session_index, participants from {event_schedules} "
        "where scenario = 'test-two-desks-b' and replicate = 0 order by session_index"
    )
    for row in rows:
        expected = (
            ["principal", "desk", "travel"]
            if 100 <= row["session_index"] <= 199
            else ["principal", "desk"]
        )
        assert row["participants"] == expected, row["session_index"]
    travel = worlds.query(
        "select min(session_index) as first, max(session_index) as last, count(*) as n "
        "from {transcripts} where scenario = 'test-two-desks-b' and speaker = 'travel'"
    )[0]
    assert travel["n"] > 0
    assert travel["first"] >= 100 and travel["last"] <= 199
    events = worlds.query(
        "select min(session_index) as first, max(session_index) as last from {event_schedules} "
        "where scenario = 'test-two-desks-b' and subject = 'travel'"
    )[0]
    assert events["first"] is None or (events["first"] >= 100 and events["last"] <= 199)
    # An event about an assistant's model of the principal is acknowledged by that assistant.
    acks = worlds.query(
        "select s.subject, a.speaker from {event_schedules} s join {transcripts} u "
        "on u.scenario = s.scenario and u.horizon = s.horizon and u.replicate = s.replicate "
        "and u.label_event_id = s.event_id join {transcripts} a on a.scenario = u.scenario "
        "and a.horizon = u.horizon and a.replicate = u.replicate "
        "and a.session_index = u.session_index and a.turn_index = u.turn_index + 1 "
        "where s.scenario = 'test-two-desks-b' and s.subject <> 'principal'"
    )
    assert {row["subject"] for row in acks} == {"desk", "travel"}
    for row in acks:
        assert row["speaker"] == row["subject"]


def test_unseeded_scenario_gets_a_seed_from_its_id():
    text = TEST_SCENARIOS["test-habit-loop-c"]
    spec = parse_scenario_text(text)
    renamed = parse_scenario_text(text.replace("test-habit-loop-c", "test-habit-loop-d"))
    assert spec.seed is None
    assert root_seed(spec) == root_seed(parse_scenario_text(text))
    assert root_seed(spec) != root_seed(renamed)


@pytest.mark.parametrize("scenario_id", sorted(TEST_SCENARIOS))
def test_summary_counts_match_the_tables(worlds: Worlds, scenario_id: str):
    for summary in (s for s in worlds.summaries if s.scenario == scenario_id):
        key = (summary.scenario, summary.horizon)
        sessions = worlds.query(
            "select count(*) as n from {event_schedules} where scenario = ? and horizon = ?", *key
        )[0]["n"]
        turns = worlds.query(
            "select count(*) as n from {transcripts} where scenario = ? and horizon = ?", *key
        )[0]["n"]
        probes = worlds.query(
            "select checkpoint, count(*) as n from {probes} where scenario = ? and horizon = ? "
            "group by all order by checkpoint",
            *key,
        )
        assert summary.sessions == sessions
        assert summary.turns == turns
        assert summary.probes == sum(row["n"] for row in probes)
        assert summary.probes_per_checkpoint == {row["checkpoint"]: row["n"] for row in probes}
        assert sum(summary.tiers.values()) == sessions
        assert Counter(summary.tiers).keys() <= {"noise", "signal", "soft"}
