"""The deterministic verifier of LLM-written sessions: strict parsing and the two checks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import COMMUTER, HABIT_LOOP, TWO_DESKS, write_scenario

from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import EntityState, Event, generate_replicate
from drift_pipeline.world._generate import _advance
from drift_pipeline.world.synthesis._verify import (
    DraftTurn,
    ReplyError,
    event_turns,
    first_person_assertions,
    parse_reply,
)

PROFILES = {
    "me": EntityState(
        "me", "human", "Ana Ruiz", {}, {"city": "Denver", "employer": "Ambergate Hospital"}
    ),
    "bot": EntityState("bot", "assistant_agent", "Helper", {}, {}),
}
NOW: dict[tuple[str, str], tuple[str, ...]] = {
    ("me", "city"): ("Denver",),
    ("me", "employer"): ("Ambergate Hospital",),
    ("me", "opinion/remote_work"): ("skeptical",),
}
MOVE = Event("e1", 3, "relocation", "signal", "me", "city", "Lisbon", "Denver", "set", 1, True)


def _reply(*pairs: tuple[str, str]) -> str:
    turns = []
    for user, assistant in pairs:
        turns.append({"speaker": "user", "kind": "task", "text": user})
        turns.append({"speaker": "assistant", "kind": "task", "text": assistant})
    return json.dumps({"turns": turns})


def _user(*sentences: str) -> list[DraftTurn]:
    return [DraftTurn("user", "task", s) for s in sentences]


def _claims(*sentences: str, allowed: Event | None = None) -> list[str]:
    return first_person_assertions(_user(*sentences), "me", ("me", "bot"), PROFILES, NOW, allowed)


# --- parsing ---------------------------------------------------------------------------------


def test_a_good_reply_parses() -> None:
    turns = parse_reply(_reply(("Hi  there,\nconvert 3 miles?", "About 4.8 km.")), max_turns=4)
    assert turns == [
        DraftTurn("user", "task", "Hi there, convert 3 miles?"),
        DraftTurn("assistant", "task", "About 4.8 km."),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Sure! Here it is.", "reply is not JSON"),
        ('```json\n{"turns": []}\n```', "reply is not JSON"),
        ('{"turns": [], "note": "x"}', 'exactly the key "turns"'),
        ('{"turns": []}', "list of 2 to 4 turns"),
        (_reply(("a", "b"), ("c", "d"), ("e", "f")), "list of 2 to 4 turns"),
        (
            json.dumps({"turns": [{"speaker": "assistant", "kind": "task", "text": "x"}] * 2}),
            "turn 0 is spoken by 'assistant'",
        ),
        (
            json.dumps(
                {
                    "turns": [
                        {"speaker": "user", "kind": "task", "text": "x"},
                        {"speaker": "assistant", "kind": "task", "text": "y", "id": 1},
                    ]
                }
            ),
            'turn 1 must have exactly "speaker", "kind" and "text"',
        ),
        (
            json.dumps(
                {
                    "turns": [
                        {"speaker": "user", "kind": "gossip", "text": "x"},
                        {"speaker": "assistant", "kind": "task", "text": "y"},
                    ]
                }
            ),
            "turn 0 has unknown kind 'gossip'",
        ),
        (
            json.dumps(
                {
                    "turns": [
                        {"speaker": "user", "kind": "task", "text": "  "},
                        {"speaker": "assistant", "kind": "task", "text": "y"},
                    ]
                }
            ),
            "turn 0 has no text",
        ),
        (
            json.dumps(
                {
                    "turns": [
                        {"speaker": "user", "kind": "task", "text": "x"},
                        {"speaker": "assistant", "kind": "task", "text": "y"},
                        {"speaker": "user", "kind": "task", "text": "z"},
                    ]
                }
            ),
            "the last turn must be the assistant's",
        ),
    ],
)
def test_bad_replies_are_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ReplyError, match=message) as caught:
        parse_reply(text, max_turns=4)
    assert "\n" not in str(caught.value)


# --- the event is expressed ------------------------------------------------------------------


def test_event_is_found_word_bounded_in_the_persons_turns() -> None:
    turns = [
        DraftTurn("user", "task", "Can you find movers? Lisbon-bound boxes are piling up."),
        DraftTurn("assistant", "task", "Sure, movers in Lisbon coming up."),
        DraftTurn("user", "task", "Lisbonne is lovely though."),
        DraftTurn("assistant", "task", "Indeed."),
    ]
    # "Lisbon-bound" counts (a dash is a word boundary), "Lisbonne" does not, and the
    # assistant's mention never carries the person's event.
    assert event_turns(turns, MOVE, PROFILES) == [0]
    assert event_turns(turns[1:], MOVE, PROFILES) == []


# --- nothing else is asserted ----------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "I moved to Lisbon last week.",
        "We're settled in Lisbon now, finally!",
        "I've started at Northwind Labs.",
    ],
)
def test_first_person_facts_that_are_not_true_now_are_flagged(sentence: str) -> None:
    found = _claims(sentence)
    assert len(found) == 1 and sentence in found[0]


@pytest.mark.parametrize(
    "sentence",
    [
        "My sister moved to Lisbon last week.",  # third party
        "If I ever moved to Lisbon I'd learn Portuguese.",  # hypothetical
        "Did I tell you about Lisbon?",  # question
        "Oh sure, I'm totally moving to Lisbon tomorrow.",  # irony
        "I would never live in Lisbon.",  # hypothetical and negation
        "I still live in Denver.",  # true now
        "Book me a hotel in Lisbon for the conference.",  # a request, no first-person subject
        "Lisbon was lovely in May.",  # no first person at all
        "I'm firmly opposed to pineapple pizza.",  # opinion value without its topic
    ],
)
def test_non_assertions_and_true_values_pass(sentence: str) -> None:
    assert _claims(sentence) == []


def test_keyed_slots_need_their_topic_and_the_event_value_is_allowed() -> None:
    assert _claims("I'm firmly opposed to remote work these days.")
    assert _claims("I'm skeptical about remote work.") == []  # held now
    assert _claims("I moved to Lisbon, finally.", allowed=MOVE) == []
    assert _claims("I moved to Lisbon and started at Northwind Labs.", allowed=MOVE)


def test_assistant_turns_are_not_checked() -> None:
    turns = [DraftTurn("assistant", "task", "I moved to Lisbon.")]
    assert first_person_assertions(turns, "me", ("me",), PROFILES, NOW) == []


# --- calibration on the template synthesizer's own sessions ---------------------------------


def test_the_template_synthesizers_sessions_pass(tmp_path: Path) -> None:
    """The template synthesizer is built to satisfy the audit, so every event it writes must
    pass the event check, and its deliberately adversarial noise must almost never read as a
    first-person claim (a few generic aliases, "chess" in "a book about chess openings", do)."""
    flagged: Counter[str] = Counter()
    sessions: Counter[str] = Counter()
    for text in (COMMUTER, TWO_DESKS, HABIT_LOOP):
        spec = load_scenario(write_scenario(tmp_path, text)).spec
        horizon = "medium" if spec.horizon.medium else "short"
        world = generate_replicate(spec, horizon, 0)
        by_id = {p.entity_id: p for p in world.profiles}
        current = {
            (p.entity_id, s): (str(v),) for p in world.profiles for s, v in p.initial.items()
        }
        by_session: dict[int, list[DraftTurn]] = {}
        for turn in world.turns:
            by_session.setdefault(turn.session_index, []).append(
                DraftTurn(turn.role, turn.label_kind, turn.content)
            )
        for plan in world.plans:
            turns = by_session[plan.session_index]
            principal = next(p for p in plan.participants if by_id[p].entity_type == "human")
            if plan.event is not None:
                assert event_turns(turns, plan.event, by_id), plan
            sessions[plan.tier] += 1
            if first_person_assertions(
                turns, principal, plan.participants, by_id, current, plan.event
            ):
                flagged[plan.tier] += 1
            _advance(current, by_id, plan.event)
    assert sessions["noise"] > 300
    assert flagged["noise"] <= 0.02 * sessions["noise"]
    assert sum(flagged.values()) <= 0.02 * sum(sessions.values())
