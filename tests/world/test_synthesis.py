"""The template synthesizer, exhaustively: every value of every slot, many phrasings."""

from __future__ import annotations

import random
import re

import pytest

from drift_pipeline.entities import get_entity_type
from drift_pipeline.textmatch import contains_any, normalise
from drift_pipeline.world import EntityState, Event, SessionPlan, rng_for
from drift_pipeline.world._events import SIM_EPOCH
from drift_pipeline.world.synthesis import SessionContext, TemplateSynthesizer
from drift_pipeline.world.synthesis import _templates as templates
from drift_pipeline.world.synthesis.grammar import CONSTRAINT_PHRASES, PhrasingSplit, tables_for

SPLITS = (PhrasingSplit.from_salt(""), PhrasingSplit.from_salt("test-held-out"))
STYLES = [
    {"verbosity": v, "formality": f, "references_prior_context": 0.5}
    for v, f in (("terse", "casual"), ("moderate", "neutral"), ("verbose", "formal"))
]


def _profiles(style: dict[str, object]) -> dict[str, EntityState]:
    return {
        "p": EntityState(
            "p",
            "human",
            "Ada Brennan",
            {"communication_style": style},
            {"employer": "Globex Logistics", "city": "Bergen"},
        ),
        "a": EntityState("a", "assistant_agent", "Assistant", {}),
        "b": EntityState("b", "assistant_agent", "Second", {}),
    }


def _event(subject: str, slot: str, value: str, tier: str, previous: str | None) -> Event:
    return Event(
        event_id="e00007",
        session_index=3,
        event_type="x",
        tier=tier,  # type: ignore[arg-type]
        subject=subject,
        slot=slot,
        value=value,
        previous_value=previous,
        op="mention" if tier == "soft" else "set",
        mention=1,
        enters_ground_truth=True,
    )


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for subject, type_name in (("p", "human"), ("a", "assistant_agent")):
        entity_type = get_entity_type(type_name)
        for event_type in entity_type.event_types:
            for slot in event_type.slots:
                cases.append((subject, slot, event_type.tier))
    return cases


@pytest.mark.parametrize(("subject", "slot_name", "tier"), _cases())
def test_every_event_sentence_expresses_its_value(subject: str, slot_name: str, tier: str):
    type_name = "human" if subject == "p" else "assistant_agent"
    slot = get_entity_type(type_name).slot(slot_name)
    synthesizer = TemplateSynthesizer()
    for index, value in enumerate(slot.values):
        previous = slot.values[index - 1].text if slot.kind == "functional" and index % 2 else None
        event = _event(subject, slot_name, value.text, tier, previous)
        plan = SessionPlan(3, SIM_EPOCH, tier, ("p", "a", "b"), "linear", event)  # type: ignore[arg-type]
        for seed in range(12):
            rng = rng_for(seed, slot_name, value.text)
            context = SessionContext(_profiles(STYLES[seed % 3]), {}, rng)
            turns = synthesizer.session(plan, context)
            labelled = [turn for turn in turns if turn.label_event_id == "e00007"]
            assert len(labelled) == 1
            turn = labelled[0]
            assert turn.role == "user" and turn.speaker == "p" and turn.label_kind == "event"
            assert contains_any(turn.content, value.all_aliases()), (value.text, turn.content)
            assert "{" not in turn.content and "}" not in turn.content
            # The reply right after it acknowledges the event, from the assistant concerned.
            reply = turns[turn.turn_index + 1]
            assert reply.role == "assistant" and reply.label_kind == "ack"
            if subject != "p":
                assert reply.speaker == subject


def test_noise_sessions_have_no_event_turn_and_adversarial_content():
    synthesizer = TemplateSynthesizer()
    kinds: set[str] = set()
    for seed in range(200):
        plan = SessionPlan(seed, SIM_EPOCH, "noise", ("p", "a"), "linear", None)
        context = SessionContext(
            _profiles(STYLES[seed % 3]), {("p", "city"): ("Bergen",)}, random.Random(seed)
        )
        turns = synthesizer.session(plan, context)
        assert all(turn.label_event_id is None for turn in turns)
        assert [turn.turn_index for turn in turns] == list(range(len(turns)))
        assert {turn.speaker for turn in turns} <= {"p", "a"}
        kinds.update(turn.label_kind for turn in turns)
        for turn in turns:
            assert "{" not in turn.content, turn.content
    assert kinds == {"task", "third_party", "hypothetical", "question", "sarcasm", "small_talk"}


def test_sessions_without_a_human_are_agent_chatter():
    plan = SessionPlan(0, SIM_EPOCH, "noise", ("a", "b"), "async", None)
    context = SessionContext(_profiles(STYLES[0]), {}, random.Random(1))
    turns = TemplateSynthesizer().session(plan, context)
    assert 2 <= len(turns) <= 4
    assert {turn.speaker for turn in turns} == {"a", "b"}
    assert all(turn.role == "assistant" and turn.label_event_id is None for turn in turns)


