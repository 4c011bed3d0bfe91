"""A tiny keyword memory, written the way a user would write one in their own script.

The Python-API tests paste this file's source into a script (so the class lives in
``__main__``) and also import it as ``keyword_memory:KeywordMemory`` for ``drift run``, so both
paths benchmark the very same code. Keep it self-contained: stdlib imports and the top-level
API only.
"""

from __future__ import annotations

import re

from drift_pipeline import Message, TokenCounts

WORD = re.compile(r"[a-z0-9]+")


class KeywordMemory:
    """Keeps every line with the speakers of its session; answers with the best-matching lines."""

    version = "1.0"

    def __init__(self, top: int = 6) -> None:
        self.top = top
        self.lines: list[tuple[frozenset[str], str]] = []
        self.reads = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        speakers = frozenset(m["speaker"] for m in messages)
        for message in messages:
            line = f"[{message['timestamp'][:10]}] {message['speaker']}: {message['content']}"
            self.lines.append((speakers, line))

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        self.reads += 1
        asked = set(WORD.findall(query.lower()))
        visible = [line for who, line in self.lines if entity_id in who]
        scored = sorted(
            range(len(visible)),
            key=lambda i: (-len(asked & set(WORD.findall(visible[i].lower()))), -i),
        )
        return "\n".join(visible[i] for i in sorted(scored[: self.top]))

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=0, read=self.reads)

    def snapshot(self) -> str:
        return "\n".join(line for _, line in self.lines)
