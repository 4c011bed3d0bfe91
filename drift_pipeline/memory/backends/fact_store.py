"""``fact_store``: rule-based slot facts with ADD / UPDATE / DELETE / NOOP, after Mem0.

Each slot is (speaker, normalised predicate) and holds the latest value the speaker gave: a new
value replaces the old one, a retraction deletes it, a repeat changes nothing but the date of a
preference, opinion or habit (as current as its latest mention). Noise sessions add nothing
because nothing in them is a first-person fact.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._extract import (
    Operation,
    Statement,
    dated_by_first_mention,
    decide,
    extract_statements,
    predicate_hint,
    slot_topics,
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

__all__ = ["FactStoreBackend"]


@dataclass
class _Fact:
    """One value of a slot, the entities that know it as current, and when it was set."""

    doc_id: int
    subject: str
    predicate: str
    value: str
    set_date: str
    touched: int
    viewers: frozenset[str]
    line: str
    tokens: int


class FactStoreBackend:
    """Keep the current fact per (speaker, predicate); answer with the facts nearest the query.

    ``store`` extracts first-person statements from the human turns of a session and applies each
    as ADD, UPDATE (replace), DELETE or NOOP, decided against the value the speaker last gave.

    Scope: a fact is known to the speakers of the session it was stated in (its viewers). An
    update or retraction changes the slot for the entities present, who let go of the value they
    held; an entity that was not there keeps the value it last heard, and never sees the new one.
    In a two-party conversation this is simply one value per slot. ``retrieve`` ranks the facts
    ``entity_id`` knows by lexical overlap with the query (more recently touched first on ties),
    takes ``[date] subject: fact`` lines in that order within ``budget_tokens`` and returns them
    oldest first, in the order they were said: the last line about a slot is its latest telling.
    A fact read from one clause of a longer sentence is shown as that sentence (``said: …``),
    which may name what the clause is about.

    Args:
        budget_tokens: Size of the returned context.

    """

    name: ClassVar[str] = "fact_store"
    # 2: framing phrases read through; orders, greetings and breakages are not remarks; remarks
    # indexed under their topic words.
    # 3: a stance keyed by its topic ("on remote work, I am sceptical"); hedges ("if I am
    # honest") are no condition; news of a new team or a move read as employer or home; a
    # restated preference, opinion or habit is dated by its latest mention.
    # 4: lines returned oldest first in the order said; a fact read from one clause shown with
    # its sentence; a remark of the speaker's own state in a sentence someone else opens is
    # kept; an employer or home restated after other news on its topic is dated anew.
    # 5: names found in text typed without case (from how the rest of the text capitalises
    # them); a statement run into a question read; the speaker's name however it is asked for;
    # news of their health told by a doctor or clinic; one current health status; moves told as
    # settling in or saying goodbye; "when it comes to" in a question read as "about".
    # 6: a joke taken back with a typographic apostrophe ("I’m joking") is left out too.
    # 7: "I left A for B" moves the slot that held A (employer by default); statuses, homes,
    # treatments and habitual choices said in more everyday words ("I have been divorced since
    # May", "work relocated me to Oslo", "X is my usual choice"); a hedge after a lead-in and an
    # "if you" of liking are no condition; two swapped letters in everyday words read as meant;
    # a fact that names its own topic shown without the asides of its sentence; what "the
    # specialist I saw" says of the speaker's health is news of it; a home implied by unpacking
    # there or by "since that's home now".
    # 8: an everyday word typed with any one slip (a letter dropped, doubled, added or struck
    # for another, or two swapped) read as meant, unless the typed word is a common word or a
    # name itself; in a sentence typed all in lower case, a word never seen before that follows
    # "in", "at", "with" (…) read as a name ("still unpacking in tucson").
    # 9: a job taken by its paperwork ("I signed the contract with Initech", "I accepted Acme's
    # offer") read as the employer; the name others call the speaker by ("my family has always
    # called me Nico", "I am Robin to everyone", "just Jo is fine when you address me", "the name
    # I use is Max") read as their name; advice about replies ("you should use a formal tone")
    # and a default for the speaker ("the default for me from now on is to reply in short
    # paragraphs") read as standing instructions; "it turns out" read as a lead-in; the stem of
    # a contraction ("shouldn't") never mended as a slip; a health status restated after other
    # health news dated anew.
    version: ClassVar[str] = "9"

    def __init__(self, budget_tokens: int = 1000) -> None:
        if budget_tokens < 0:
            raise ValueError(f"fact_store budget_tokens must be >= 0, got {budget_tokens}")
        self.budget_tokens = budget_tokens
        self._facts: dict[int, _Fact] = {}
        self._slots: dict[tuple[str, str], list[int]] = {}
        self._index = LexicalIndex()
        self._next_doc = 0
        self._clock = 0
        # Doc ids, least recently touched first: the order unscored facts are read in.
        self._recent: dict[int, None] = {}
        # No line is shorter than this, so once less budget is left, nothing more fits.
        self._shortest = sys.maxsize
        # (subject, slot dated by its first mention) -> latest date anything on its topic was set.
        self._topic_dates: dict[tuple[str, str], str] = {}
        # Which words are names, from how the text read so far capitalises them.
        self._case = CaseModel()
        # The snapshot's token count, kept as facts are added, redated and deleted.
        self._storage = LineSum()
        self.operation_counts: dict[Operation, int] = {operation: 0 for operation in Operation}

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Apply every statement of the session to the slots, in order."""
        speakers = session_speakers(messages)
        for statement in extract_statements(messages, self._case):
            self._apply(statement, speakers)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the facts ``entity_id`` knows, most relevant to ``query`` first."""
        # "When it comes to" only means "about": its words would match every remark using it.
        scores = self._index.scores(strip_frames(query))
        named = set(terms(query))
        mentions: dict[str, bool] = {}

        def mentioned(subject: str) -> bool:
            # Naming the subject only breaks ties (it matches all its facts).
            if subject not in mentions:
                mentions[subject] = bool(named.intersection(terms(subject)))
            return mentions[subject]

        def rank(fact: _Fact) -> tuple[float, bool, int, int]:
            return (-scores[fact.doc_id], not mentioned(fact.subject), -fact.touched, fact.doc_id)

        # Content overlap first, then the rest most recently touched first (named subjects
        # before others): the order of one sort over every fact, read lazily, since a memory
        # with thousands of remarks fills the budget long before its end.
        scored = [
            fact
            for doc_id in scores
            if (fact := self._facts.get(doc_id)) is not None and entity_id in fact.viewers
        ]
        scored.sort(key=rank)

        def unscored(named_subject: bool) -> Iterator[_Fact]:
            for doc_id in reversed(self._recent):
                fact = self._facts[doc_id]
                if (
                    doc_id not in scores
                    and entity_id in fact.viewers
                    and mentioned(fact.subject) is named_subject
                ):
                    yield fact

        kept: list[_Fact] = []
        lines: set[str] = set()
        used = 0
        for fact in itertools.chain(scored, unscored(True), unscored(False)):
            if fact.line in lines:
                continue  # two facts of one sentence, shown as that sentence once
            if used + fact.tokens > self.budget_tokens:
                if self.budget_tokens - used < self._shortest:
                    break
                continue
            kept.append(fact)
            lines.add(fact.line)
            used += fact.tokens
        kept.sort(key=lambda fact: (fact.set_date, fact.touched))
        return "\n".join(fact.line for fact in kept)

    def token_counts(self) -> TokenCounts:
        """No LLM calls: extraction is rule-based."""
        return TokenCounts()

    def snapshot(self) -> str:
        """The current facts, one line each with the date they were last set, oldest first."""
        return "\n".join(self._facts[doc_id].line for doc_id in sorted(self._facts))

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, kept as facts change (see ``CountsOwnStorage``)."""
        return self._storage.count(self.snapshot_tail())

    def snapshot_tail(self) -> str:
        """The last line of :meth:`snapshot` (``""`` when it is empty), without building it."""
        # Facts are kept in the order of their ids, the snapshot's order.
        return self._facts[next(reversed(self._facts))].line if self._facts else ""

    def _held(self, subject: str, predicate: str) -> str | None:
        """The value ``subject`` currently holds under ``predicate``, if any."""
        for doc_id in self._slots.get((subject, predicate), []):
            if subject in self._facts[doc_id].viewers:
                return self._facts[doc_id].value
        return None

    def _apply(self, statement: Statement, speakers: frozenset[str]) -> Operation:
        statement = succeed(statement, lambda predicate: self._held(statement.subject, predicate))
        key = (statement.subject, statement.predicate)
        held = [self._facts[doc_id] for doc_id in self._slots.get(key, [])]
        heard = [fact for fact in held if fact.viewers & speakers]
        current = next((f for f in heard if statement.subject in f.viewers), None)
        operation = decide(current.value if current else None, statement)
        self.operation_counts[operation] += 1
        self._clock += 1
        if operation is Operation.NOOP:
            if current is not None and not statement.retraction:
                # Everyone present now holds this value (and lets go of any other they held).
                self._release([f for f in heard if f is not current], speakers)
                current.viewers = current.viewers | speakers
                current.touched = self._clock
                # A home or employer keeps the date it started, unless other news on its topic
                # came since: then this restatement is the latest telling of it.
                since = self._topic_dates.get((current.subject, current.predicate), "")
                if not dated_by_first_mention(current.predicate) or since > current.set_date:
                    self._redate(current, statement.date)
                self._recent.pop(current.doc_id, None)
                self._recent[current.doc_id] = None
            return operation
        self._release(heard, speakers)
        if operation is Operation.DELETE:
            return operation
        shown = f"said: {statement.said}" if statement.said else statement.text
        line = f"[{statement.date}] {statement.subject}: {shown}"
        fact = _Fact(
            doc_id=self._next_doc,
            subject=statement.subject,
            predicate=statement.predicate,
            value=statement.value,
            set_date=statement.date,
            touched=self._clock,
            viewers=speakers,
            line=line,
            tokens=line_tokens(line),
        )
        self._next_doc += 1
        self._facts[fact.doc_id] = fact
        self._storage.add(line)
        self._recent[fact.doc_id] = None
        self._shortest = min(self._shortest, fact.tokens)
        self._slots.setdefault(key, []).append(fact.doc_id)
        self._index.add(fact.doc_id, f"{shown} {predicate_hint(statement.predicate)}")
        for slot in slot_topics(statement.predicate):
            key_since = (statement.subject, slot)
            self._topic_dates[key_since] = max(self._topic_dates.get(key_since, ""), statement.date)
        return operation

    def _redate(self, fact: _Fact, date: str) -> None:
        """Show ``fact`` with the date it was last said."""
        fact.set_date = date
        line = f"[{date}] {fact.line.split('] ', 1)[1]}"
        self._storage.replace(fact.line, line)
        fact.line = line
        fact.tokens = line_tokens(fact.line)
        self._shortest = min(self._shortest, fact.tokens)

    def _release(self, facts: list[_Fact], speakers: frozenset[str]) -> None:
        """The entities in ``speakers`` stop holding ``facts``; a fact nobody holds is deleted."""
        for fact in facts:
            fact.viewers = fact.viewers - speakers
            if fact.viewers:
                continue
            del self._facts[fact.doc_id]
            self._storage.remove(fact.line)
            del self._recent[fact.doc_id]
            self._index.remove(fact.doc_id)
            slot = self._slots[(fact.subject, fact.predicate)]
            slot.remove(fact.doc_id)
            if not slot:
                del self._slots[(fact.subject, fact.predicate)]
