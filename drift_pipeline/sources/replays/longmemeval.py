"""The LongMemEval importer: each instance's haystack becomes one imported world.

``drift run longmemeval:PATH.json`` replays the user's copy of a LongMemEval file (Wu et al.,
ICLR 2025; ``longmemeval_s``, ``_m``, ``_oracle`` or the cleaned release, never shipped with the
package). Unlike LoCoMo, every instance has its own history, so every instance is its own world:

- **Sessions** are the instance's haystack sessions in order of their dates (the oracle file
  does not sort them; equal dates keep the file's order), each at its ``haystack_dates`` time.
  Sessions dated after ``question_date`` are left out: they could not inform the answer.
- **Turns** keep their role; the user is the entity ``user``, the assistant ``assistant``.
  ``has_answer`` flags and the evidence session ids only label turns and sessions for the
  harness (evidence sessions are signal, the rest noise); a backend never sees them.
- **The question** is one probe asked after the last session, with the question date in its
  text as LongMemEval's own prompt gives it. Its ``question_type`` is the probe's subtype
  (:data:`TYPE_SUBTYPES`); ``knowledge-update`` questions are revision probes, abstention
  questions (ids ending ``_abs``) negative probes of subtype ``abstention``.

Malformed instances are one-line errors naming the question id and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from drift_pipeline.sources._base import SourceEntity, SourceError
from drift_pipeline.sources._tables import TableSource

from ._common import DatasetFile, Record, profile_row, read_json_array, source_id_part

__all__ = [
    "ABSTENTION_SUBTYPE",
    "IMPORTER_VERSION",
    "TYPE_SUBTYPES",
    "open_longmemeval",
    "parse_longmemeval_date",
]

IMPORTER_VERSION: Final = "1"
"""Version of this importer's mapping, recorded with every result (bumped when it changes)."""

HORIZON: Final = "long"
"""Every instance is one long-horizon world (its history spans weeks to months)."""

USER: Final = "user"
ASSISTANT: Final = "assistant"

TYPE_SUBTYPES: Final[Mapping[str, str]] = {
    "single-session-user": "single_session_user",
    "single-session-assistant": "single_session_assistant",
    "single-session-preference": "single_session_preference",
    "multi-session": "multi_session",
    "knowledge-update": "knowledge_update",
    "temporal-reasoning": "temporal_reasoning",
}
"""LongMemEval's question types as probe subtypes."""

ABSTENTION_SUBTYPE: Final = "abstention"
"""The subtype of every abstention question, whatever its type (kept in the probe's slot)."""

NOT_APPLICABLE: Final = frozenset({"action_alignment", "privacy", "selectivity", "drift_c"})
"""No action or canary questions, so no Action Alignment, Privacy or DRIFT-C; no event values
or decoys to find in memory, so no Selectivity (it is measured on content). Revision Accuracy
is measured on knowledge updates (as update correctness: no old value is named)."""

AUDIT: Final = "imported: each probe's evidence sessions are the dataset's answer session ids"

_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([A-Za-z]+\))?\s+(\d{1,2}):(\d{2})")


def parse_longmemeval_date(text: str) -> datetime:
    """A LongMemEval date (``2023/05/30 (Tue) 23:40``) as a naive datetime.

    Raises:
        ValueError: The text is not in that form or names no real date.
    """
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a date like '2023/05/30 (Tue) 23:40'")
    year, month, day, hour, minute = (int(part) for part in match.groups())
    return datetime(year, month, day, hour, minute)


def open_longmemeval(path: str) -> list[TableSource]:
    """Every instance of the LongMemEval file at ``path``, one source (world) each.

    Raises:
        SourceError: One line naming the instance and field at fault.
    """
    dataset = read_json_array(path, "LongMemEval")
    sources = [_instance(dataset, number, data) for number, data in enumerate(dataset.records)]
    ids = [s.id for s in sources]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise SourceError(f"{path}: question id of {repeated[0]!r} is used by more than one record")
    return sources


def _date(record: Record, field: str, text: object) -> datetime:
    try:
        return parse_longmemeval_date(str(text))
    except ValueError as error:
        raise record.fail(f"field {field!r}: {error}") from None


