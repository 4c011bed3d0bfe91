"""Records of a generated world: events, facts, sessions, turns, probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, NamedTuple

Tier = Literal["signal", "soft", "noise"]
Scope = Literal["private", "shared", "emergent"]
"""Who can know a fact (spec §4.2): one entity, the participants of the session that said it,
or the entities of several sessions it emerged across."""
Op = Literal["set", "add", "mention"]


@dataclass(frozen=True)
class Event:
    """One injected event: a state change (signal) or one mention of a preference (soft).

    Attributes:
        event_id: Unique within a world replicate.
        session_index: 0-based session it happens in.
        event_type: Registry name (``job_change``…).
        tier: ``signal`` or ``soft``.
        subject: Entity whose slot changes.
        slot: Slot name.
        value: New value's canonical text.
        previous_value: Value it replaces (functional slots), if any.
        op: ``set`` (functional), ``add`` (set slot) or ``mention`` (soft signal).
        mention: For soft events, which mention this is (1-based).
        enters_ground_truth: Whether this event makes the value part of ground truth.
    """

    event_id: str
    session_index: int
    event_type: str
    tier: Literal["signal", "soft"]
    subject: str
    slot: str
    value: str
    previous_value: str | None
    op: Op
    mention: int
    enters_ground_truth: bool


@dataclass
class Fact:
    """A latent fact with its validity interval.

    ``valid_to`` is the session index that closed it (exclusive) or None while it holds;
    ``source_session`` is None for initial latent state that no session expressed.
    ``scope`` and ``audience`` say who can know it (spec §4.2): the entities that attended its
    evidence sessions, ``private`` when that is one entity, ``shared`` when it was said in one
    session of several, ``emergent`` when it took several sessions (a preference that becomes
    clear mention by mention); latent initial state nobody said is ``private`` to its subject.
    """

    fact_id: str
    subject: str
    slot: str
    value: str
    valid_from: int
    valid_to: int | None
    source_session: int | None
    tier: Literal["initial", "signal", "soft"]
    event_id: str | None
    evidence_sessions: tuple[int, ...] = ()
    scope: Scope = "private"
    audience: tuple[str, ...] = ()

    def valid_at(self, after_session: int) -> bool:
        """Whether the fact holds once ``after_session`` sessions have happened."""
        return self.valid_from < after_session and (
            self.valid_to is None or self.valid_to >= after_session
        )


@dataclass(frozen=True)
class SessionPlan:
    """One row of the event schedule."""

    session_index: int
    sim_time: datetime
    tier: Tier
    participants: tuple[str, ...]
    pattern: str
    event: Event | None


class Turn(NamedTuple):
    """One message of a transcript, with its harness-private label kept apart from the text.

    A named tuple rather than a dataclass: worlds hold tens of thousands of turns, and a tuple
    is built several times faster and turned into table columns in one ``zip``.

    Attributes:
        label_event_id: The event this turn expresses, if any (never shown to a backend).
        label_kind: ``event``, ``ack``, ``task`` or the noise kind (``third_party``…).
    """

    session_index: int
    turn_index: int
    speaker: str
    role: str
    content: str
    label_event_id: str | None
    label_kind: str


@dataclass(frozen=True)
class ProbeOption:
    """A multiple-choice option of an action probe.

    Attributes:
        text: What the option says.
        terms: Phrases whose presence in memory supports choosing it.
        utility: +1 right under the latent profile, 0 neutral (default), -1 wrong.
    """

    text: str
    terms: tuple[str, ...]
    utility: int


@dataclass(frozen=True)
class Probe:
    """A question asked at a checkpoint, with its latent answer."""

    probe_id: str
    checkpoint: int
    probe_type: str
    subtype: str
    asker: str
    subject: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    deprecated: tuple[str, ...]
    options: tuple[ProbeOption, ...]
    correct_option: int | None
    default_option: int | None
    evidence_sessions: tuple[int, ...]
    event_id: str | None
    polarity: Literal["positive", "negative"]
    slot: str
    event_session: int | None
    evidence_terms: tuple[str, ...]
    """What the evidence sessions must contain (the answerability audit checks it); for a
    negative probe, the decoy that no event may ever have expressed."""


@dataclass
class EntityState:
    """An entity's latent profile: stable attributes, display name, initial state."""

    entity_id: str
    entity_type: str
    name: str
    stable: dict[str, object]
    initial: dict[str, object] = field(default_factory=dict)
