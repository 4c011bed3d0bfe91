"""``temporal_graph``: slot facts as edges with validity intervals, after Zep/Graphiti.

The same extraction as ``fact_store``, but nothing is forgotten: an UPDATE or DELETE closes the
current edge (``valid_to`` = the date it stopped being true) and keeps it, marked superseded.
Retrieval answers with current facts (``since <date>``) and, after them, a few superseded facts
relevant to the query, each marked ``(no longer true since <date>)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._extract import (
    Operation,
    Statement,
    decide,
    extract_statements,
    normalise_value,
    predicate_hint,
)
from drift_pipeline.memory.backends._lexical import LexicalIndex
from drift_pipeline.memory.backends._text import (
    line_tokens,
    pack_to_budget,
    session_speakers,
    terms,
)

__all__ = ["SUPERSEDED_MARKER", "TemporalGraphBackend"]

# How a superseded fact is marked in retrieved text; readers and judges can key on it.
SUPERSEDED_MARKER = "no longer true since"


@dataclass
class _Edge:
    """One fact and the interval in which it held.

    ``viewers`` are the entities that know it as current; ``closed_for`` maps each entity that
    learned it stopped holding to the date it did. ``valid_to`` is set once nobody holds it.
    """

    doc_id: int
    subject: str
    predicate: str
    value: str
    text: str
    valid_from: str
    touched: int
    viewers: frozenset[str]
    closed_for: dict[str, str] = field(default_factory=dict)
    valid_to: str | None = None

    def current_line(self) -> str:
        return f"{self.subject}: {self.text} (since {self.valid_from})"

    def superseded_line(self, since: str) -> str:
        return f"{self.subject}: {self.text} ({SUPERSEDED_MARKER} {since})"

    def snapshot_line(self) -> str:
        if self.valid_to is None:
            return self.current_line()
        return (
            f"{self.subject}: {self.text} (valid {self.valid_from} to {self.valid_to}; "
            f"superseded, {SUPERSEDED_MARKER} {self.valid_to})"
        )


class TemporalGraphBackend:
    """Keep every fact with its validity interval; superseded facts stay, marked as such.

    Scope works as in ``fact_store``: a fact is known to the speakers of the session it was stated
    in, and an update closes it for the entities present (the ones who heard the change), while an
    absent entity keeps it as current. A superseded fact is shown only to entities that knew it.

    Args:
        budget_tokens: Size of the returned context.
        max_superseded: At most this many superseded facts follow the current ones in a retrieval
            (only those sharing content words with the query).

    """

    name: ClassVar[str] = "temporal_graph"
    version: ClassVar[str] = "1"

    def __init__(self, budget_tokens: int = 1000, max_superseded: int = 3) -> None:
        if budget_tokens < 0 or max_superseded < 0:
            raise ValueError(
                "temporal_graph budget_tokens and max_superseded must be >= 0, "
                f"got {budget_tokens} and {max_superseded}"
            )
        self.budget_tokens = budget_tokens
        self.max_superseded = max_superseded
        self._edges: list[_Edge] = []
        self._slots: dict[tuple[str, str], list[int]] = {}
        self._line_tokens: dict[str, int] = {}
        self._index = LexicalIndex()
        self._clock = 0
        self.operation_counts: dict[Operation, int] = {operation: 0 for operation in Operation}

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Apply every statement of the session: add edges, close superseded ones."""
        speakers = session_speakers(messages)
        for statement in extract_statements(messages):
            self._apply(statement, speakers)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return current facts, then a few relevant superseded ones, that ``entity_id`` knew."""
        scores = self._index.scores(query)
        named = set(terms(query))

        def rank(edge: _Edge) -> tuple[float, bool, int, int]:
            # Content overlap first; naming the subject only breaks ties (it matches all its facts).
            mentioned = bool(named.intersection(terms(edge.subject)))
            return (-scores.get(edge.doc_id, 0.0), not mentioned, -edge.touched, edge.doc_id)

        current = sorted((e for e in self._edges if entity_id in e.viewers), key=rank)
        # A value that is current again ("I moved back to Leeds") is not shown as superseded,
        # and each superseded value is shown once, with its latest end.
        holding = {(e.subject, e.predicate, normalise_value(e.value)) for e in current}
        latest: dict[tuple[str, str, str], _Edge] = {}
        for edge in self._edges:
            if entity_id not in edge.closed_for or scores.get(edge.doc_id, 0.0) <= 0:
                continue
            slot_value = (edge.subject, edge.predicate, normalise_value(edge.value))
            if slot_value in holding:
                continue
            kept = latest.get(slot_value)
            if kept is None or kept.closed_for[entity_id] <= edge.closed_for[entity_id]:
                latest[slot_value] = edge
        superseded = sorted(latest.values(), key=rank)[: self.max_superseded]
        lines = [edge.current_line() for edge in current]
        lines += [edge.superseded_line(edge.closed_for[entity_id]) for edge in superseded]
        return "\n".join(
            pack_to_budget(((ln, self._tokens(ln)) for ln in lines), self.budget_tokens)
        )

    def token_counts(self) -> TokenCounts:
        """No LLM calls: extraction is rule-based."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Current facts (with ``since``), then superseded facts with their intervals."""
        current = [edge.snapshot_line() for edge in self._edges if edge.valid_to is None]
        closed = [edge.snapshot_line() for edge in self._edges if edge.valid_to is not None]
        return "\n".join([*current, *closed])

    def history(self, subject: str, predicate: str) -> list[tuple[str, str, str | None]]:
        """Return ``(value, valid_from, valid_to)`` of every edge of one slot, oldest first."""
        return [
            (edge.value, edge.valid_from, edge.valid_to)
            for edge in self._edges
            if edge.subject == subject and edge.predicate == predicate
        ]

    def _tokens(self, line: str) -> int:
        count = self._line_tokens.get(line)
        if count is None:
            count = self._line_tokens[line] = line_tokens(line)
        return count

    def _apply(self, statement: Statement, speakers: frozenset[str]) -> Operation:
        key = (statement.subject, statement.predicate)
        held = [self._edges[doc_id] for doc_id in self._slots.get(key, [])]
        heard = [edge for edge in held if edge.viewers & speakers]
        current = next((e for e in heard if statement.subject in e.viewers), None)
        operation = decide(current.value if current else None, statement)
        self.operation_counts[operation] += 1
        self._clock += 1
        if operation is Operation.NOOP:
            if current is not None and not statement.retraction:
                self._close([e for e in heard if e is not current], speakers, statement.date)
                current.viewers = current.viewers | speakers
                current.touched = self._clock
            return operation
        self._close(heard, speakers, statement.date)
        if operation is Operation.DELETE:
            return operation
        edge = _Edge(
            doc_id=len(self._edges),
            subject=statement.subject,
            predicate=statement.predicate,
            value=statement.value,
            text=statement.text,
            valid_from=statement.date,
            touched=self._clock,
            viewers=speakers,
        )
        self._edges.append(edge)
        self._slots.setdefault(key, []).append(edge.doc_id)
        self._index.add(edge.doc_id, f"{edge.text} {predicate_hint(statement.predicate)}")
        return operation

    def _close(self, edges: list[_Edge], speakers: frozenset[str], date: str) -> None:
        """Close ``edges`` for the entities present; an edge nobody holds any more ends."""
        for edge in edges:
            for entity in sorted(edge.viewers & speakers):
                edge.closed_for[entity] = date
            edge.viewers = edge.viewers - speakers
            edge.touched = self._clock
            if edge.viewers:
                continue
            edge.valid_to = date
            slot = self._slots[(edge.subject, edge.predicate)]
            slot.remove(edge.doc_id)
            if not slot:
                del self._slots[(edge.subject, edge.predicate)]
