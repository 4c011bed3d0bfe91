"""A backend whose answer is named by the query: a window onto a long numbered log.

The query ``"first last cut"`` answers lines ``first`` to ``last - 1`` of the log, joined, less
their first ``cut`` characters: what a memory that hands back its newest lines within a budget
answers (old lines dropped from the front, the oldest kept one cut inside), so a test can ask
for any sequence of such answers and knows each exactly. Any other query is answered with itself.
"""

from __future__ import annotations

from drift_pipeline.memory import Message, TokenCounts


def window(query: str) -> str:
    """The answer to ``query`` (see the module docstring)."""
    try:
        first, last, cut = (int(part) for part in query.split())
    except ValueError:
        return query
    return "\n".join(
        f"[{i:05d}] the log's line number {i} says é{i * 7}" for i in range(first, last)
    )[cut:]


class Window:
    """Stores nothing; answers every query with :func:`window`."""

    name = "window"
    version = "1"

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return window(query)

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""
