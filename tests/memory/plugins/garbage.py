"""A backend that answers with garbage of one chosen kind (``mode``), to check each is contained.

Modes: ``huge_context`` (a 100 MB retrieve), ``huge_snapshot`` (a 100 MB snapshot),
``wrong_types`` (retrieve returns bytes, None or an int in turn), ``counts_negative``,
``counts_huge`` (past int64), ``counts_not_numbers``, ``counts_go_down``, ``counts_not_counts``
(token_counts returns a dict), ``storage_lies`` (storage_tokens always 1), ``storage_huge``.
"""

from __future__ import annotations

from typing import Any

from drift_pipeline.memory import Message, TokenCounts

HUGE = 100 * 1024 * 1024


class Garbage:
    """Keeps session ids like a small keep-last memory; lies in the way ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.kept: list[str] = []
        self.calls = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.calls += 1
        self.kept = [*self.kept[-3:], session_id]

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> Any:
        self.calls += 1
        if self.mode == "huge_context":
            return "x" * HUGE
        if self.mode == "wrong_types":
            return [b"bytes", None, 42][self.calls % 3]
        return "\n".join(self.kept)

    def token_counts(self) -> Any:
        if self.mode == "counts_negative":
            return TokenCounts(write=-5, read=0)
        if self.mode == "counts_huge":
            return TokenCounts(write=10**30, read=0)
        if self.mode == "counts_not_numbers":
            return TokenCounts(write="many", read=0)  # type: ignore[arg-type]
        if self.mode == "counts_go_down":
            return TokenCounts(write=1000 - self.calls, read=0)
        if self.mode == "counts_not_counts":
            return {"write": 1, "read": 1}
        return TokenCounts(write=self.calls, read=0)

    def storage_tokens(self) -> int:
        if self.mode == "storage_lies":
            return 1
        if self.mode == "storage_huge":
            return 10**30
        return len(self.kept) * 8

    def snapshot(self) -> str:
        if self.mode == "huge_snapshot":
            return "y" * HUGE
        return "\n".join(self.kept)
