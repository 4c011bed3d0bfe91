"""What the multi-peer families share: names, decisions as an entity saw them, context lines.

A decision's truth is relative to who was there (spec §4.2, shared scope): what an entity's team
agreed on a topic is the latest decision on it among the sessions that entity attended. The rule
judges of the decision families read context lines as a careful person would: a line states a
decision when it names the topic and one of its values; it is dated by a leading date when it
has one, and otherwise by where it stands (a later line is newer).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from drift_pipeline.textmatch import normalise, occurs_in

from .._model import Probe
from .._peer_model import Decision, PeerWorld
from .._peer_vocab import DECISION_TOPICS
from ._audit_rules import AuditEvidence
from ._context import ProbeContext
from ._judging import PreparedContext

__all__ = [
    "DecisionLine",
    "attended_decision",
    "called",
    "decision_lines",
    "latest_decision",
    "topic_of",
]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# "[2027-01-04] alice: text", "2027-01-04 alice: text", "alice: text"
_SPEAKER = re.compile(r"^\W*(?:\d{4}-\d{2}-\d{2}\W*)?(?P<speaker>[^:\n]{1,64}?):\s")


def called(context: ProbeContext, entity: str) -> str:
    """How a question names an entity: a person's first name, an agent's display name."""
    profile = context.profiles[entity]
    return profile.name.split()[0] if profile.entity_type == "human" else profile.name


def topic_of(slot: str) -> tuple[str, tuple[str, ...]] | None:
    """The topic (words, values) of a decision probe's slot (``agreed/<topic>``), if any."""
    family, _, key = slot.partition("/")
    return DECISION_TOPICS.get(key) if family == "agreed" else None


def attended_decision(probe: Probe, evidence: AuditEvidence) -> str | None:
    """Why a decision probe is unfair at its first step: made too late, or not where the asker was.

    Returns:
        The reason, or ``None`` when the decision (the probe's ``event_session``) came before
        the checkpoint in a session the asker attended.
    """
    session = probe.event_session
    if session is None or session >= probe.checkpoint:
        return "decision not made before the checkpoint"
    if probe.asker not in evidence.plans[session].participants:
        return "the asker did not attend the session of the decision"
    return None


def latest_decision(peer: PeerWorld, entity: str, topic: str, before: int) -> Decision | None:
    """The latest decision on ``topic`` in a session ``entity`` attended before ``before``."""
    latest = None
    for decision in peer.decisions:
        if decision.session >= before:
            break
        if decision.topic == topic and entity in decision.audience:
            latest = decision
    return latest


@dataclass(frozen=True)
class DecisionLine:
    """A context line that states a value of a topic.

    Attributes:
        order: Sort key: (its line's date if it has one, the line's position, the sentence's).
        value: The value it states.
        speaker: Who says it (the text before the first colon), lower-cased; ``""`` if none.
        text: The sentence, normalised.
    """

    order: tuple[str, int, int]
    value: str
    speaker: str
    text: str


def decision_lines(
    context: PreparedContext, topic: str, values: tuple[str, ...]
) -> Iterator[DecisionLine]:
    """Sentences of ``context`` that name ``topic`` and state exactly one of ``values``.

    Each carries its line's speaker and date: a sentence belongs to the line it is written in.
    """
    topic_key = normalise(topic)
    keys = [(value, normalise(value)) for value in values]
    for position in context.lines_with(topic_key):  # only the lines that can name the topic
        line = context.lines[position]
        if not line or not occurs_in(topic_key, line):
            continue
        date = _DATE.search(line[:24])
        speaker = _SPEAKER.match(line)
        who = speaker.group("speaker").strip() if speaker else ""
        for number, sentence in enumerate(_SENTENCE.split(line)):
            if not occurs_in(topic_key, sentence):
                continue
            stated = [value for value, key in keys if occurs_in(key, sentence)]
            if len(stated) != 1:
                continue  # a sentence weighing several values settles none
            yield DecisionLine(
                (date.group(0) if date else "", position, number), stated[0], who, sentence
            )
