"""BrainCore datasets: JSON lines of sessions, each with its memories and the queries asked after.

One line is one record::

    {"session_id": "s-001",
     "memories": [{"memory_id": "m1", "content": "...", "timestamp": "2024-01-03T09:00:00"}],
     "queries": [{"query_id": "q1", "query_text": "...", "expected_answer": "...",
                  "query_type": "retrieval", "required_memory_ids": ["m1"]}]}

A memory item may spell its id ``memory_id`` or ``id``, its text ``content`` or ``text`` and its
time ``timestamp`` or ``time``; other keys ride along to the adapter untouched. The whole file is
checked before any adapter sees it, and every problem is one line naming the file, the line and
the field.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = [
    "QUERY_TYPES",
    "BrainCoreDataset",
    "BrainCoreError",
    "BrainCoreMemory",
    "BrainCoreQuery",
    "BrainCoreRecord",
    "load_dataset",
    "parse_dataset",
]

QUERY_TYPES = ("retrieval", "temporal", "contradiction")
"""The query types of the BrainCore schema, in report order."""

# Accepted spellings of each memory field, canonical first.
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "memory_id": ("memory_id", "id"),
    "content": ("content", "text"),
    "timestamp": ("timestamp", "time"),
}
# A key that differs from an accepted spelling only in case, "_" or "-" ("Timestamp",
# "memoryId") is a misspelling, not metadata: the optional time would be silently unread.
_MISSPELLED = {
    re.sub(r"[_-]", "", spelling): field
    for field, spellings in _SPELLINGS.items()
    for spelling in spellings
}
_QUERY_FIELDS = ("query_id", "query_text", "expected_answer", "query_type")


class BrainCoreError(ValueError):
    """A BrainCore dataset, adapter or run problem, in one line naming where it is."""


@dataclass(frozen=True)
class BrainCoreMemory:
    """One memory item of a record.

    Attributes:
        memory_id: The item's id.
        content: The item's text.
        timestamp: Its time (ISO 8601), or ``None`` when the item gives none.
        position: Its index in the record's chronological ``memories`` list.
        raw: What the adapter receives: the item as written, with the canonical keys
            ``memory_id``, ``content``, ``timestamp`` (when given) and ``session_id`` filled in.
        listed_after: For an item without a timestamp, the timestamp of the nearest item
            before it in the list that has one (``None`` when none does).
    """

    memory_id: str
    content: str
    timestamp: str | None
    position: int
    raw: Mapping[str, Any]
    listed_after: str | None = None

    @property
    def time_order(self) -> tuple[datetime, int]:
        """Sort key in time: its timestamp, then its place in the record's list.

        An item without a timestamp takes the time of the timed item listed before it (the
        earliest time when there is none), since the schema lists memories chronologically:
        it sorts after what precedes it in the list and before any later time.
        """
        stamp = self.timestamp if self.timestamp is not None else self.listed_after
        moment = None if stamp is None else _parse_time(stamp)
        return moment or datetime.min, self.position


@dataclass(frozen=True)
class BrainCoreQuery:
    """One query of a record.

    Attributes:
        query_id: Unique id.
        query_text: The question.
        expected_answer: The ground-truth answer.
        query_type: ``retrieval``, ``temporal`` or ``contradiction``.
        required_memory_ids: The memory items (of the same record) the answer needs.
    """

    query_id: str
    query_text: str
    expected_answer: str
    query_type: str
    required_memory_ids: tuple[str, ...]


@dataclass(frozen=True)
class BrainCoreRecord:
    """One line of the dataset: a session's memories and the queries asked after them.

    Attributes:
        line: Its 1-based line number in the file.
        session_id: The session's id.
        memories: Its memory items, in the file's (chronological) order.
        queries: Its queries.
    """

    line: int
    session_id: str
    memories: tuple[BrainCoreMemory, ...]
    queries: tuple[BrainCoreQuery, ...]

    def memory(self, memory_id: str) -> BrainCoreMemory:
        """The memory item with id ``memory_id``."""
        return next(m for m in self.memories if m.memory_id == memory_id)


@dataclass(frozen=True)
class BrainCoreDataset:
    """A whole BrainCore dataset, checked.

    Attributes:
        path: Where it was read from, as given.
        sha256: sha256 of the file's bytes.
        records: Its records in file order.
    """

    path: str
    sha256: str
    records: tuple[BrainCoreRecord, ...]

    @property
    def queries(self) -> int:
        """Number of queries over all records."""
        return sum(len(record.queries) for record in self.records)


def load_dataset(path: str | Path) -> BrainCoreDataset:
    """Read and check the BrainCore JSONL dataset at ``path``.

    Args:
        path: The dataset file.

    Returns:
        The dataset, every record checked.

    Raises:
        BrainCoreError: The file is missing or unreadable, or one line naming the first
            malformed record and its field.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise BrainCoreError(f"{path}: cannot read the dataset ({error.strerror})") from None
    return parse_dataset(raw, str(path))


