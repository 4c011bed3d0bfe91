"""``temporal_graph``: slot facts as edges with validity intervals, after Zep/Graphiti.

The same extraction as ``fact_store``, but nothing is forgotten: an UPDATE or DELETE closes the
current edge (``valid_to`` = the date it stopped being true) and keeps it, marked superseded.
Retrieval answers with current facts (``since <date>``) and, after them, a few superseded facts
relevant to the query, each marked ``(no longer true since <date>)``.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
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
    succeed,
)
from drift_pipeline.memory.backends._lexical import LexicalIndex
from drift_pipeline.memory.backends._text import (
    CaseModel,
    line_tokens,
    session_speakers,
    strip_frames,
    terms,
)
from drift_pipeline.tokens import LineSum

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
    # 2: framing phrases read through; orders, greetings and breakages are not remarks; remarks
    # indexed under their topic words.
    # 3: fact_store's extraction 3 (stances keyed by topic, hedges, implied employer and home).
    # 4: fact_store's extraction 4 (more stance frames, news of pay, a desk or a local practice,
    # quoted labels, the speaker's own state in a sentence someone else opens, wider topics).
    # 5: fact_store's extraction 5 (names in text typed without case, names however asked for,
    # health news from a doctor, one current health status, settling in and saying goodbye).
    # 6: fact_store's extraction 6 (a joke taken back with a typographic apostrophe left out).
    # 7: fact_store's extraction 7 ("I left A for B", statuses, homes, treatments and choices in
    # everyday words, swapped letters mended).
    # 8: fact_store's extraction 8 (any one-letter slip in an everyday word mended; a new name
    # typed in lower case after "in", "at", "with" read as a name).
    # 9: fact_store's extraction 9 (an employer from a signed contract or an
    # accepted offer, names others call the speaker by, advice about replies and a default as
    # standing instructions, contractions never mended as slips).
    version: ClassVar[str] = "9"

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
        # Edge ids, least recently touched first: the order unscored current facts are read in.
        self._recent: dict[int, None] = {}
        # No current-fact line is shorter than this: once less budget is left, none fits.
        self._shortest = sys.maxsize
        # Which words are names, from how the text read so far capitalises them.
        self._case = CaseModel()
        # The snapshot's token count, kept as edges are added and closed, and the id of the
        # last closed edge (the snapshot's last line, once an edge is closed).
        self._storage = LineSum()
        self._last_closed: int | None = None
        self.operation_counts: dict[Operation, int] = {operation: 0 for operation in Operation}

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Apply every statement of the session: add edges, close superseded ones."""
        speakers = session_speakers(messages)
        for statement in extract_statements(messages, self._case):
            self._apply(statement, speakers)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return current facts, then a few relevant superseded ones, that ``entity_id`` knew."""
        # "When it comes to" only means "about": its words would match every remark using it.
        scores = self._index.scores(strip_frames(query))
        named = set(terms(query))
        mentions: dict[str, bool] = {}

        def mentioned(subject: str) -> bool:
            # Naming the subject only breaks ties (it matches all its facts).
            if subject not in mentions:
                mentions[subject] = bool(named.intersection(terms(subject)))
            return mentions[subject]

        def rank(edge: _Edge) -> tuple[float, bool, int, int]:
            score = scores.get(edge.doc_id, 0.0)
            return (-score, not mentioned(edge.subject), -edge.touched, edge.doc_id)

        # Current facts: content overlap first, then the rest most recently touched first
        # (named subjects before others), read lazily: a graph with thousands of remarks fills
        # the budget long before its end.
        scored = [self._edges[d] for d in scores if entity_id in self._edges[d].viewers]
        scored.sort(key=rank)

        def unscored(named_subject: bool) -> Iterator[_Edge]:
            for edge in self._by_recency():
                if (
                    edge.doc_id not in scores
                    and entity_id in edge.viewers
                    and mentioned(edge.subject) is named_subject
                ):
                    yield edge

        # A value that is current again ("I moved back to Leeds") is not shown as superseded,
        # and each superseded value is shown once, with its latest end.
        latest: dict[tuple[str, str, str], _Edge] = {}
        for doc_id in sorted(scores):
            edge = self._edges[doc_id]
            if entity_id not in edge.closed_for:
                continue
            slot_value = (edge.subject, edge.predicate, normalise_value(edge.value))
            if self._holds(entity_id, slot_value):
                continue
            kept_edge = latest.get(slot_value)
            if kept_edge is None or kept_edge.closed_for[entity_id] <= edge.closed_for[entity_id]:
                latest[slot_value] = edge
        superseded = sorted(latest.values(), key=rank)[: self.max_superseded]
        kept: list[str] = []
        used = 0
        for edge in itertools.chain(scored, unscored(True), unscored(False)):
            line = edge.current_line()
            tokens = self._tokens(line)
            if used + tokens > self.budget_tokens:
                if self.budget_tokens - used < self._shortest:
                    break
                continue
            kept.append(line)
            used += tokens
        for edge in superseded:
            line = edge.superseded_line(edge.closed_for[entity_id])
            tokens = self._tokens(line)
            if used + tokens <= self.budget_tokens:
                kept.append(line)
                used += tokens
        return "\n".join(kept)

    def _holds(self, entity_id: str, slot_value: tuple[str, str, str]) -> bool:
        """Whether ``entity_id`` holds this value of the slot as current."""
        subject, predicate, value = slot_value
        return any(
            entity_id in self._edges[doc_id].viewers
            and normalise_value(self._edges[doc_id].value) == value
            for doc_id in self._slots.get((subject, predicate), [])
        )

    def token_counts(self) -> TokenCounts:
        """No LLM calls: extraction is rule-based."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Current facts (with ``since``), then superseded facts with their intervals."""
        current = [edge.snapshot_line() for edge in self._edges if edge.valid_to is None]
        closed = [edge.snapshot_line() for edge in self._edges if edge.valid_to is not None]
        return "\n".join([*current, *closed])

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, kept as edges change (see ``CountsOwnStorage``)."""
        return self._storage.count(self.snapshot_tail())

    def snapshot_tail(self) -> str:
        """The last line of :meth:`snapshot` (``""`` when it is empty), without building it."""
        if self._last_closed is not None:
            return self._edges[self._last_closed].snapshot_line()
        # Nothing closed yet: every edge is current, in the order added.
        return self._edges[-1].snapshot_line() if self._edges else ""

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

    def _held(self, subject: str, predicate: str) -> str | None:
        """The value ``subject`` currently holds under ``predicate``, if any."""
        for doc_id in self._slots.get((subject, predicate), []):
            if subject in self._edges[doc_id].viewers:
                return self._edges[doc_id].value
        return None

    def _apply(self, statement: Statement, speakers: frozenset[str]) -> Operation:
        statement = succeed(statement, lambda predicate: self._held(statement.subject, predicate))
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
                self._touch(current.doc_id)
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
        self._storage.add(edge.snapshot_line())
        self._touch(edge.doc_id)
        self._shortest = min(self._shortest, self._tokens(edge.current_line()))
        self._slots.setdefault(key, []).append(edge.doc_id)
        self._index.add(edge.doc_id, f"{edge.text} {predicate_hint(statement.predicate)}")
        return operation

    def _by_recency(self) -> Iterator[_Edge]:
        """Every edge, most recently touched first; edges touched together by edge id."""
        run: list[_Edge] = []
        for doc_id in reversed(self._recent):
            edge = self._edges[doc_id]
            if run and edge.touched != run[0].touched:
                yield from sorted(run, key=lambda e: e.doc_id)
                run = []
            run.append(edge)
        yield from sorted(run, key=lambda e: e.doc_id)

    def _touch(self, doc_id: int) -> None:
        self._recent.pop(doc_id, None)
        self._recent[doc_id] = None

    def _close(self, edges: list[_Edge], speakers: frozenset[str], date: str) -> None:
        """Close ``edges`` for the entities present; an edge nobody holds any more ends."""
        for edge in edges:
            for entity in sorted(edge.viewers & speakers):
                edge.closed_for[entity] = date
            edge.viewers = edge.viewers - speakers
            edge.touched = self._clock
            self._touch(edge.doc_id)
            if edge.viewers:
                continue
            current_line = edge.snapshot_line()
            edge.valid_to = date
            # Its line moves to the closed edges, in the order of edge ids (not of closing).
            self._storage.replace(current_line, edge.snapshot_line())
            self._last_closed = max(edge.doc_id, self._last_closed or 0)
            slot = self._slots[(edge.subject, edge.predicate)]
            slot.remove(edge.doc_id)
            if not slot:
                del self._slots[(edge.subject, edge.predicate)]
