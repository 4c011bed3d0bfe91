"""``amnesiac``: the memory that remembers nothing, the MVOT baseline."""

from __future__ import annotations

from typing import ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts

__all__ = ["AmnesiacBackend"]


class AmnesiacBackend:
    """Store nothing and return nothing: every probe is answered from an empty context."""

    name: ClassVar[str] = "amnesiac"
    version: ClassVar[str] = "1"
    # Declared, so that the conformance check knows an empty memory is the point.
    keeps_nothing: ClassVar[bool] = True

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Drop the session."""

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the empty memory."""
        return ""

    def token_counts(self) -> TokenCounts:
        """No LLM calls, ever."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Nothing is persisted."""
        return ""
