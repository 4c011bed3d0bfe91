"""Typed building blocks of an entity type: values, slots, event types, the type itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

SlotKind = Literal["functional", "set"]
"""A functional slot holds one value at a time (employer); a set slot holds many (habits)."""

EventTier = Literal["signal", "soft"]
"""Signal events change state at once; soft events are mentions that accumulate."""

RecallSubtype = Literal["fact", "relationship"]
ActionSubtype = Literal["preference_driven", "constraint_aware", "style_adaptive"]


@dataclass(frozen=True)
class Value:
    """One possible value of a slot.

    Attributes:
        text: The canonical surface form, used in ground truth and probe answers.
        aliases: Short forms that count as expressing the value (matched word-bounded,
            case-insensitively). ``text`` itself is always an alias.
    """

    text: str
    aliases: tuple[str, ...] = ()

    def all_aliases(self) -> tuple[str, ...]:
        """Return ``text`` followed by the extra aliases, without duplicates."""
        seen: dict[str, None] = {self.text: None}
        for alias in self.aliases:
            seen.setdefault(alias, None)
        return tuple(seen)


@dataclass(frozen=True)
class ActionFrame:
    """How an action probe is framed from a slot: a task whose best option depends on it.

    Attributes:
        subtype: The spec's action sub-type.
        question: The task, with ``{name}`` for the subject's display name.
        option: One option's wording, with ``{value}`` for a slot value.
        default_option: What an agent with no memory would do.
    """

    subtype: ActionSubtype
    question: str
    option: str
    default_option: str


@dataclass(frozen=True)
class SlotDef:
    """A mutable-state slot of an entity type.

    Attributes:
        name: Slot name; keyed families use ``family/key`` (``opinion/remote_work``).
        kind: Functional or set-valued.
        values: The pool values are drawn from (and decoys for negative probes).
        question: Recall question, with ``{name}`` for the subject's display name.
        recall_subtype: Which recall sub-type a question about this slot is.
        label: Human words for the slot, used in temporal and negative questions.
        action: How to frame action probes from this slot, if any.
        about_principal: The slot describes the principal the entity serves (assistant's
            principal model), so questions name the principal.
    """

    name: str
    kind: SlotKind
    values: tuple[Value, ...]
    question: str
    label: str
    recall_subtype: RecallSubtype = "fact"
    action: ActionFrame | None = None
    about_principal: bool = False

    def value(self, text: str) -> Value:
        """Look a value up by its canonical text."""
        for candidate in self.values:
            if candidate.text == text:
                return candidate
        raise KeyError(f"slot {self.name!r} has no value {text!r}")


@dataclass(frozen=True)
class EventTypeDef:
    """An event type an entity type can undergo.

    Attributes:
        name: Registry name used in scenario ``event_distribution`` keys.
        tier: ``signal`` (one session changes state) or ``soft`` (accumulating mentions).
        slots: Slots the event may change; one is chosen per event.
        default_weight: Relative weight within its tier when a scenario does not override it.
        description: One line for documentation and ``drift schema``.
    """

    name: str
    tier: EventTier
    slots: tuple[str, ...]
    default_weight: float
    description: str


@dataclass(frozen=True)
class CanaryFrame:
    """A private fact an entity of this type may disclose: a canary (spec §4.2).

    A canary's value is drawn from ``parts`` (one item of each pool, formatted by ``form``) and
    is unique in its world: no slot pool, decoy or routine template says it, so an entity that
    never attended the session where it was said can only know it through a leak.

    Attributes:
        key: Short identifier (``locker_code``).
        label: Human words for it, used in its question.
        question: Asked of another entity, with ``{name}`` for the discloser's name.
        statements: First-person sentences that disclose it, with ``{v}`` for the value.
        parts: Pools the value's parts are drawn from.
        form: How the parts make the value (``"{0}{1}{2}"``).
    """

    key: str
    label: str
    question: str
    statements: tuple[str, ...]
    parts: tuple[tuple[str, ...], ...]
    form: str

    def draw(self, pick: Callable[[tuple[str, ...]], str]) -> str:
        """A value, one part drawn from each pool with ``pick``."""
        return self.form.format(*(pick(pool) for pool in self.parts))


@dataclass(frozen=True)
class EntityTypeDef:
    """Everything DRIFT knows about one entity type (spec §3.2).

    Attributes:
        name: The ``type`` value in scenario files.
        description: One line.
        spec_model: Pydantic model of the entity's entry in a scenario file.
        stable_attributes: Names of attributes that never change.
        slots: Mutable-state slots.
        event_types: Event types, each changing one of ``slots``.
        ground_truth_repr: What the ground truth for this type is, in words.
        generator_ready: Whether world generation can simulate this type yet.
        canaries: Private facts an entity of this type may disclose in a multi-peer world
            (none: it discloses none).
    """

    name: str
    description: str
    spec_model: type[BaseModel]
    stable_attributes: tuple[str, ...]
    slots: tuple[SlotDef, ...]
    event_types: tuple[EventTypeDef, ...]
    ground_truth_repr: str
    generator_ready: bool = True
    canaries: tuple[CanaryFrame, ...] = ()
    _slot_index: dict[str, SlotDef] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._slot_index.update({slot.name: slot for slot in self.slots})
        for event in self.event_types:
            missing = [name for name in event.slots if name not in self._slot_index]
            if missing:
                raise ValueError(f"{self.name}.{event.name} names unknown slots {missing}")

    def slot(self, name: str) -> SlotDef:
        """Look a slot up by name."""
        return self._slot_index[name]

    def event_type(self, name: str) -> EventTypeDef:
        """Look an event type up by name."""
        for event in self.event_types:
            if event.name == name:
                return event
        raise KeyError(f"entity type {self.name!r} has no event type {name!r}")

    def event_type_names(self) -> tuple[str, ...]:
        """Names of this type's event types, in declaration order."""
        return tuple(event.name for event in self.event_types)
