"""The entity type registry and the value pools behind every slot."""

from __future__ import annotations

import dataclasses
import itertools
from typing import get_args

import pytest
from pydantic import BaseModel, ValidationError

from drift_pipeline.entities import (
    EntityTypeDef,
    EventTypeDef,
    SlotDef,
    Value,
    entity_types,
    get_entity_type,
    register_entity_type,
)
from drift_pipeline.textmatch import contains_any

BUILT_IN = ("human", "assistant_agent", "coding_agent", "tool_agent")


def test_the_four_types_are_registered_in_order():
    assert tuple(t.name for t in entity_types()) == BUILT_IN
    for name in BUILT_IN:
        assert get_entity_type(name).name == name


def test_every_built_in_type_can_be_generated():
    # Coding and tool agents are simulated in multi-peer worlds.
    ready = {t.name: t.generator_ready for t in entity_types()}
    assert ready == {
        "human": True,
        "assistant_agent": True,
        "coding_agent": True,
        "tool_agent": True,
    }


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_type_discloses_canaries_drawn_from_its_own_pools(name: str):
    canaries = get_entity_type(name).canaries
    assert canaries
    for frame in canaries:
        value = frame.draw(lambda pool: pool[0])
        assert value and all("{v}" in s for s in frame.statements) and "{name}" in frame.question


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_type_has_a_schema_slots_and_events(name: str):
    entity_type = get_entity_type(name)
    assert issubclass(entity_type.spec_model, BaseModel)
    assert get_args(entity_type.spec_model.model_fields["type"].annotation) == (name,)
    assert entity_type.slots and entity_type.event_types and entity_type.stable_attributes
    assert entity_type.ground_truth_repr and entity_type.description
    slot_names = [slot.name for slot in entity_type.slots]
    assert len(set(slot_names)) == len(slot_names)
    for event in entity_type.event_types:
        assert event.tier in ("signal", "soft")
        assert event.default_weight >= 0
        for slot in event.slots:
            assert entity_type.slot(slot).name == slot
    assert entity_type.event_type_names() == tuple(e.name for e in entity_type.event_types)
    # Every slot is changed by some event type, or it could never enter ground truth.
    changed = {slot for event in entity_type.event_types for slot in event.slots}
    assert changed == set(slot_names)


def test_coding_and_tool_agents_validate_their_own_fields():
    coding = get_entity_type("coding_agent").spec_model.model_validate(
        {
            "id": "coder",
            "type": "coding_agent",
            "repository": "ledger",
            "language": "rust",
            "event_distribution": {"test_failure": 0.2},
        }
    )
    assert coding.model_dump()["language"] == "rust"
    tool = get_entity_type("tool_agent").spec_model.model_validate(
        {"id": "crawler", "type": "tool_agent", "role": "test_runner"}
    )
    assert tool.model_dump()["role"] == "test_runner"
    with pytest.raises(ValidationError, match="unknown event type 'job_change' for coding_agent"):
        get_entity_type("coding_agent").spec_model.model_validate(
            {"id": "coder", "type": "coding_agent", "event_distribution": {"job_change": 0.1}}
        )
    with pytest.raises(ValidationError):
        get_entity_type("tool_agent").spec_model.model_validate(
            {"id": "crawler", "type": "tool_agent", "role": "spider"}
        )


def test_unknown_event_weights_are_rejected_with_the_allowed_names():
    human = get_entity_type("human").spec_model
    with pytest.raises(ValidationError) as error:
        human.model_validate(
            {"id": "p", "type": "human", "profile": {"event_distribution": {"jobchange": 0.1}}}
        )
    assert "allowed: job_change" in str(error.value)


def test_lookups_name_what_is_allowed():
    registered = "registered: human, assistant_agent, coding_agent, tool_agent"
    with pytest.raises(KeyError, match=registered):
        get_entity_type("robot")
    with pytest.raises(KeyError):
        get_entity_type("human").slot("shoe_size")
    with pytest.raises(KeyError, match="has no event type"):
        get_entity_type("human").event_type("promotion")
    with pytest.raises(KeyError, match="has no value"):
        get_entity_type("human").slot("city").value("Atlantis")


def test_a_name_registers_one_type():
    human = get_entity_type("human")
    assert register_entity_type(human) is human  # the same type again is harmless
    other = dataclasses.replace(human, description="someone else")
    with pytest.raises(ValueError, match=r"entity type 'human' is already registered$"):
        register_entity_type(other)
    assert get_entity_type("human") is human


def test_event_types_must_name_known_slots():
    with pytest.raises(ValueError, match="unknown slots"):
        EntityTypeDef(
            name="broken",
            description="",
            spec_model=BaseModel,
            stable_attributes=(),
            slots=(SlotDef("a", "set", (Value("x"),), "?", "a"),),
            event_types=(EventTypeDef("e", "signal", ("b",), 1.0, ""),),
            ground_truth_repr="",
        )


def test_value_aliases_start_with_the_text_and_have_no_duplicates():
    value = Value("Northwind Traders", ("Northwind", "Northwind Traders", "Northwind"))
    assert value.all_aliases() == ("Northwind Traders", "Northwind")


# --- value pools --------------------------------------------------------------------------------


def _slots() -> list[tuple[str, SlotDef]]:
    return [(t.name, slot) for t in entity_types() for slot in t.slots]


@pytest.mark.parametrize(("type_name", "slot"), _slots(), ids=lambda x: getattr(x, "name", x))
def test_every_pool_is_unambiguous(type_name: str, slot: SlotDef):
    assert len(slot.values) >= 2, "a pool needs a decoy"
    texts = [value.text for value in slot.values]
    assert len(set(texts)) == len(texts)
    for value in slot.values:
        assert all(alias.strip() for alias in value.all_aliases())
    # No alias of one value is (word-bounded) part of another value of the same slot: the
    # judge could not tell the current value from a deprecated one otherwise.
    for a, b in itertools.permutations(slot.values, 2):
        for alias in a.all_aliases():
            assert not contains_any(b.text, [alias]), (slot.name, alias, b.text)
            for other in b.all_aliases():
                assert not contains_any(other, [alias]), (slot.name, alias, other)


def test_a_value_text_means_the_same_in_every_slot():
    # World generation keys values by their text across slots (first mentions, decoys).
    seen: dict[str, tuple[str, ...]] = {}
    for _, slot in _slots():
        for value in slot.values:
            assert seen.setdefault(value.text, value.all_aliases()) == value.all_aliases(), value


@pytest.mark.parametrize("name", ("human", "assistant_agent"))
def test_questions_and_action_frames_use_known_placeholders(name: str):
    for slot in get_entity_type(name).slots:
        placeholder = "{principal}" if slot.about_principal else "{name}"
        assert placeholder in slot.question, slot.name
        assert slot.question.format(name="Ada", principal="Ada")
        if slot.action is not None:
            assert "{value}" in slot.action.option
            assert slot.action.option.format(value="x", name="Ada", principal="Ada")
            assert slot.action.question.format(name="Ada", principal="Ada")
