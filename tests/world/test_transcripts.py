"""Transcripts: events emerge in dialogue, noise is adversarial, labels stay out of the text."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from helpers import Worlds, replay_current

from drift_pipeline.entities import get_entity_type
from drift_pipeline.textmatch import contains_any, normalise

NOISE_KINDS = {"third_party", "hypothetical", "question", "sarcasm", "small_talk"}


def _pool_aliases(*type_names: str) -> dict[str, tuple[str, ...]]:
    """Every pool value's text → its aliases, over the given entity types' slots."""
    return {
        value.text: value.all_aliases()
        for name in type_names
        for slot in get_entity_type(name).slots
        for value in slot.values
    }


def test_noise_sessions_carry_no_event_and_no_event_turn(worlds: Worlds):
    rows = worlds.query(
        "select count(*) as bad from {transcripts} t join {event_schedules} s "
        "using (scenario, horizon, replicate, session_index) "
        "where s.tier = 'noise' "
        "and (t.label_event_id is not null or t.label_kind in ('event', 'ack'))"
    )
    assert rows[0]["bad"] == 0
    no_event = worlds.query(
        "select count(*) as n from {event_schedules} where tier = 'noise' and event_id is not null"
    )
    assert no_event[0]["n"] == 0


def test_noise_is_adversarial_in_every_kind(worlds: Worlds):
    for scenario in worlds.scenarios:
        kinds = {
            row["label_kind"]: row["n"]
            for row in worlds.query(
                "select t.label_kind, count(*) as n from {transcripts} t join {event_schedules} s "
                "using (scenario, horizon, replicate, session_index) "
                "where s.tier = 'noise' and t.scenario = ? group by all",
                scenario,
            )
        }
        assert set(kinds) >= NOISE_KINDS, (scenario, kinds)
        assert set(kinds) <= NOISE_KINDS | {"task"}
    # Every noise session has at least one adversarial turn, not just routine chatter.
    bare = worlds.query(
        "select count(*) as n from {event_schedules} s where s.tier = 'noise' and not exists ("
        "select 1 from {transcripts} t where t.scenario = s.scenario and t.horizon = s.horizon "
        "and t.replicate = s.replicate and t.session_index = s.session_index "
        "and t.label_kind in ('third_party', 'hypothetical', 'question', 'sarcasm', 'small_talk'))"
    )
    assert bare[0]["n"] == 0


def test_noise_mentions_real_slot_values_without_any_label(worlds: Worlds):
    pool = _pool_aliases("human")
    turns = worlds.query(
        "select t.scenario, t.horizon, t.replicate, t.session_index, t.content, t.label_kind, "
        "t.label_event_id from {transcripts} t join {event_schedules} s "
        "using (scenario, horizon, replicate, session_index) "
        "where s.tier = 'noise' and t.role = 'user'"
    )
    with_values: Counter[str] = Counter()
    held_mentions = 0
    replays: dict[tuple[str, str, int], dict[int, set[tuple[str, str, str]]]] = {}
    for turn in turns:
        assert turn["label_event_id"] is None
        content = normalise(turn["content"])
        said = [
            text
            for text, aliases in pool.items()
            if contains_any(content, aliases, normalised=True)
        ]
        if not said or turn["label_kind"] not in NOISE_KINDS:
            continue
        with_values[turn["label_kind"]] += 1
        key = (turn["scenario"], turn["horizon"], turn["replicate"])
        if key not in replays:
            replays[key] = replay_current(worlds, *key)
        held = {value for _, _, value in replays[key][turn["session_index"]]}
        held_mentions += bool(held & set(said))
    # Third-party news and hypotheticals name employers, cities, habits… that are pool values.
    assert with_values["third_party"] > 10
    assert with_values["hypothetical"] > 10
    assert with_values["question"] > 5
    # Some noise even names a value the principal really holds (a true value, not asserted).
    assert held_mentions > 5


def test_every_event_is_expressed_in_one_labelled_principal_turn(worlds: Worlds):
    pool = _pool_aliases("human", "assistant_agent")
    events = worlds.query(
        "select s.scenario, s.horizon, s.replicate, s.session_index, s.event_id, s.value, "
        "list(t.content) as contents, list(t.session_index) as sessions, list(t.role) as roles, "
        "list(t.label_kind) as kinds from {event_schedules} s left join {transcripts} t "
        "on t.scenario = s.scenario and t.horizon = s.horizon and t.replicate = s.replicate "
        "and t.label_event_id = s.event_id where s.event_id is not null group by all"
    )
    assert len(events) > 100
    for event in events:
        assert len(event["contents"]) == 1, event
        assert event["sessions"] == [event["session_index"]]
        assert event["roles"] == ["user"] and event["kinds"] == ["event"]
        assert contains_any(event["contents"][0], pool[event["value"]]), event


def test_labels_never_reach_message_text(worlds: Worlds):
    event_id = re.compile(r"\be\d{5}\b")
    label_word = re.compile(r"\b(labels?|labell?ed|signals?|noise|noisy|tier)\b", re.IGNORECASE)
    ids = {
        row["event_id"]
        for row in worlds.query(
            "select distinct event_id from {event_schedules} where event_id is not null"
        )
    }
    assert ids and all(event_id.fullmatch(i) for i in ids)
    contents = [row["content"] for row in worlds.query("select content from {transcripts}")]
    assert len(contents) > 1000
    for content in contents:
        assert not event_id.search(content), content
        assert not label_word.search(content), content
        assert "soft" not in content.lower().split(), content


def test_principal_style_shapes_the_text(worlds: Worlds):
    # test-habit-loop-c writes casually (often all lower-case); test-two-desks-b formally.
    lower_share = {
        row["scenario"]: row["share"]
        for row in worlds.query(
            "select scenario, avg((content = lower(content))::int) as share from {transcripts} "
            "where role = 'user' group by scenario"
        )
    }
    assert lower_share["test-habit-loop-c"] > 0.15
    assert lower_share["test-two-desks-b"] < 0.05
    openers = worlds.query(
        "select count(*) as n from {transcripts} where scenario = 'test-two-desks-b' "
        "and turn_index = 0 "
        "and regexp_matches(content, '^(Good morning|Good afternoon|Hello|Dear)')"
    )
    assert openers[0]["n"] > 50


def test_events_emerge_inside_a_routine_task(worlds: Worlds):
    # The event sentence is never the whole turn: a task request rides along with it.
    rows = worlds.query(
        "select t.content, s.value from {transcripts} t join {event_schedules} s "
        "on t.scenario = s.scenario and t.horizon = s.horizon and t.replicate = s.replicate "
        "and t.label_event_id = s.event_id"
    )
    lengths = defaultdict(list)
    for row in rows:
        lengths[len(row["content"]) > len(row["value"]) + 40].append(row)
    assert not lengths[False]
