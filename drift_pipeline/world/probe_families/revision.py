"""Revision: has the memory taken in a change and let the old value go (spec §6.1, §7.3).

A revision probe asks a slot's question after its value changed: the new value must be stated
(update correctness) and the old one no longer asserted (deprecation correctness). Subtypes:
``fact_update`` and ``preference_reversal`` (a change since the previous checkpoint; opinions
and preferences reverse) feed Revision Accuracy; ``belief_half_life`` (an older change asked
again) feeds Revision Persistence. ``knowledge_update`` is an imported dataset's update question
(LongMemEval's): it feeds Revision Accuracy too, and is never generated. Every revision probe
also enters the error rate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from .._model import Fact, Probe
from ._audit_rules import AuditEvidence, answer_expressed
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict

__all__ = ["REVISION"]

_REVERSAL_FAMILIES: Final = {"opinion", "preference", "workflow_preferences"}
"""Slot families (the part of a slot name before ``/``) whose changes are reversals."""


def _revision(
    context: ProbeContext, new: Fact, old: Fact, previous_checkpoint: int, after: int
) -> Probe:
    slot = context.slot(new)
    value = slot.value(new.value)
    assert new.source_session is not None
    family = new.slot.partition("/")[0]
    if new.source_session < previous_checkpoint:
        subtype = "belief_half_life"
    elif family in _REVERSAL_FAMILIES:
        subtype = "preference_reversal"
    else:
        subtype = "fact_update"
    return Probe(
        "",  # the id is given once the checkpoint's probes are sampled
        after,
        "revision",
        subtype,
        context.asker(new.subject, new.source_session),
        new.subject,
        context.question(slot.question, new.subject),
        value.text,
        value.all_aliases(),
        slot.value(old.value).all_aliases(),
        (),
        None,
        None,
        tuple(sorted({*old.evidence_sessions, *new.evidence_sessions})),
        new.event_id,
        "positive",
        new.slot,
        new.source_session,
        value.all_aliases(),
    )


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """One revision probe per valid fact that directly replaced an expressed older value."""
    after = checkpoint.after
    for new in checkpoint.valid:
        closed = [
            f
            for f in context.closed_before(new, after)
            if f.source_session is not None and f.valid_to == new.valid_from
        ]
        if closed:
            yield _revision(context, new, closed[-1], checkpoint.previous, after)


def audit(probe: Probe, evidence: AuditEvidence) -> str | None:
    """The new value was said in the evidence sessions, and the old one before the change."""
    reason = answer_expressed(probe, evidence)
    if (
        reason is None
        and probe.event_session is not None
        and evidence.first_session_saying(probe.deprecated) >= probe.event_session
    ):
        return "the deprecated value was never expressed before the change"
    return reason


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """Correct when the new value is found and no old value is still asserted."""
    hit = context.find(list(probe["aliases"] or []))
    stale = context.find_asserted(list(probe["deprecated"] or []))
    update, deprecation = hit is not None, stale is None
    why = (
        f"new value {'found' if update else 'missing'}; "
        f"old value {repr(stale) + ' still present' if stale else 'gone'}"
    )
    return Verdict(hit or "", update and deprecation, None, update, deprecation, why)


REVISION = ProbeFamily(
    name="revision",
    subtypes=("fact_update", "preference_reversal", "belief_half_life", "knowledge_update"),
    sampling_rank=0,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={
        "error_rate": None,
        "revision_accuracy": frozenset({"fact_update", "preference_reversal", "knowledge_update"}),
        "revision_persistence": frozenset({"belief_half_life"}),
    },
    reader_prompt="reader",
    judge_prompt="judge_revision",
    careful_reader=True,
)
"""The revision family."""
