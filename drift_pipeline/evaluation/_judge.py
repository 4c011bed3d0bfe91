"""The context judge: the default, deterministic reader and judge (DESIGN §6).

It reads only the text a backend returned (plus the soft-gate buffer) and the probe's latent
answer; it never sees a transcript. A positive answer counts when one of its aliases occurs in
the text (normalised, word-bounded); a negative probe's decoy counts as asserted when it occurs
at all, which is strict on purpose: a memory that keeps third-party chatter verbatim is fooled.
Action probes are answered by a fixed policy: choose the one option whose terms the text
supports; with no support, or support for several options, act as an agent with no memory
would (the default option).

Lines that say a statement is no longer true (``RETRACTION_MARKERS``, e.g. a temporal memory's
"(no longer true since 2027-03-01)") do not assert their value: they are ignored when checking
that an old value is gone, that a decoy is absent, and which action the text supports, exactly
as a careful reader would ignore them. Positive answers may come from any line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow as pa

from drift_pipeline.textmatch import normalise, phrase_pattern

JUDGE_NAME = "context"
JUDGE_VERSION = "1"
RETRACTION_MARKERS = ("no longer true", "no longer", "superseded", "not anymore", "outdated")


@dataclass(frozen=True)
class Verdict:
    """How the reader answered one probe and how the judge scored it.

    Attributes:
        answer: The reader's answer (a matched alias, ``yes``/``no``, or the chosen option).
        correct: Whether it is right under the latent ground truth.
        action_score: +1/0/−1 against the amnesiac action (action probes only).
        update_correct: The new value is present (revision probes only).
        deprecation_correct: The old value is absent (revision probes only).
        rationale: One line: what was found.
    """

    answer: str
    correct: bool
    action_score: int | None
    update_correct: bool | None
    deprecation_correct: bool | None
    rationale: str


# A maximal run of letters and digits: the unit the word-bounded patterns respect.
_RUN = re.compile(r"[^\W_]+")


@lru_cache(maxsize=65536)
def _runs(phrase: str) -> frozenset[str]:
    return frozenset(_RUN.findall(normalise(phrase)))


def _found(haystack: str, runs: frozenset[str], phrases: list[str]) -> str | None:
    """The first of ``phrases`` that occurs word-bounded in ``haystack`` (whose runs are ``runs``).

    A word-bounded match makes every letter-and-digit run of the phrase a whole run of the text,
    so a phrase with a run the text lacks cannot match: that set test rejects most phrases
    without scanning a long context. Only the survivors run their pattern, so the verdict is
    exactly the pattern's.
    """
    for phrase in phrases:
        if not phrase:
            continue
        if _runs(phrase) <= runs and phrase_pattern(phrase).search(haystack):
            return phrase
    return None


def _asserted(text: str) -> str:
    """The normalised text without lines that retract what they mention."""
    if not any(marker in text for marker in RETRACTION_MARKERS):
        return text
    return "\n".join(
        line for line in text.split("\n") if not any(m in line for m in RETRACTION_MARKERS)
    )


@dataclass(frozen=True)
class _Prepared:
    """A context normalised once, shared by every probe answered from it."""

    text: str
    asserted: str
    text_runs: frozenset[str]
    asserted_runs: frozenset[str]


def _prepare(context: str) -> _Prepared:
    # Normalise line by line: the retraction rule works on lines, normalise() joins whitespace.
    text = "\n".join(normalise(line) for line in context.split("\n")) if context else ""
    asserted = _asserted(text)
    text_runs = frozenset(_RUN.findall(text))
    asserted_runs = text_runs if asserted is text else frozenset(_RUN.findall(asserted))
    return _Prepared(text, asserted, text_runs, asserted_runs)


def judge(probe: dict[str, Any], context: str) -> Verdict:
    """Answer and score one probe from ``context`` (the text handed to the reader)."""
    return _judge_prepared(probe, _prepare(context))


def _judge_prepared(probe: dict[str, Any], prepared: _Prepared) -> Verdict:
    text, asserted = prepared.text, prepared.asserted
    text_runs, asserted_runs = prepared.text_runs, prepared.asserted_runs
    kind = probe["probe_type"]
    aliases: list[str] = list(probe["aliases"] or [])
    if kind == "action":
        options = probe["options"] or []
        default = probe["default_option"]
        supported = [
            index
            for index, option in enumerate(options)
            if index != default and _found(asserted, asserted_runs, list(option["terms"] or []))
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
    if probe["polarity"] == "negative":
        hit = _found(asserted, asserted_runs, aliases)
        return Verdict(
            "yes" if hit else "no",
            hit is None,
            None,
            None,
            None,
            f"decoy {hit!r} asserted" if hit else "decoy absent",
        )
    hit = _found(text, text_runs, aliases)
    if kind == "revision":
        stale = _found(asserted, asserted_runs, list(probe["deprecated"] or []))
        update, deprecation = hit is not None, stale is None
        why = (
            f"new value {'found' if update else 'missing'}; "
            f"old value {repr(stale) + ' still present' if stale else 'gone'}"
        )
        return Verdict(hit or "", update and deprecation, None, update, deprecation, why)
    return Verdict(
        hit or "",
        hit is not None,
        None,
        None,
        None,
        f"found {hit!r}" if hit else "answer not in context",
    )


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
    prepared: dict[str, _Prepared] = {}
    for probe in probes.to_pylist():
        key = (probe["replicate"], probe["probe_id"])
        context = contexts.get(key, "")
        if context not in prepared:
            prepared[context] = _prepare(context)
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