def test_the_same_session_rng_gives_the_same_turns():
    synthesizer = TemplateSynthesizer()
    event = _event("p", "employer", "Kestrel Aerospace", "signal", "Globex Logistics")
    plan = SessionPlan(3, SIM_EPOCH, "signal", ("p", "a"), "linear", event)
    first = synthesizer.session(plan, SessionContext(_profiles(STYLES[1]), {}, random.Random(9)))
    second = synthesizer.session(plan, SessionContext(_profiles(STYLES[1]), {}, random.Random(9)))
    third = synthesizer.session(plan, SessionContext(_profiles(STYLES[1]), {}, random.Random(10)))
    assert first == second
    assert first != third


def test_the_grammar_covers_every_slot_family_of_generated_types():
    for type_name in ("human", "assistant_agent"):
        for event_type in get_entity_type(type_name).event_types:
            for slot in event_type.slots:
                family = slot.partition("/")[0]
                for split in SPLITS:
                    assert len(tables_for(split).events[(family, True)]) >= 50, (family, split)
    constraints = get_entity_type("human").slot("constraints")
    texts = {value.text for value in constraints.values}
    assert set(templates.FIRST_PERSON) == texts == set(CONSTRAINT_PHRASES)
    for value in texts:
        aliases = constraints.value(value).all_aliases()
        for phrasing in (*templates.FIRST_PERSON[value], *CONSTRAINT_PHRASES[value]):
            assert contains_any(phrasing, aliases), (value, phrasing)


def _shape(template: str) -> re.Pattern[str]:
    """A template as a pattern: its placeholders match any text."""
    parts = re.split(r"\{[a-z0-9_]+\}", template)
    return re.compile(".+?".join(re.escape(part) for part in parts), re.IGNORECASE)


@pytest.mark.parametrize("split", SPLITS, ids=lambda split: split.label)
def test_every_routine_text_and_decoy_family_is_used(split: PhrasingSplit):
    # The synthesizer's variety is its families and routine texts: each must be reachable.
    synthesizer = TemplateSynthesizer(split)
    texts: list[str] = []
    for seed in range(3000):
        plan = SessionPlan(seed, SIM_EPOCH, "noise", ("p", "a"), "linear", None)
        current = {("p", "city"): ("Bergen",), ("p", "employer"): ("Globex Logistics",)}
        context = SessionContext(_profiles(STYLES[seed % 3]), current, random.Random(seed))
        texts.extend(turn.content for turn in synthesizer.session(plan, context))
    corpus = "\n".join(texts)
    expected = [
        *(text for _, requests, replies in templates.TASKS for text in (*requests, *replies)),
        *(family.template for pool in tables_for(split).decoys.values() for family in pool),
        *(text for pool in templates.NOISE_REPLIES.values() for text in pool),
        *(
            text
            for pool in (*templates.OPENERS.values(), *templates.CLOSERS.values())
            for text in pool
            if text
        ),
        *templates.PRIOR_CONTEXT,
        *templates.FILLERS,
        *templates.ADDRESSES,
    ]
    missing = [text for text in expected if not _shape(text).search(corpus)]
    assert not missing


@pytest.mark.parametrize("split", SPLITS, ids=lambda split: split.label)
def test_every_event_family_is_used(split: PhrasingSplit):
    # The script names the family of each planned sentence: every family of every slot family
    # in the split must be drawn, and its sentence must be the one in the event turn.
    synthesizer = TemplateSynthesizer(split)
    for subject, type_name in (("p", "human"), ("a", "assistant_agent")):
        entity_type = get_entity_type(type_name)
        for event_type in entity_type.event_types:
            slot_name = event_type.slots[0]
            slot = entity_type.slot(slot_name)
            family = slot_name.partition("/")[0]
            used: set[str] = set()
            for seed in range(1200):
                value = slot.values[seed % len(slot.values)]
                previous = slot.values[(seed + 1) % len(slot.values)].text
                event = _event(subject, slot_name, value.text, event_type.tier, previous)
                plan = SessionPlan(3, SIM_EPOCH, event_type.tier, ("p", "a"), "linear", event)
                context = SessionContext(_profiles(STYLES[seed % 3]), {}, random.Random(seed))
                script = synthesizer.script(plan, context)
                planned = script.planned[0]
                assert planned.role == "event"
                (turn,) = [turn for turn in script.turns if turn.label_kind == "event"]
                assert normalise(planned.text) in normalise(turn.content)
                used.add(planned.family_id)
            expected = {f.family_id for f in tables_for(split).events[(family, True)]}
            assert used == expected, sorted(expected - used)
