"""Consistency: the same question to every participant of a shared session (spec §6.2).

A decision agreed in a session is known to its participants. At a checkpoint, the participants
whose latest decision on that topic is still this one are each asked what was agreed; each
answer is judged on its own, and the group's answers are compared (the ``consistency`` and
``consistency_agreement`` metrics): a group is consistent when every participant answers the
truth, in agreement when they all give the same answer. A memory that mixes in decisions its
entity never took part in (another team's) answers with those.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .._model import Probe
from ._audit_rules import AuditEvidence
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict
from ._peer import attended_decision, decision_lines, latest_decision, topic_of

__all__ = ["CONSISTENCY", "GROUP_TAG"]

GROUP_TAG = "g"
"""A consistency probe's id ends ``-g<decision id>``: the probes of one group share it."""


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """Per decision, its participants who still hold it, when at least two do."""
    peer = context.peer
    if peer is None:
        return
    for decision in peer.decisions:
        if decision.session >= checkpoint.after:
            break
        holders = [
            entity
            for entity in decision.audience
            if latest_decision(peer, entity, decision.topic, checkpoint.after) == decision
        ]
        if len(holders) < 2:
            continue
        topic = topic_of(f"agreed/{decision.topic}")
        assert topic is not None
        others = tuple(value for value in topic[1] if value != decision.value)
        for asker in holders:
            yield Probe(
                f"{GROUP_TAG}{decision.decision_id}",
                checkpoint.after,
                "consistency",
                "shared_decision",
                asker,
                decision.proposer,
                f"What was agreed on for the {decision.topic_label}?",
                decision.value,
                (decision.value,),
                others,
                (),
                None,
                None,
                (decision.session,),
                decision.decision_id,
                "positive",
                f"agreed/{decision.topic}",
                decision.session,
                (decision.value,),
            )


def audit(probe: Probe, evidence: AuditEvidence) -> str | None:
    """The asker attended the session where it was agreed, and saw no other value agreed since.

    The value is said in a decision turn of that session, before the checkpoint; no decision
    turn of a later session the asker attended (before the checkpoint) states another value
    of the topic.
    """
    unfair = attended_decision(probe, evidence)
    if unfair is not None or probe.event_session is None:
        return unfair
    session = probe.event_session
    stated = [
        turn
        for turn in evidence.by_session.get(session, ())
        if turn.event_id == probe.event_id and probe.answer in turn.said
    ]
    if not stated:
        return "decision never stated in its session"
    for later in range(session + 1, probe.checkpoint):
        if probe.asker not in evidence.plans[later].participants:
            continue
        for turn in evidence.by_session.get(later, ()):
            if turn.kind == "decision" and any(value in turn.said for value in probe.deprecated):
                return f"another value was agreed in session {later}, which the asker attended"
    return None


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """The value of the newest line that names the topic and states one of its values."""
    topic = topic_of(str(probe["slot"]))
    if topic is None:
        return Verdict("", False, None, None, None, "not a decision question")
    lines = sorted(decision_lines(context, topic[0], topic[1]), key=lambda line: line.order)
    if not lines:
        return Verdict("", False, None, None, None, "no agreement on the topic in context")
    newest = lines[-1]
    correct = newest.value.lower() == str(probe["answer"]).lower()
    return Verdict(
        newest.value,
        correct,
        None,
        None,
        None,
        f"newest agreement on the {topic[0]}: {newest.value!r}",
    )


CONSISTENCY = ProbeFamily(
    name="consistency",
    subtypes=("shared_decision",),
    sampling_rank=6,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={"error_rate": None, "consistency": None},
    reader_prompt="reader",
    judge_prompt="judge_answer",
    asks_current=frozenset(),
)
"""The consistency family."""
