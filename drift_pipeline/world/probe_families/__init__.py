"""Probe families: each kind of question declared once, in one module.

A family (:class:`ProbeFamily`) declares its ``probe_type`` name and subtypes, generates its
candidate probes for a checkpoint, audits each probe's answerability against the transcripts,
judges an answer with a deterministic rule, names the reader's and the LLM judge's prompts, and
says which metrics its probes feed. The generic code (sampling and ids in
:mod:`drift_pipeline.world`, answering and scoring in :mod:`drift_pipeline.evaluation`) loops
over the registered families and never names one.

The built-in families are :mod:`.recall`, :mod:`.action` and :mod:`.revision`. Adding one is a
module defining a :class:`ProbeFamily` plus one registration: :func:`register_probe_family`, or
an entry point in the ``drift_pipeline.probe_families`` group of an installed package.
"""

from ._audit_rules import AuditEvidence, EventTurn, answer_expressed, decoy_never_said
from ._context import CheckpointFacts, ProbeContext
from ._family import AuditRule, CandidateGenerator, JudgeRule, ProbeFamily
from ._judging import RETRACTION_MARKERS, PreparedContext, Verdict, prepare_context
from ._registry import (
    ENTRY_POINT_GROUP,
    get_probe_family,
    probe_families,
    probe_family_names,
    register_probe_family,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "RETRACTION_MARKERS",
    "AuditEvidence",
    "AuditRule",
    "CandidateGenerator",
    "CheckpointFacts",
    "EventTurn",
    "JudgeRule",
    "PreparedContext",
    "ProbeContext",
    "ProbeFamily",
    "Verdict",
    "answer_expressed",
    "decoy_never_said",
    "get_probe_family",
    "prepare_context",
    "probe_families",
    "probe_family_names",
    "register_probe_family",
]
