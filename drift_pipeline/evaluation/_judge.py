"""The context judge: the default, deterministic reader and judge.

It reads only the text a backend returned (plus the soft-gate buffer) and the probe's latent
answer; it never sees a transcript. Each probe is answered and scored by its family's rule judge
(:attr:`~drift_pipeline.world.probe_families.ProbeFamily.judge`): recall counts a positive
answer when one of its aliases occurs in the text (normalised, word-bounded) and a negative
probe's decoy as asserted when it occurs at all; revision also wants the old value gone; action
chooses the one option whose terms the text supports, or the default option.

Lines that say a statement is no longer true (``RETRACTION_MARKERS``) do not assert their value:
the rules ignore them when checking that an old value is gone, that a decoy is absent, and which
action the text supports. Positive answers may come from any line.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from drift_pipeline.world.probe_families import (
    RETRACTION_MARKERS,
    PreparedContext,
    Verdict,
    get_probe_family,
    prepare_context,
)

__all__ = [
    "ANSWER_COLUMNS",
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "RETRACTION_MARKERS",
    "Verdict",
    "judge",
    "judge_all",
]

JUDGE_NAME = "context"
JUDGE_VERSION = "1"


def judge(probe: dict[str, Any], context: str) -> Verdict:
    """Answer and score one probe from ``context`` (the text handed to the reader)."""
    return _judge_prepared(probe, prepare_context(context))


def _judge_prepared(probe: dict[str, Any], prepared: PreparedContext) -> Verdict:
    return get_probe_family(probe["probe_type"]).judge(probe, prepared)


ANSWER_COLUMNS = (
    "replicate",
    "checkpoint",
    "probe_id",
    "probe_type",
    "subtype",
    "answer",
    "correct",
    "action_score",
    "update_correct",
    "deprecation_correct",
    "judge",
    "rationale",
)


def judge_all(probes: pa.Table, contexts: dict[tuple[int, str], str]) -> dict[str, list[Any]]:
    """Judge every probe; ``contexts`` maps (replicate, probe_id) to text (missing → empty).

    Returns:
        Columns of the answers, in the order of ``probes``.
    """
    columns: dict[str, list[Any]] = {name: [] for name in ANSWER_COLUMNS}
    # Many probes share one context (a full-context memory returns the same tail to every
    # question of a checkpoint): normalise each distinct text once.
    prepared: dict[str, PreparedContext] = {}
    for probe in probes.to_pylist():
        key = (probe["replicate"], probe["probe_id"])
        context = contexts.get(key, "")
        if context not in prepared:
            prepared[context] = prepare_context(context)
        verdict = _judge_prepared(probe, prepared[context])
        row = {
            "replicate": probe["replicate"],
            "checkpoint": probe["checkpoint"],
            "probe_id": probe["probe_id"],
            "probe_type": probe["probe_type"],
            "subtype": probe["subtype"],
            "answer": verdict.answer,
            "correct": verdict.correct,
            "action_score": verdict.action_score,
            "update_correct": verdict.update_correct,
            "deprecation_correct": verdict.deprecation_correct,
            "judge": f"{JUDGE_NAME}@{JUDGE_VERSION}",
            "rationale": verdict.rationale,
        }
        for name in ANSWER_COLUMNS:
            columns[name].append(row[name])
    return columns
