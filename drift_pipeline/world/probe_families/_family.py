"""A probe family: everything that makes one ``probe_type`` a kind of question."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._model import Probe
from ._audit_rules import AuditEvidence
from ._context import CheckpointFacts, ProbeContext
from ._judging import PreparedContext, Verdict

__all__ = ["AuditRule", "CandidateGenerator", "JudgeRule", "ProbeFamily"]

CandidateGenerator = Callable[[ProbeContext, CheckpointFacts], Iterable[Probe | None]]
"""Yields a checkpoint's candidate probes (``None`` entries are skipped); ids are given later."""

AuditRule = Callable[[Probe, AuditEvidence], "str | None"]
"""Why a probe is unfair to ask (``None`` when it is answerable)."""

JudgeRule = Callable[[Mapping[str, Any], PreparedContext], Verdict]
"""Answers and scores a probe record from a prepared text (retrieved text or an answer)."""


@dataclass(frozen=True, eq=False)
class ProbeFamily:
    """One probe family, declared once: generation, audit, judging, prompts and metrics.

    Attributes:
        name: The ``probe_type`` value of its probes (and the scenario's name for it).
        subtypes: Every ``subtype`` it generates, in the order its groups are sampled.
        sampling_rank: Where its groups come in the checkpoint's round-robin (lower first): when
            the cap cuts a round short, earlier groups keep their probe.
        generate: Its candidate generator for one checkpoint.
        audit: Its answerability rule.
        judge: Its rule judge (the context judge's rule, and the rule judge over answers).
        feeds: Metric name → the subtypes that enter it (``None``: every subtype). The metric
            suite reads it: ``error_rate`` (and everything built on E(t): E_amn, MVOT, TES,
            DRIFT-C), ``action_alignment``, ``revision_accuracy`` (with update and deprecation
            correctness), ``revision_persistence`` and ``privacy``.
        reader_prompt: The LLM reader's prompt (``evaluation/prompts/<name>.md``).
        judge_prompt: The LLM judge's question: ``judge_answer``, ``judge_revision`` or
            ``judge_action``.
        compares_with_amnesiac: The LLM judge scores the answer against the amnesiac's answer
            to the same probe (spec §7.4), so the amnesiac must have answered it.
        careful_reader: Its probes ask what the memory says a value, a date, a yes/no or an
            action is, so the evaluation's careful reader reads them (and judges an LLM
            reader's answers the same way); ``judge`` then serves only families that opt out.
        verdict_of: For a family whose question is whether the memory states a value it must
            not know (canary), how the verdict on "the answer states the latent answer"
            becomes the family's verdict, given the probe record; applied after the careful
            reader's judge and the LLM judge alike. ``None``: that verdict is the family's.
        audits_every_turn: Its audit reads every turn that says a probe's terms, not only the
            turns carrying an event (:attr:`AuditEvidence.said_in`).
        asks_current: The subtypes whose answer is a slot's current value (``None``: every
            subtype). Their probes are not drawn for a slot that is unsettled at the checkpoint:
            the subject has mentioned a preference for it that has not yet become ground truth
            (a soft signal short of its k-th mention). The transcript then states a value the
            ground truth does not hold yet, so a memory that kept the mention would be marked
            wrong for remembering it.
    """

    name: str
    subtypes: tuple[str, ...]
    sampling_rank: int
    generate: CandidateGenerator
    audit: AuditRule
    judge: JudgeRule
    feeds: Mapping[str, frozenset[str] | None]
    reader_prompt: str = "reader"
    judge_prompt: str = "judge_answer"
    compares_with_amnesiac: bool = False
    careful_reader: bool = False
    verdict_of: Callable[[Verdict, Mapping[str, Any]], Verdict] | None = None
    audits_every_turn: bool = False
    asks_current: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a probe family needs a name (its probe_type)")
        if not self.subtypes or len(set(self.subtypes)) != len(self.subtypes):
            raise ValueError(f"probe family {self.name!r}: subtypes must be non-empty and unique")
        unknown_current = sorted((self.asks_current or frozenset()) - set(self.subtypes))
        if unknown_current:
            raise ValueError(
                f"probe family {self.name!r}: asks_current names undeclared subtypes "
                f"{unknown_current}; declared: {', '.join(self.subtypes)}"
            )
        for metric, subtypes in self.feeds.items():
            unknown = sorted(set(subtypes or ()) - set(self.subtypes))
            if unknown:
                raise ValueError(
                    f"probe family {self.name!r}: metric {metric!r} names undeclared subtypes "
                    f"{unknown}; declared: {', '.join(self.subtypes)}"
                )

    def asks_current_value(self, subtype: str) -> bool:
        """Whether a probe of ``subtype`` asks a slot's current value (see ``asks_current``)."""
        return self.asks_current is None or subtype in self.asks_current

    def feeds_metric(self, metric: str, subtype: str) -> bool:
        """Whether a probe of ``subtype`` enters ``metric``."""
        if metric not in self.feeds:
            return False
        subtypes = self.feeds[metric]
        return subtypes is None or subtype in subtypes
