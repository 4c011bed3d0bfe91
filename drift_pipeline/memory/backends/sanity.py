"""Sanity arms: trivial strategies no one would call a memory, which the metrics must rank low.

Each imitates a reference backend cheaply, and each must score DRIFT-C clearly below the best
reference backend and below the arm it imitates; a probe or metric that one of them wins
measures something other than memory.

- ``recency_buffer``: the last ``lines`` user lines, all returned (imitates ``full_context``).
- ``tagged_buffer``: the same buffer, older lines tagged "(may be outdated)" (a tag a careful
  reader gives no special weight).
- ``keyword_lines``: every user line with a first-person preference or habit word (imitates
  ``fact_store``).
- ``session_dates``: only the date of every session (imitates ``temporal_graph``'s dates).
- ``exam_only``: ``sentence_log``'s log, handed only to reads that ask about someone (the
  probes' third-person questions); the agent's own reads, which open with the user's
  first-person line, get nothing. It must not beat ``sentence_log``: what the memory hands the
  reader at the probes is what a read costs.

None calls a model; none is a default arm.
"""

from __future__ import annotations

import re
from collections import deque
from typing import ClassVar, Final

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._text import (
    is_first_person,
    message_date,
    render_turn,
    session_speakers,
)
from drift_pipeline.memory.backends.sentence_log import SentenceLogBackend

__all__ = [
    "ExamOnlyBackend",
    "KeywordLinesBackend",
    "RecencyBufferBackend",
    "SessionDatesBackend",
    "TaggedBufferBackend",
]

OUTDATED_TAG: Final = "(may be outdated)"

_PREFERENCE = re.compile(
    r"\b(?:i|i'm|i've|my|we)\b.*\b(?:prefer|prefers|like|likes|love|hate|always|usually|never|"
    r"habit|every|favourite|favorite|want|rather|enjoy|avoid|can't|allergic)\b",
    re.IGNORECASE,
)


class _Lines:
    """The last ``limit`` lines each speaker took part in, and everything so held.

    A line leaves the memory only once no speaker's buffer holds it: an assistant that attends
    rarely keeps its lines after the others' buffers moved on, and the snapshot must show them.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.by_speaker: dict[str, deque[str]] = {}
        self._lines: dict[int, str] = {}
        self._held: dict[str, deque[int]] = {}
        self._added = 0

    def add(self, line: str, speakers: list[str]) -> None:
        number = self._added
        self._added += 1
        self._lines[number] = line
        for speaker in speakers:
            self.by_speaker.setdefault(speaker, deque(maxlen=self.limit)).append(line)
            self._held.setdefault(speaker, deque(maxlen=self.limit)).append(number)
        if self.limit is not None and len(self._lines) > self.limit * max(1, len(self._held)):
            held = {n for numbers in self._held.values() for n in numbers}
            self._lines = {n: text for n, text in self._lines.items() if n in held}

    def text(self) -> str:
        held = {n for numbers in self._held.values() for n in numbers}
        return "\n".join(text for n, text in self._lines.items() if n in held)


class RecencyBufferBackend:
    """Keep the last ``lines`` user lines (``[date] speaker: text``) and return them all.

    Args:
        lines: How many user lines to keep.
    """

    name: ClassVar[str] = "recency_buffer"
    version: ClassVar[str] = "1"

    def __init__(self, lines: int = 40) -> None:
        if lines < 1:
            raise ValueError(f"{self.name} lines must be >= 1, got {lines}")
        self._lines = _Lines(lines)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Append the session's user lines, dropping the oldest beyond the limit."""
        speakers = sorted(session_speakers(messages))
        for message in messages:
            if message["role"] == "user":
                self._lines.add(render_turn(message), speakers)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Every kept line the asker took part in, oldest first (the query is ignored)."""
        return self._render(list(self._lines.by_speaker.get(entity_id, ())))

    def _render(self, lines: list[str]) -> str:
        return "\n".join(lines)

    def token_counts(self) -> TokenCounts:
        """No model calls."""
        return TokenCounts()

    def snapshot(self) -> str:
        """The kept lines."""
        return self._lines.text()

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`."""
        return tokens.count_tokens(self.snapshot())


class TaggedBufferBackend(RecencyBufferBackend):
    """The recency buffer whose older half of the lines is tagged "(may be outdated)".

    Args:
        lines: How many user lines to keep.
    """

    name: ClassVar[str] = "tagged_buffer"
    version: ClassVar[str] = "1"

    def _render(self, lines: list[str]) -> str:
        fresh = len(lines) // 2
        old = len(lines) - fresh
        return "\n".join(
            f"{line} {OUTDATED_TAG}" if index < old else line for index, line in enumerate(lines)
        )


class KeywordLinesBackend(RecencyBufferBackend):
    """Keep every user line with a first-person preference or habit word; return them all."""

    name: ClassVar[str] = "keyword_lines"
    version: ClassVar[str] = "1"

    def __init__(self) -> None:
        self._lines = _Lines(None)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Keep the session's user lines that match the keyword rule."""
        speakers = sorted(session_speakers(messages))
        for message in messages:
            if message["role"] == "user" and _PREFERENCE.search(message["content"]):
                self._lines.add(render_turn(message), speakers)


class SessionDatesBackend(RecencyBufferBackend):
    """Keep only the date of every session: ``[date] session with <speakers>``."""

    name: ClassVar[str] = "session_dates"
    version: ClassVar[str] = "1"
    # Only when sessions happened and who was there: nothing that was said.
    keeps_nothing: ClassVar[bool] = True

    def __init__(self) -> None:
        self._lines = _Lines(None)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Record the session's date and who took part."""
        if not messages:
            return
        speakers = sorted(session_speakers(messages))
        date = message_date(messages[0]["timestamp"])
        self._lines.add(f"[{date}] session with {', '.join(speakers)}", speakers)


class ExamOnlyBackend(SentenceLogBackend):
    """``sentence_log`` that answers only questions about someone, never the agent's own reads.

    A read whose query speaks in the first person (an agent's read before a session carries the
    user's opening line) gets nothing; any other (a probe's question about an entity) gets the
    whole log. The cost of a read is what the memory hands over at the probes too, so this
    costs what ``sentence_log`` costs and must score no better.
    """

    name: ClassVar[str] = "exam_only"
    version: ClassVar[str] = "1"

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Nothing for a first-person query; else every kept line ``entity_id`` was present for."""
        if is_first_person(query):
            return ""
        return await super().retrieve(session_id, entity_id, query)
