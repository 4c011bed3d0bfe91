"""A backend that records exactly what crossed the boundary, and returns it as its memory.

``snapshot`` lists, per stored session, the session id, the message keys, the number of
messages and characters it received and whether the tokenizer was already loaded; ``retrieve``
returns the ids it has stored so far and the question's arguments. The loop tests read both.
"""

from __future__ import annotations

import json

from drift_pipeline.memory import Message, TokenCounts
from drift_pipeline.tokens import encoding


class Recorder:
    """Records every call's arguments; never misbehaves."""

    name = "recorder"
    version = "1"

    def __init__(self) -> None:
        self.seen: list[dict[str, object]] = []

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.seen.append(
            {
                "session_id": session_id,
                "keys": sorted({key for m in messages for key in m}),
                "speakers": sorted({m["speaker"] for m in messages}),
                "messages": len(messages),
                "chars": sum(len(m["content"]) for m in messages),
                # Whether the harness had loaded the tokenizer before this call (it should
                # have, at start: a one-off load must not land in any store's timing).
                "tokenizer_ready": encoding.cache_info().currsize > 0,
            }
        )

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return json.dumps(
            {
                "session_id": session_id,
                "entity_id": entity_id,
                "query": query,
                "stored": [s["session_id"] for s in self.seen],
            }
        )

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(json.dumps(s, sort_keys=True) for s in self.seen)