def parse_dataset(raw: bytes, origin: str) -> BrainCoreDataset:
    """Check the bytes of a BrainCore JSONL dataset.

    Args:
        raw: The file's bytes (UTF-8 JSON lines, a byte order mark allowed; blank lines are
            skipped).
        origin: Where they came from, for messages.

    Returns:
        The dataset.

    Raises:
        BrainCoreError: One line naming the first malformed record and its field.
    """
    try:
        # utf-8-sig: a leading byte order mark (Windows editors write one) is no part of line 1.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BrainCoreError(f"{origin}: not UTF-8 text (byte {error.start})") from None
    records: list[BrainCoreRecord] = []
    sessions: set[str] = set()
    query_lines: dict[str, int] = {}
    # Split at "\n" alone: str.splitlines would also split at U+2028, U+0085 or a form feed,
    # which JSON allows raw inside a string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{origin}:{number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise BrainCoreError(f"{where}: not valid JSON ({error.msg})") from None
        record = _record(where, number, value)
        if record.session_id in sessions:
            raise BrainCoreError(f"{where}: session_id {record.session_id!r} is used twice")
        sessions.add(record.session_id)
        for index, query in enumerate(record.queries):
            if query.query_id in query_lines:
                raise BrainCoreError(
                    f"{where}: queries[{index}]: query_id {query.query_id!r} is used twice "
                    f"(line {query_lines[query.query_id]})"
                )
            query_lines[query.query_id] = number
        records.append(record)
    if not records:
        raise BrainCoreError(f"{origin}: no records")
    return BrainCoreDataset(origin, hashlib.sha256(raw).hexdigest(), tuple(records))


def _record(where: str, number: int, value: object) -> BrainCoreRecord:
    if not isinstance(value, dict):
        raise BrainCoreError(f"{where}: a record is a JSON object, got {type(value).__name__}")
    session = _string(where, value, "session_id")
    memories_value = _list(where, value, "memories")
    queries_value = _list(where, value, "queries")
    listed: list[BrainCoreMemory] = []
    last_time: str | None = None
    for i, item in enumerate(memories_value):
        memory = _memory(f"{where}: memories[{i}]", i, item, session)
        if memory.timestamp is None:
            memory = replace(memory, listed_after=last_time)
        else:
            last_time = memory.timestamp
        listed.append(memory)
    memories = tuple(listed)
    ids = [m.memory_id for m in memories]
    for index, memory_id in enumerate(ids):
        first = ids.index(memory_id)
        if first < index:
            raise BrainCoreError(
                f"{where}: memories[{index}]: id {memory_id!r} is used twice in the record "
                f"(memories[{first}])"
            )
    queries = tuple(
        _query(f"{where}: queries[{i}]", item, set(ids)) for i, item in enumerate(queries_value)
    )
    return BrainCoreRecord(number, session, memories, queries)


def _memory(where: str, position: int, item: object, session: str) -> BrainCoreMemory:
    if not isinstance(item, dict):
        raise BrainCoreError(f"{where}: a memory item is a JSON object")
    for key in item:
        field = _MISSPELLED.get(re.sub(r"[_-]", "", str(key).lower()))
        if field is not None and key not in _SPELLINGS[field]:
            raise BrainCoreError(
                f"{where}: key {key!r} is not a spelling this schema reads; use "
                f"{' or '.join(_SPELLINGS[field])}"
            )
    found: dict[str, str | None] = {}
    for field, spellings in _SPELLINGS.items():
        given = {s: item[s] for s in spellings if s in item}
        if len(set(map(repr, given.values()))) > 1:
            raise BrainCoreError(f"{where}: {' and '.join(given)} disagree; give one of them")
        if not given:
            if field == "timestamp":
                found[field] = None
                continue
            raise BrainCoreError(f"{where}: no {field} (spelled {' or '.join(spellings)})")
        spelling, content = next(iter(given.items()))
        if not isinstance(content, str) or (field != "content" and not content.strip()):
            raise BrainCoreError(f"{where}: {spelling} must be a non-empty string, got {content!r}")
        if field == "timestamp" and _parse_time(content) is None:
            raise BrainCoreError(f"{where}: {spelling} {content!r} is not an ISO 8601 date-time")
        found[field] = content
    raw = dict(item)
    for field, content in found.items():
        if content is not None:
            raw[field] = content
    raw.setdefault("session_id", session)
    memory_id, text = found["memory_id"], found["content"]
    assert memory_id is not None and text is not None  # required above
    return BrainCoreMemory(memory_id, text, found["timestamp"], position, raw)


def _query(where: str, item: object, memory_ids: set[str]) -> BrainCoreQuery:
    if not isinstance(item, dict):
        raise BrainCoreError(f"{where}: a query is a JSON object")
    fields = [_string(where, item, name) for name in _QUERY_FIELDS]
    query_type = fields[3]
    if query_type not in QUERY_TYPES:
        raise BrainCoreError(
            f"{where}: query_type {query_type!r} is not one of {', '.join(QUERY_TYPES)}"
        )
    required = _list(where, item, "required_memory_ids")
    for memory_id in required:
        if not isinstance(memory_id, str):
            raise BrainCoreError(f"{where}: required_memory_ids holds {memory_id!r}, not a string")
        if memory_id not in memory_ids:
            raise BrainCoreError(
                f"{where}: required_memory_ids names {memory_id!r}, which is not a memory of "
                "this record"
            )
    if query_type != "retrieval" and not required:
        raise BrainCoreError(f"{where}: a {query_type} query needs required_memory_ids")
    return BrainCoreQuery(fields[0], fields[1], fields[2], query_type, tuple(required))


def _string(where: str, item: Mapping[str, Any], field: str) -> str:
    if field not in item:
        raise BrainCoreError(f"{where}: no {field}")
    value = item[field]
    if not isinstance(value, str):
        raise BrainCoreError(f"{where}: {field} must be a string, got {value!r}")
    return value


def _list(where: str, item: Mapping[str, Any], field: str) -> Sequence[Any]:
    if field not in item:
        raise BrainCoreError(f"{where}: no {field}")
    value = item[field]
    if not isinstance(value, list):
        raise BrainCoreError(f"{where}: {field} must be a list, got {type(value).__name__}")
    return value


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    # Naive and aware times cannot be compared: an aware time is read as its UTC wall time.
    offset = moment.utcoffset()
    return moment if offset is None else moment.replace(tzinfo=None) - offset
