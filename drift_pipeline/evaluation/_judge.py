"""The context judge: the default, deterministic reader and judge.

It reads only the text a backend returned (plus the soft-gate buffer) and the probe's latent
answer; it never sees a transcript. A probe of a family read by the careful reader
(:attr:`~drift_pipeline.world.probe_families.ProbeFamily.careful_reader`: recall, revision,
action) is read by :func:`~.reader.read_context` (a mention counts only when it is the subject's
sincere, current assertion; the latest dated assertion wins) and scored by
:func:`~.reader.judge_reading`. An LLM reader's answer is turned into a reading by
:func:`~.reader.reading_from_answer` and scored by the same judge (:func:`judge_answer`). A
family that opts out is scored by its own rule judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.world.probe_families import (
    RETRACTION_MARKERS,
    PreparedContext,
    Verdict,
    get_probe_family,
    prepare_context,
)

from ._reader_probes import reader_probe
from .reader import READER_NAME, READER_VERSION, ReaderProbe, Reading, judge_reading, read_context
from .reader import reading_from_answer as _reading_from_answer

__all__ = [
    "ANSWER_COLUMNS",
    "JUDGE_ID",
    "JUDGE_NAME",
    "JUDGE_VERSION",
    "RETRACTION_MARKERS",
    "Verdict",
    "judge",
    "judge_all",
    "judge_answer",
]

JUDGE_NAME = "context"
JUDGE_VERSION = "2"
"""Version 2: the careful reader replaced substring presence for recall, revision and action."""


def _verdict(row: Mapping[str, Any], probe: ReaderProbe, reading: Reading) -> Verdict:
    judged = judge_reading(reading, probe)
    revision = row.get("probe_type") == "revision"
    action = probe.kind == "action"
    verdict = Verdict(
        reading.answer or "",
        judged.correct,
        int(judged.score) if action else None,
        judged.update_correct if revision else None,
        judged.deprecation_correct if revision else None,
        f"{judged.rationale}; {reading.rationale}"[:400],
    )
    # A family asking what the memory must not know scores the inverse of a match (canary).
    turn = get_probe_family(str(row.get("probe_type"))).verdict_of
    return turn(verdict, row) if turn is not None else verdict


def judge(probe: Mapping[str, Any], context: str) -> Verdict:
    """Answer and score one probe from ``context`` (the text handed to the reader)."""
    family = get_probe_family(probe["probe_type"])
    if not family.careful_reader:
        return family.judge(probe, prepare_context(context))
    view = reader_probe(probe)
    return _verdict(probe, view, read_context(context, view))


def judge_answer(probe: Mapping[str, Any], answer: str) -> Verdict:
    """Score a reader's free-text ``answer`` by the same rules as a retrieved context."""
    family = get_probe_family(probe["probe_type"])
    if not family.careful_reader:
        return family.judge(probe, prepare_context(answer))
    view = reader_probe(probe)
    return _verdict(probe, view, _reading_from_answer(answer, view))


JUDGE_ID = f"{JUDGE_NAME}@{JUDGE_VERSION}+{READER_NAME}@{READER_VERSION}"
"""What the ``judge`` column records for the context judge."""

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


# The last probes table judged, as rows and the reader's views of them (by row position, built
# on first use): a world's amnesiac and every arm are judged on the same table, and converting
# it is most of what a cell's judging costs beside reading. Kept under the table's id with the
# table itself, so a later table that reuses the id is never taken for it.
_Kept = tuple[pa.Table, list[dict[str, Any]], dict[int, ReaderProbe]]
_tables: BoundedCache[int, _Kept] = BoundedCache(1)


def _kept(probes: pa.Table) -> _Kept:
    """``probes.to_pylist()`` and its views, kept for the next call on the same table.

    Rows and views are only read, never changed.
    """
    kept = _tables.get(id(probes))
    if kept is None or kept[0] is not probes:
        _tables.clear()  # the last table's rows go before this one's are built
        kept = _tables.put(id(probes), (probes, probes.to_pylist(), {}))
    return kept


def judge_all(probes: pa.Table, contexts: dict[tuple[int, str], str]) -> dict[str, list[Any]]:
    """Judge every probe; ``contexts`` maps (replicate, probe_id) to text (missing → empty).

    Returns:
        Columns of the answers, in the order of ``probes``.
    """
    columns: dict[str, list[Any]] = {name: [] for name in ANSWER_COLUMNS}
    # Families with their own rule judge share one normalisation per distinct text (a
    # full-context memory returns the same tail to every question of a checkpoint).
    prepared: dict[str, PreparedContext] = {}
    _, rows, views = _kept(probes)
    for position, probe in enumerate(rows):
        key = (probe["replicate"], probe["probe_id"])
        context = contexts.get(key, "")
        family = get_probe_family(probe["probe_type"])
        if family.careful_reader:
            # A view is a function of its row alone: kept with the rows, no row is keyed again.
            if (view := views.get(position)) is None:
                view = views[position] = reader_probe(probe)
            verdict = _verdict(probe, view, read_context(context, view))
        else:
            if context not in prepared:
                prepared[context] = prepare_context(context)
            verdict = family.judge(probe, prepared[context])
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
            "judge": JUDGE_ID,
            "rationale": verdict.rationale,
        }
        for name in ANSWER_COLUMNS:
            columns[name].append(row[name])
    return columns
