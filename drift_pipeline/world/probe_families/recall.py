"""Recall: does the memory still know a fact that holds (spec §6.1), or that one was never said.

Subtypes: ``fact`` and ``relationship`` (a slot's question, by the slot's ``recall_subtype``),
``temporal`` (when did a functional slot last change) and ``negative`` (a decoy value that no
event before the checkpoint said: the right answer is no). Every recall probe enters the error
rate E(t), so MVOT.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from drift_pipeline.entities import SlotDef

from .._model import Fact, Probe
from ._audit_rules import AuditEvidence, answer_expressed, decoy_never_said
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict

__all__ = ["RECALL", "date_aliases"]

_NEGATIVE_ODDS = 0.3
"""Chance that a slot with no valid fact still gets a negative probe (a decoy of its pool)."""


def date_aliases(moment: datetime) -> tuple[str, ...]:
    """Ways of writing a session's date that a reader may use: ISO first."""
    return (
        moment.strftime("%Y-%m-%d"),
        f"{moment.strftime('%B')} {moment.day}, {moment.year}",
        f"{moment.day} {moment.strftime('%B')} {moment.year}",
    )


def _positive(context: ProbeContext, fact: Fact, after: int) -> list[Probe]:
    slot = context.slot(fact)
    value = slot.value(fact.value)
    assert fact.source_session is not None
    deprecated = tuple(
        alias
        for old in context.closed_before(fact, after)
        for alias in slot.value(old.value).all_aliases()
    )
    asker = context.asker(fact.subject, fact.source_session)
    drafts = [
        Probe(
            "",  # the id is given once the checkpoint's probes are sampled
            after,
            "recall",
            slot.recall_subtype,
            asker,
            fact.subject,
            context.question(slot.question, fact.subject),
            value.text,
            value.all_aliases(),
            deprecated,
            (),
            None,
            None,
            fact.evidence_sessions,
            fact.event_id,
            "positive",
            fact.slot,
            fact.source_session,
            value.all_aliases(),
        )
    ]
    if slot.kind == "functional" and fact.tier == "signal":
        moment = context.plans[fact.source_session].sim_time
        who = "{principal}" if slot.about_principal else "{name}"
        question = f"On what date did {who} last tell you about a change in their {slot.label}?"
        drafts.append(
            Probe(
                "",  # the id is given once the checkpoint's probes are sampled
                after,
                "recall",
                "temporal",
                asker,
                fact.subject,
                context.question(question, fact.subject),
                date_aliases(moment)[0],
                date_aliases(moment),
                (),
                (),
                None,
                None,
                fact.evidence_sessions,
                fact.event_id,
                "positive",
                fact.slot,
                fact.source_session,
                value.all_aliases(),
            )
        )
    return drafts


def _negative(context: ProbeContext, subject: str, slot: SlotDef, after: int) -> Probe | None:
    decoys = context.unsaid(subject, slot, after)
    if not decoys:
        return None
    decoy = context.rng.choice(decoys)
    who = "{principal}" if slot.about_principal else "{name}"
    template = (
        f"Has {who} ever told you that their {slot.label} is {decoy.text}?"
        if slot.kind == "functional"
        else f"Has {who} ever mentioned {decoy.text} among their {slot.label}?"
    )
    return Probe(
        "",  # the id is given once the checkpoint's probes are sampled
        after,
        "recall",
        "negative",
        context.asker(subject, after - 1),
        subject,
        context.question(template, subject),
        "no",
        decoy.all_aliases(),
        (),
        (),
        None,
        None,
        (),
        None,
        "negative",
        slot.name,
        None,
        decoy.all_aliases(),
    )


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """Recall candidates: positive probes per valid fact, then negative probes per slot.

    A functional slot changed by a signal event also gets a temporal probe; every slot holding a
    valid fact, and at random any other slot, gets a negative probe (when it has a decoy).
    """
    after = checkpoint.after
    for fact in checkpoint.valid:
        yield from _positive(context, fact, after)
    valid_keys = {(f.subject, f.slot) for f in checkpoint.valid}
    for subject, entity_type in context.types.items():
        for slot in entity_type.slots:
            if (subject, slot.name) in valid_keys or context.rng.random() < _NEGATIVE_ODDS:
                yield _negative(context, subject, slot, after)


def audit(probe: Probe, evidence: AuditEvidence) -> str | None:
    """A negative probe's decoy was never said; a positive probe's answer was.

    A positive probe's answer must be in its evidence sessions, and a temporal answer must be
    the date of its event's session.
    """
    if probe.polarity == "negative":
        return decoy_never_said(probe, evidence)
    reason = answer_expressed(probe, evidence)
    if reason is None and probe.subtype == "temporal":
        assert probe.event_session is not None
        if probe.answer not in date_aliases(evidence.plans[probe.event_session].sim_time):
            return "temporal answer is not the date of its event session"
    return reason


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """Right when an alias occurs in the text; for a negative probe, when no decoy is asserted.

    The negative rule is strict on purpose: a memory that keeps third-party chatter verbatim is
    fooled.
    """
    aliases: list[str] = list(probe["aliases"] or [])
    if probe["polarity"] == "negative":
        hit = context.find_asserted(aliases)
        return Verdict(
            "yes" if hit else "no",
            hit is None,
            None,
            None,
            None,
            f"decoy {hit!r} asserted" if hit else "decoy absent",
        )
    hit = context.find(aliases)
    return Verdict(
        hit or "",
        hit is not None,
        None,
        None,
        None,
        f"found {hit!r}" if hit else "answer not in context",
    )


RECALL = ProbeFamily(
    name="recall",
    subtypes=("fact", "relationship", "temporal", "negative"),
    sampling_rank=1,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={"error_rate": None},
    reader_prompt="reader",
    judge_prompt="judge_answer",
    careful_reader=True,
    # A date or a never-said decoy does not depend on which value holds now.
    asks_current=frozenset({"fact", "relationship"}),
)
"""The recall family."""