def _instance(dataset: DatasetFile, number: int, data: object) -> TableSource:
    if not isinstance(data, Mapping):
        raise SourceError(f"{dataset.path}: record {number} is not a JSON object")
    question_id = Record(dataset.path, f"record {number}", data).text("question_id")
    record = Record(dataset.path, question_id, data)
    kind = record.text("question_type")
    if kind not in TYPE_SUBTYPES:
        raise record.fail(f"question_type {kind!r} is not one of {', '.join(TYPE_SUBTYPES)}")
    asked = _date(record, "question_date", record.text("question_date"))
    ids = record.field("haystack_session_ids", list)
    dates = record.field("haystack_dates", list)
    sessions = record.field("haystack_sessions", list)
    if not len(ids) == len(dates) == len(sessions):
        raise record.fail(
            f"haystack_session_ids, haystack_dates and haystack_sessions have different lengths "
            f"({len(ids)}, {len(dates)}, {len(sessions)})"
        )
    moments = [_date(record, f"haystack_dates[{i}]", d) for i, d in enumerate(dates)]
    order = sorted(
        (i for i in range(len(ids)) if moments[i] <= asked), key=lambda i: (moments[i], i)
    )
    if not order:
        raise record.fail("has no haystack session dated at or before its question_date")
    evidence_ids = {str(i) for i in record.field("answer_session_ids", list)}
    kept = [str(ids[i]) for i in order]
    evidence = [index for index, sid in enumerate(kept) if sid in evidence_ids]
    turns = [_turns(record, i, sessions[i]) for i in order]
    tables: dict[str, list[dict[str, Any]]] = {
        "latent_profiles": [profile_row(USER, "human"), profile_row(ASSISTANT, "assistant_agent")],
        "event_schedules": [
            {
                "session_index": index,
                "sim_time": moments[i],
                "tier": "signal" if index in evidence else "noise",
                "participants": [USER, ASSISTANT],
                "pattern": "dialogue",
            }
            for index, i in enumerate(order)
        ],
        "transcripts": [
            {
                "session_index": index,
                "turn_index": k,
                "speaker": USER if turn["role"] == "user" else ASSISTANT,
                "role": str(turn["role"]),
                "content": str(turn["content"]),
                "label_kind": "evidence" if turn.get("has_answer") is True else "dialogue",
            }
            for index, session in enumerate(turns)
            for k, turn in enumerate(session)
        ],
        "ground_truth": [],
        "probes": [_probe(record, question_id, kind, asked, len(order), evidence)],
    }
    return TableSource(
        kind="longmemeval",
        source_id=f"longmemeval-{source_id_part(question_id)}",
        version=f"longmemeval-importer-{IMPORTER_VERSION}",
        content_hash=dataset.sha256,
        origin=dataset.path,
        audit=AUDIT,
        worlds={HORIZON: tables},
        entities=[SourceEntity(USER, "human"), SourceEntity(ASSISTANT, "assistant_agent")],
        not_applicable=NOT_APPLICABLE,
    )


def _turns(record: Record, number: int, session: object) -> list[Mapping[str, Any]]:
    if not isinstance(session, list):
        raise record.fail(f"haystack_sessions[{number}] is {type(session).__name__}, expected list")
    checked: list[Mapping[str, Any]] = []
    for k, data in enumerate(session):
        turn = record.child(f"haystack_sessions[{number}][{k}]", data)
        role = turn.text("role")
        if role not in (USER, ASSISTANT):
            raise turn.fail(f"role {role!r} is neither 'user' nor 'assistant'")
        turn.field("content", str)
        checked.append(turn.data)
    return checked


def _probe(
    record: Record,
    question_id: str,
    kind: str,
    asked: datetime,
    sessions: int,
    evidence: Sequence[int],
) -> dict[str, Any]:
    """The instance's question as a probe.

    An answer given as a number becomes its decimal text. A question whose evidence sessions
    are all missing from the haystack may rest on any session (every session is its evidence).
    """
    question = record.text("question")
    answer = str(record.field("answer", (str, int, float))).strip()
    if not answer:
        raise record.fail("field 'answer' is empty")
    abstention = question_id.endswith("_abs")
    subtype = ABSTENTION_SUBTYPE if abstention else TYPE_SUBTYPES[kind]
    update = kind == "knowledge-update" and not abstention
    return {
        "checkpoint": sessions,
        "probe_id": question_id,
        "probe_type": "revision" if update else "recall",
        "subtype": subtype,
        "asker": ASSISTANT,
        "subject": USER,
        # LongMemEval's reader is told the date the question is asked on; so is the memory.
        "question": f"{question} (asked on {asked:%Y-%m-%d})",
        "answer": answer,
        # An abstention question names no tempting value: nothing for the memory to assert.
        "aliases": [] if abstention else [answer],
        "evidence_sessions": list(evidence) or list(range(sessions)),
        "polarity": "negative" if abstention else "positive",
        "slot": f"longmemeval/{TYPE_SUBTYPES[kind]}",
    }
