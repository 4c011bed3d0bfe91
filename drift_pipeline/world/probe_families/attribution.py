"""Attribution: who proposed a decision (spec §6.2: authorship kept with content).

Asked of the other participants of the session where it was proposed, when that session is the
latest one they attended where this value was proposed for the topic. A careful reader takes the
newest line that proposes the value for the topic and names its speaker: a memory that dropped
who said what, or mixes in another team's proposal of the same value, names the wrong one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from drift_pipeline.textmatch import normalise

from .._model import Probe
from ._audit_rules import AuditEvidence
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict
from ._peer import attended_decision, called, decision_lines, topic_of

__all__ = ["ATTRIBUTION"]

# Words with which a line puts a value forward, as opposed to accepting it.
_PROPOSES = re.compile(r"\b(?:i propose|my suggestion|i'd like|i would like|i'm proposing)\b")


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """Per decision, each other participant for whom it is the latest such proposal."""
    peer = context.peer
    if peer is None:
        return
    made = [d for d in peer.decisions if d.session < checkpoint.after]
    for decision in made:
        proposers = sorted(
            {d.proposer for d in made if (d.topic, d.value) == (decision.topic, decision.value)}
        )
        names = (decision.proposer, context.profiles[decision.proposer].name)
        wrong = tuple(called(context, p) for p in proposers if p != decision.proposer)
        for asker in decision.audience:
            if asker == decision.proposer:
                continue
            later = [
                d
                for d in made
                if d.session > decision.session
                and (d.topic, d.value) == (decision.topic, decision.value)
                and asker in d.audience
            ]
            if later:
                continue  # a later proposal of the same value is the one to name
            yield Probe(
                "",  # the id is given once the checkpoint's probes are sampled
                checkpoint.after,
                "attribution",
                "proposer",
                asker,
                decision.proposer,
                f"Who proposed {decision.value} for the {decision.topic_label}?",
                called(context, decision.proposer),
                tuple(dict.fromkeys((called(context, decision.proposer), *names))),
                wrong,
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
    """The asker attended the session in which the proposer (and no one else) proposed it."""
    unfair = attended_decision(probe, evidence)
    if unfair is not None or probe.event_session is None:
        return unfair
    session = probe.event_session
    proposals = [
        turn
        for turn in evidence.by_session.get(session, ())
        if turn.event_id == probe.event_id and turn.kind == "decision"
    ]
    if [turn.speaker for turn in proposals] != [probe.subject]:
        return "the proposal is not the proposer's one turn in its session"
    if not any(term in proposals[0].said for term in probe.evidence_terms):
        return "the proposal does not state its value"
    return None


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """The speaker of the newest line proposing the asked value for the topic."""
    topic = topic_of(str(probe["slot"]))
    value = next(iter(probe["evidence_terms"] or []), "")
    if topic is None or not value:
        return Verdict("", False, None, None, None, "not an attribution question")
    proposals = sorted(
        (
            line
            for line in decision_lines(context, topic[0], (value,))
            if _PROPOSES.search(line.text) and line.speaker
        ),
        key=lambda line: line.order,
    )
    if not proposals:
        return Verdict("", False, None, None, None, "no proposal of it in context")
    speaker = proposals[-1].speaker
    names = {normalise(str(name)) for name in probe["aliases"] or []}
    names |= {name.split(" ")[0] for name in names}
    return Verdict(
        speaker,
        speaker in names,
        None,
        None,
        None,
        f"newest proposal of {value!r} is by {speaker!r}",
    )


ATTRIBUTION = ProbeFamily(
    name="attribution",
    subtypes=("proposer",),
    sampling_rank=7,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={"error_rate": None, "attribution": None},
    reader_prompt="reader",
    judge_prompt="judge_answer",
    asks_current=frozenset(),
)
"""The attribution family."""
