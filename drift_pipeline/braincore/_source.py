"""The ``braincore:`` world source: a BrainCore dataset imported as one DRIFT world.

``drift run braincore:PATH.jsonl`` runs every backend, gate, reader and table on it. The world
has one replicate at the short horizon: every record is a session, in file order, whose turns
are its memory items, said by the entity ``user`` in the order listed. Every query becomes a
probe asked by ``user`` after the last session, its answer the expected answer and its evidence
the query's own session. Retrieval and temporal queries are ``recall`` probes (subtype ``fact``:
DRIFT's ``temporal`` subtype asks for a date); contradiction queries are ``revision`` probes
(``fact_update``). Each probe's
evidence terms are the answer's aliases its required memories say (else those memories' texts),
so the answerability audit finds its evidence. The schema
does not say which value a revision replaced, so those probes carry no deprecated values and
are judged on the new value alone. An answer's aliases are the answer and, when it starts with
an article, the answer without it. Probe families the data has none of (action, canary, …)
report not applicable.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from drift_pipeline.sources import SourceEntity, SourceError, TableSource
from drift_pipeline.textmatch import contains_any

from ._dataset import (
    BrainCoreDataset,
    BrainCoreError,
    BrainCoreQuery,
    BrainCoreRecord,
    load_dataset,
)

__all__ = ["IMPORTER_VERSION", "open_braincore"]

IMPORTER_VERSION = "1"
"""Bumped whenever the same dataset would import differently."""

USER = "user"
AUDIT = "imported: each probe's evidence is the session of its query's required memories"
_FIRST_SESSION = datetime(2000, 1, 1, 9)
_PROBES = {
    "retrieval": ("recall", "fact"),
    # DRIFT's recall/temporal asks for a date; a BrainCore temporal query asks which came first.
    "temporal": ("recall", "fact"),
    "contradiction": ("revision", "fact_update"),
}


def open_braincore(path: str) -> TableSource:
    """Import the BrainCore dataset at ``path`` as one world (``drift run braincore:PATH``).

    Args:
        path: The JSONL dataset.

    Returns:
        The world source, id ``braincore-<file stem>``, its content hash the file's sha256.

    Raises:
        SourceError: One line naming the malformed record and field.
    """
    try:
        dataset = load_dataset(path)
    except BrainCoreError as error:
        raise SourceError(str(error)) from None
    stem = re.sub(r"[^a-z0-9]+", "-", Path(path).stem.lower()).strip("-") or "dataset"
    return TableSource(
        kind="braincore",
        source_id=f"braincore-{stem}",
        version=IMPORTER_VERSION,
        content_hash=dataset.sha256,
        origin=path,
        audit=AUDIT,
        worlds={"short": _tables(dataset)},
        entities=(SourceEntity(USER, "human"),),
    )


def _session_times(dataset: BrainCoreDataset) -> list[datetime]:
    """A session's time is its first memory's (one day after the last session's without one).

    Times never go back: a session dated before the previous one is placed at the previous
    one's time, since sessions are replayed in file order.
    """
    times: list[datetime] = []
    for record in dataset.records:
        given = [m.time_order[0] for m in record.memories if m.timestamp is not None]
        previous = times[-1] if times else None
        if given:
            moment = given[0] if previous is None else max(given[0], previous)
        else:
            moment = _FIRST_SESSION if previous is None else previous + timedelta(days=1)
        times.append(moment)
    return times


def _tables(dataset: BrainCoreDataset) -> dict[str, list[dict[str, Any]]]:
    checkpoint = len(dataset.records)
    times = _session_times(dataset)
    indexed = list(enumerate(dataset.records))
    return {
        "latent_profiles": [
            {
                "entity_id": USER,
                "entity_type": "human",
                "name": USER,
                "stable_attributes": "{}",
                "initial_state": "{}",
            }
        ],
        "event_schedules": [
            {
                "session_index": index,
                "sim_time": times[index],
                "tier": "signal" if record.queries else "noise",
                "participants": [USER],
                "pattern": "dialogue",
            }
            for index, record in indexed
        ],
        "transcripts": [
            {
                "session_index": index,
                "turn_index": turn,
                "speaker": USER,
                "role": "user",
                "content": memory.content,
                "label_event_id": memory.memory_id,
                "label_kind": "event" if memory.memory_id in _required(record) else "noise",
            }
            for index, record in indexed
            for turn, memory in enumerate(record.memories)
        ],
        "ground_truth": [
            {
                "checkpoint": checkpoint,
                "fact_id": query.query_id,
                "subject": USER,
                "slot": query.query_id,
                "slot_kind": "functional",
                "value": query.expected_answer,
                "valid_from": index,
                "current": True,
                "source_session": index,
                "tier": "signal",
                "evidence_sessions": [index],
            }
            for index, record in indexed
            for query in record.queries
        ],
        "probes": [
            {
                "checkpoint": checkpoint,
                "probe_id": query.query_id,
                "probe_type": _PROBES[query.query_type][0],
                "subtype": _PROBES[query.query_type][1],
                "asker": USER,
                "subject": USER,
                "question": query.query_text,
                "answer": query.expected_answer,
                "aliases": _aliases(query.expected_answer),
                "deprecated": [],
                "evidence_sessions": [index],
                "polarity": "positive",
                "slot": query.query_id,
                "evidence_terms": _evidence_terms(record, query),
            }
            for index, record in indexed
            for query in record.queries
        ],
    }


def _aliases(answer: str) -> list[str]:
    """The answer, and without a leading article ("the pottery class" is said "a pottery class")."""
    bare = re.sub(r"^(the|a|an)\s+", "", answer.strip(), flags=re.IGNORECASE)
    return [answer] if bare in ("", answer) else [answer, bare]


def _evidence_terms(record: BrainCoreRecord, query: BrainCoreQuery) -> list[str]:
    """What the answerability audit looks for in the evidence session's turns.

    The answer's aliases that the required memories say; when they say none verbatim (a free
    answer), the required memories' own texts: the dataset names them as the evidence.
    """
    texts = [record.memory(m).content for m in query.required_memory_ids]
    said = [a for a in _aliases(query.expected_answer) if any(contains_any(t, [a]) for t in texts)]
    return said or [t for t in texts if t.strip()]


def _required(record: BrainCoreRecord) -> set[str]:
    return {m for q in record.queries for m in q.required_memory_ids}
