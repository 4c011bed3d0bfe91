"""A small third-party-style backend: keeps every line its asker took part in, returns the last few.

Used to show that a backend given as ``package.module:Class`` on ``PYTHONPATH`` runs through the
same loop as the built-ins. It also spends pretend LLM tokens, so token accounting is visible.
"""

from __future__ import annotations

from drift_pipeline.memory import Message, TokenCounts


class RecentLines:
    """Remembers the last ``keep`` lines of each participant's sessions."""

    name = "recent_lines"
    version = "0.3"

    def __init__(self, keep: int = 12) -> None:
        self.keep = keep
        self.lines: dict[str, list[str]] = {}
        self.write_tokens = 0
        self.read_tokens = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        participants = {m["speaker"] for m in messages}
        for message in messages:
            line = f"[{message['timestamp'][:10]}] {message['speaker']}: {message['content']}"
            for who in participants:
                kept = self.lines.setdefault(who, [])
                kept.append(line)
                del kept[: -self.keep]
        self.write_tokens += 10  # a pretend extraction call per session

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        self.read_tokens += 3
        return "\n".join(self.lines.get(entity_id, []))

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=self.write_tokens, read=self.read_tokens)

    def snapshot(self) -> str:
        return "\n".join(
            f"{who}: {line}" for who, lines in sorted(self.lines.items()) for line in lines
        )
