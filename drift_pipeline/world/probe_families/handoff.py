"""Hand-over: an entity that joins mid-trajectory, and how long it takes to catch up (spec §6.2).

An entity whose first session comes after the horizon's first checkpoint is a newcomer. The
facts that held when it joined and were said where it was not are restated to it, a few per
session, in its first sessions (briefings). At every later checkpoint it is asked each of those
facts that still holds, whether or not it has been told yet: its time to accuracy is the number
of sessions from its first one to the first checkpoint at which it answers all of them, and is
infinite when that never happens (the ``handoff_sessions`` figure). The careful reader reads
the newcomer's memory as for any value question.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .._model import Probe
from ._audit_rules import AuditEvidence
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict

__all__ = ["HANDOFF", "JOIN_TAG"]

JOIN_TAG = "j"
"""A hand-over probe's id ends ``-j<first session of the newcomer>`` (five digits)."""


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """Per newcomer that joined before the checkpoint, each briefed fact that still holds."""
    peer = context.peer
    if peer is None:
        return
    facts = {fact.fact_id: fact for fact in context.facts}
    for briefing in peer.briefings:
        if briefing.joined >= checkpoint.after:
            continue
        fact = facts[briefing.fact_id]
        if not fact.valid_at(checkpoint.after):
            continue
        slot = context.slot(fact)
        value = slot.value(fact.value)
        yield Probe(
            f"{JOIN_TAG}{briefing.joined:05d}",
            checkpoint.after,
            "handoff",
            "caught_up",
            briefing.newcomer,
            fact.subject,
            context.question(slot.question, fact.subject),
            value.text,
            value.all_aliases(),
            (),
            (),
            None,
            None,
            (briefing.session,),
            briefing.briefing_id,
            "positive",
            fact.slot,
            briefing.session,
            value.all_aliases(),
        )


def audit(probe: Probe, evidence: AuditEvidence) -> str | None:
    """The fact is restated, in a session the newcomer attends, by a turn saying the answer.

    The restatement may come after the checkpoint: a newcomer not told yet is expected to be
    wrong, and that is what its time to accuracy counts.
    """
    session = probe.event_session
    if session is None:
        return "no briefing session"
    if probe.asker not in evidence.plans[session].participants:
        return "the newcomer does not attend its briefing"
    restated = [
        turn
        for turn in evidence.by_session.get(session, ())
        if turn.event_id == probe.event_id and any(t in turn.said for t in probe.evidence_terms)
    ]
    if not restated:
        return "the briefing does not state the answer"
    return None


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """Without the careful reader: right when an alias occurs in the context."""
    hit = context.find(list(probe["aliases"] or []))
    return Verdict(
        hit or "", hit is not None, None, None, None, f"found {hit!r}" if hit else "not told"
    )


HANDOFF = ProbeFamily(
    name="handoff",
    subtypes=("caught_up",),
    sampling_rank=8,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={"handoff_sessions": None},
    reader_prompt="reader",
    judge_prompt="judge_answer",
    careful_reader=True,
    asks_current=frozenset({"caught_up"}),
)
"""The hand-over family."""
