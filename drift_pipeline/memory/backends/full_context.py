"""``full_context``: keep every turn verbatim and hand back the most recent ``budget_tokens``.

The context-stuffing baseline: perfect recall while the history fits the budget, visible decay
once it does not (old facts fall off the front), and the largest storage cost of all.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import ClassVar

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._text import render_turn, session_speakers

__all__ = ["FullContextBackend"]


@dataclass
class _EntityLog:
    """The lines one entity may see, with running token totals for budget cuts in O(log n)."""

    lines: list[str] = field(default_factory=list)
    line_tokens: list[int] = field(default_factory=list)
    cumulative: list[int] = field(default_factory=list)

    def append(self, line: str, line_tokens: int) -> None:
        previous = self.cumulative[-1] if self.cumulative else 0
        self.lines.append(line)
        self.line_tokens.append(line_tokens)
        self.cumulative.append(previous + line_tokens)


class FullContextBackend:
    """Store every message as ``[date] speaker: text``; retrieve the newest ``budget_tokens``.

    Each line is visible to the speakers of the session it came from. Retrieval ignores the query:
    it returns the most recent lines that fit, cutting the oldest one it reaches mid-line with
    ``tokens.truncate_tail``. Token counts are kept per line (line plus newline, which is exactly
    what it adds to the joined text since every line starts with ``[``), so a retrieve never
    re-tokenises the history.

    Args:
        budget_tokens: Size of the returned context; the asking agent's context window.

    """

    name: ClassVar[str] = "full_context"
    # 2: a retrieve reuses its entity's previous cut when nothing was stored since (same answers,
    # lower read latency).
    version: ClassVar[str] = "2"

    def __init__(self, budget_tokens: int = 200_000) -> None:
        if budget_tokens < 0:
            raise ValueError(f"full_context budget_tokens must be >= 0, got {budget_tokens}")
        self.budget_tokens = budget_tokens
        self._all_lines: list[str] = []
        self._logs: dict[str, _EntityLog] = {}
        self._storage = tokens.LineTally()
        # The last answer per entity and the log length it was cut from: the answer ignores the
        # query, so every probe of a checkpoint after the first gets it back without a re-cut.
        self._answers: dict[str, tuple[int, str]] = {}

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Append every turn of the session, verbatim, to the log of each of its speakers."""
        if not messages:
            return
        lines = [render_turn(message) for message in messages]
        # Through the shared line cache: the storage count of the same lines is then a lookup.
        counts = [tokens.count_line_tokens(line + "\n") for line in lines]
        speakers = sorted(session_speakers(messages))
        self._all_lines.extend(lines)
        for line in lines:
            self._storage.append(line)
        for speaker in speakers:
            log = self._logs.setdefault(speaker, _EntityLog())
            for line, count in zip(lines, counts, strict=True):
                log.append(line, count)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the newest lines ``entity_id`` took part in, within ``budget_tokens``."""
        log = self._logs.get(entity_id)
        if log is None or not log.lines or self.budget_tokens == 0:
            return ""
        cut_at, answer = self._answers.get(entity_id, (-1, ""))
        if cut_at != len(log.lines):
            answer = self._cut(log)
            self._answers[entity_id] = (len(log.lines), answer)
        return answer

    def _cut(self, log: _EntityLog) -> str:
        total = log.cumulative[-1]
        # First index whose suffix (lines[i:]) fits the budget: total - cumulative[i-1] <= budget.
        start = _first_fitting(log.cumulative, total - self.budget_tokens)
        kept = log.lines[start:]
        used = total - (log.cumulative[start - 1] if start > 0 else 0)
        if start > 0:
            room = self.budget_tokens - used
            partial = tokens.truncate_tail(log.lines[start - 1] + "\n", room) if room > 0 else ""
            # A cut inside a multi-byte character can re-encode longer than it was cut: drop it.
            if partial and tokens.count_tokens(partial) <= room:
                return partial + "\n".join(kept) if kept else partial.removesuffix("\n")
        return "\n".join(kept)

    def token_counts(self) -> TokenCounts:
        """No LLM calls: storing and retrieving are free."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Every stored line, oldest first."""
        return "\n".join(self._all_lines)

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, counted as lines arrive (see ``CountsOwnStorage``)."""
        return self._storage.count()


def _first_fitting(cumulative: list[int], must_drop: int) -> int:
    """Smallest ``i`` with ``cumulative[i - 1] >= must_drop`` (0 when nothing must be dropped)."""
    if must_drop <= 0:
        return 0
    return bisect.bisect_left(cumulative, must_drop) + 1
