"""Action: does what the memory holds change what an agent does (spec §6.1, §7.4).

An action probe is a multiple-choice task built from a slot's action frame: one option fits
the current value (utility +1), up to three fit an old or never-held value (−1), and one is
what an agent with no memory would do (the default, 0). Subtypes are the frames' own
(``preference_driven``, ``constraint_aware``, ``style_adaptive``). Action probes enter the error
rate and Action Alignment; the LLM judge compares each answer with the amnesiac's action.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .._model import Fact, Probe, ProbeOption
from ._audit_rules import AuditEvidence, answer_expressed
from ._context import CheckpointFacts, ProbeContext
from ._family import ProbeFamily
from ._judging import PreparedContext, Verdict

__all__ = ["ACTION"]


def _action(context: ProbeContext, fact: Fact, after: int) -> Probe | None:
    slot = context.slot(fact)
    frame = slot.action
    if frame is None:
        return None
    value = slot.value(fact.value)
    old = [
        slot.value(f.value)
        for f in context.closed_before(fact, after)
        if f.source_session is not None
    ]
    decoys = context.unsaid(fact.subject, slot, after)
    context.rng.shuffle(decoys)
    wrong = ([old[-1]] if old else []) + decoys[: 3 - min(len(old), 1)]
    options = [ProbeOption(frame.option.format(value=value.text), value.all_aliases(), 1)]
    options += [ProbeOption(frame.option.format(value=v.text), v.all_aliases(), -1) for v in wrong]
    options.append(ProbeOption(frame.default_option, (), 0))
    context.rng.shuffle(options)
    # Option texts name the principal through the same placeholders as questions.
    options = [
        ProbeOption(context.question(o.text, fact.subject), o.terms, o.utility) for o in options
    ]
    correct = next(i for i, o in enumerate(options) if o.utility == 1)
    default = next(i for i, o in enumerate(options) if o.utility == 0 and not o.terms)
    return Probe(
        "",  # the id is given once the checkpoint's probes are sampled
        after,
        "action",
        frame.subtype,
        context.asker(fact.subject, fact.source_session),
        fact.subject,
        context.question(frame.question, fact.subject),
        options[correct].text,
        value.all_aliases(),
        tuple(a for v in old for a in v.all_aliases()),
        tuple(options),
        correct,
        default,
        fact.evidence_sessions,
        fact.event_id,
        "positive",
        fact.slot,
        fact.source_session,
        value.all_aliases(),
    )


def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
    """One action probe per valid fact whose slot has an action frame."""
    for fact in checkpoint.valid:
        yield _action(context, fact, checkpoint.after)


def audit(probe: Probe, evidence: AuditEvidence) -> str | None:
    """The current value (the right option's terms) was said in the evidence sessions."""
    return answer_expressed(probe, evidence)


def judge(probe: Mapping[str, Any], context: PreparedContext) -> Verdict:
    """Answer by a fixed policy: the one option whose terms the text asserts.

    With no support, or support for several options, act as an agent with no memory would (the
    default option); the score is the chosen option's utility against the default's.
    """
    options = probe["options"] or []
    default = probe["default_option"]
    supported = [
        index
        for index, option in enumerate(options)
        if index != default and context.find_asserted(list(option["terms"] or []))
    ]
    chosen = supported[0] if len(supported) == 1 else default
    utility = int(options[chosen]["utility"]) - int(options[default]["utility"])
    score = (utility > 0) - (utility < 0)
    why = (
        f"only option {chosen} is supported"
        if len(supported) == 1
        else f"{len(supported)} options supported; default action"
    )
    return Verdict(
        str(options[chosen]["text"]), chosen == probe["correct_option"], score, None, None, why
    )


ACTION = ProbeFamily(
    name="action",
    subtypes=("preference_driven", "constraint_aware", "style_adaptive"),
    sampling_rank=2,
    generate=generate,
    audit=audit,
    judge=judge,
    feeds={"error_rate": None, "action_alignment": None},
    reader_prompt="reader",
    judge_prompt="judge_action",
    careful_reader=True,
    compares_with_amnesiac=True,
)
"""The action family."""
