"""The ``braincore:`` world source: a BrainCore dataset imported as one DRIFT world.

``drift run braincore:PATH.jsonl`` runs every backend, gate, reader and table on it. The world
has one replicate at the short horizon. What each part becomes:

- **Memory items** are notes the memory holds, not things anyone said: each is a turn spoken by
  the entity ``memory`` (role ``tool``: data handed to the memory, not a person's words), its
  content verbatim. The same entity asks every question, so a backend is asked about exactly the
  notes it was given, and a reader sees each line as the memory's own note
  (``[2024-01-11] memory: Greta Ivers adopted a hamster named Pepper.``).
- **Sessions** are a record's items that share a time: an item is dated by its own timestamp; an
  item without one shares the session of the item listed before it (the schema lists memories
  chronologically), or of the first timed item after it when none is listed before. A record
  without any timestamp is one session, a day after the latest session of the records before it
  in the file (the first such at 2000-01-01 09:00). Sessions of every record are replayed in time
  order, records in file order where times are equal.
- **Subjects**: a query is about the person it names when one of its required memories opens
  with that name, as a note about them does (``Greta Ivers`` in "Which city does Greta Ivers
  live in now?" beside "Greta Ivers lives in Utrecht."); a query that names no one is about the
  person all its required memories open with, when there is one. Each such person is a human
  entity of the world, named as written; any other query is about ``user``.
- **Queries** become probes asked after the last session, their answer the expected answer and
  their evidence the sessions holding their required memories (the record's sessions when it
  names none). Retrieval and temporal queries are ``recall`` probes (subtype ``fact``: DRIFT's
  ``temporal`` subtype asks for a date); contradiction queries are ``revision`` probes
  (``fact_update``). Each probe's evidence terms are the answer's aliases its required memories
  say (else those memories' texts), so the answerability audit finds its evidence. The schema
  does not say which value a revision replaced, so those probes carry no deprecated values and
  are judged on the new value alone. An answer's aliases are the answer and, when it starts
  with an article, the answer without it.

The data asks no action or canary questions, and an item no query asks about (a noise turn, in a
noise session when its session holds no asked-about item) is still a memory, not small talk: so
Action Alignment, Privacy and Selectivity are not applicable, and neither is DRIFT-C, which
would renormalise over the rest and look comparable to a generated world's. Arms rank by MVOT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

from drift_pipeline.sources import SourceEntity, SourceError, TableSource
from drift_pipeline.textmatch import contains_any

from ._dataset import (
    BrainCoreDataset,
    BrainCoreError,
    BrainCoreMemory,
    BrainCoreQuery,
    BrainCoreRecord,
    load_dataset,
)

__all__ = ["IMPORTER_VERSION", "MEMORY", "NOT_APPLICABLE", "USER", "open_braincore"]

IMPORTER_VERSION = "2"
"""Bumped whenever the same dataset would import differently."""

MEMORY: Final = "memory"
"""The entity whose notes the memory items are, and who asks every question."""

USER: Final = "user"
"""The subject of a query that names no one."""

NOT_APPLICABLE: Final = frozenset({"action_alignment", "privacy", "selectivity", "drift_c"})
"""Metrics a BrainCore dataset cannot support (see the module's docstring)."""

AUDIT = "imported: each probe's evidence is the sessions of its query's required memories"
_FIRST_SESSION = datetime(2000, 1, 1, 9)
_PROBES = {
    "retrieval": ("recall", "fact"),
    # DRIFT's recall/temporal asks for a date; a BrainCore temporal query asks which came first.
    "temporal": ("recall", "fact"),
    "contradiction": ("revision", "fact_update"),
}
# A run of capitalised words: a person's name as a question writes it ("Greta Ivers",
# "Anne-Marie Roy"); a possessive ending is no part of it.
_NAME_RUN = re.compile(r"\b[A-Z]\w*(?:(?:\s+|-)[A-Z]\w*)*")
# Capitalised words a note opens with that name no one ("The oboe is Ilya's.").
_NOT_NAMES = frozenset(
    {
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "its",
        "it",
        "i",
        "we",
        "they",
        "he",
        "she",
        "you",
        "on",
        "in",
        "at",
        "after",
        "before",
        "when",
        "yesterday",
        "today",
    }
)


@dataclass(frozen=True)
class _Session:
    """Items of one record that share a time, as one replayed session."""

    record: int
    time: datetime
    memories: tuple[BrainCoreMemory, ...]


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
    tables, people = _tables(dataset)
    return TableSource(
        kind="braincore",
        source_id=f"braincore-{stem}",
        version=IMPORTER_VERSION,
        content_hash=dataset.sha256,
        origin=path,
        audit=AUDIT,
        worlds={"short": tables},
        entities=(
            SourceEntity(MEMORY, "tool_agent"),
            *(SourceEntity(entity, "human") for entity in people),
        ),
        not_applicable=NOT_APPLICABLE,
    )


def _sessions(dataset: BrainCoreDataset) -> list[_Session]:
    """Every record's items grouped by time, in replay order (see the module's docstring)."""
    sessions: list[_Session] = []
    latest: datetime | None = None
    for number, record in enumerate(dataset.records):
        groups: list[tuple[datetime | None, list[BrainCoreMemory]]] = []
        for memory in record.memories:
            stamp = memory.timestamp or memory.listed_after
            moment = None if stamp is None else memory.time_order[0]
            if groups and groups[-1][0] == moment:
                groups[-1][1].append(memory)
            else:
                groups.append((moment, [memory]))
        if len(groups) > 1 and groups[0][0] is None:
            # Items listed before the record's first timed one happened no later than it.
            first = groups.pop(0)[1]
            groups[0] = (groups[0][0], first + groups[0][1])
        for moment, memories in groups:
            if moment is None:
                moment = _FIRST_SESSION if latest is None else latest + timedelta(days=1)
            latest = moment if latest is None else max(latest, moment)
            sessions.append(_Session(number, moment, tuple(memories)))
    # sorted() is stable: sessions at one time stay in file order.
    return sorted(sessions, key=lambda session: session.time)


def _subject_name(query: BrainCoreQuery, record: BrainCoreRecord) -> str | None:
    """The person ``query`` asks about, by a name that its memories open with.

    A memory that opens with a name is a note about that person ("Greta Ivers lives in
    Utrecht."); a capitalised word the memories only contain is more often a place or a thing
    ("Oslo or kayak first?"). The question's own names are tried first, the longest part of each
    run of capitalised words first, since a question's first word is capitalised anyway ("Did
    Greta Ivers …"). A question that names no such person ("Which instrument?") is about the
    one every required memory opens with, when they all open with the same name.

    Args:
        query: The query.
        record: Its record (its required memories, else all of the record's, are searched).

    Returns:
        The name as written, or ``None`` when no such person is found.
    """
    required = query.required_memory_ids or tuple(m.memory_id for m in record.memories)
    texts = [record.memory(memory_id).content.lstrip() for memory_id in required]
    for match in _NAME_RUN.finditer(query.query_text):
        run = match.group(0)
        words = [(w.start(), w.end()) for w in re.finditer(r"[A-Z]\w*", run)]
        for size in range(len(words), 0, -1):
            for start in range(len(words) - size + 1):
                name = run[words[start][0] : words[start + size - 1][1]]
                if name.split()[0].lower() in _NOT_NAMES:  # "The oboe", "My sister": no one
                    continue
                opens = re.compile(rf"{re.escape(name)}(?![\w-])")
                if any(opens.match(text) for text in texts):
                    return name
    openings = {_opening_name(text) for text in texts}
    return openings.pop() if len(openings) == 1 else None


def _opening_name(text: str) -> str | None:
    """The run of capitalised words ``text`` opens with, unless it opens with a function word."""
    match = _NAME_RUN.match(text)
    if match is None or match.group(0).split()[0].lower() in _NOT_NAMES:
        return None
    return match.group(0)


def _entity_id(name: str) -> str:
    entity = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or USER
    # A person called Memory is not the memory whose notes the sessions are.
    return f"{entity}-person" if entity == MEMORY else entity


def _tables(dataset: BrainCoreDataset) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """The world's five tables, and its people's entity ids in order of first mention."""
    sessions = _sessions(dataset)
    checkpoint = len(sessions)
    where = {(s.record, m.memory_id): index for index, s in enumerate(sessions) for m in s.memories}
    required = {
        (number, memory_id)
        for number, record in enumerate(dataset.records)
        for query in record.queries
        for memory_id in query.required_memory_ids
    }
    asked: list[tuple[int, BrainCoreRecord, BrainCoreQuery, str, str, list[int]]] = []
    people: dict[str, str] = {}
    for number, record in enumerate(dataset.records):
        for query in record.queries:
            name = _subject_name(query, record) or USER
            entity = _entity_id(name)
            people.setdefault(entity, name)
            ids = query.required_memory_ids or tuple(m.memory_id for m in record.memories)
            evidence = sorted({where[(number, memory_id)] for memory_id in ids})
            asked.append((number, record, query, entity, name, evidence))
    profiles = [(MEMORY, "tool_agent", MEMORY)] + [
        (entity, "human", name) for entity, name in people.items()
    ]
    tables: dict[str, list[dict[str, Any]]] = {
        "latent_profiles": [
            {
                "entity_id": entity,
                "entity_type": kind,
                "name": name,
                "stable_attributes": "{}",
                "initial_state": "{}",
            }
            for entity, kind, name in profiles
        ],
        "event_schedules": [
            {
                "session_index": index,
                "sim_time": session.time,
                "tier": "signal"
                if any((session.record, m.memory_id) in required for m in session.memories)
                else "noise",
                "participants": [MEMORY],
                "pattern": "notes",
            }
            for index, session in enumerate(sessions)
        ],
        "transcripts": [
            {
                "session_index": index,
                "turn_index": turn,
                "speaker": MEMORY,
                "role": "tool",
                "content": memory.content,
                "label_event_id": memory.memory_id,
                "label_kind": "event"
                if (session.record, memory.memory_id) in required
                else "noise",
            }
            for index, session in enumerate(sessions)
            for turn, memory in enumerate(session.memories)
        ],
        "ground_truth": [
            {
                "checkpoint": checkpoint,
                "fact_id": query.query_id,
                "subject": entity,
                "slot": query.query_id,
                "slot_kind": "functional",
                "value": query.expected_answer,
                "valid_from": evidence[-1],
                "current": True,
                "source_session": evidence[-1],
                "tier": "signal",
                "evidence_sessions": evidence,
            }
            for _, _, query, entity, _, evidence in asked
        ],
        "probes": [
            {
                "checkpoint": checkpoint,
                "probe_id": query.query_id,
                "probe_type": _PROBES[query.query_type][0],
                "subtype": _PROBES[query.query_type][1],
                "asker": MEMORY,
                "subject": entity,
                "question": query.query_text,
                "answer": query.expected_answer,
                "aliases": _aliases(query.expected_answer),
                "deprecated": [],
                "evidence_sessions": evidence,
                "polarity": "positive",
                "slot": query.query_id,
                "evidence_terms": _evidence_terms(record, query),
            }
            for _, record, query, entity, _, evidence in asked
        ],
    }
    return tables, list(people)


def _aliases(answer: str) -> list[str]:
    """The answer, and without a leading article ("the pottery class" is said "a pottery class")."""
    bare = re.sub(r"^(the|a|an)\s+", "", answer.strip(), flags=re.IGNORECASE)
    return [answer] if bare in ("", answer) else [answer, bare]


def _evidence_terms(record: BrainCoreRecord, query: BrainCoreQuery) -> list[str]:
    """What the answerability audit looks for in the evidence sessions' turns.

    The answer's aliases that the required memories say; when they say none verbatim (a free
    answer), the required memories' own texts: the dataset names them as the evidence.
    """
    texts = [record.memory(m).content for m in query.required_memory_ids]
    said = [a for a in _aliases(query.expected_answer) if any(contains_any(t, [a]) for t in texts)]
    return said or [t for t in texts if t.strip()]
