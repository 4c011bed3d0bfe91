"""A backend whose ``store`` hangs once, in the middle of a run of sessions."""

from __future__ import annotations

import time
from pathlib import Path

from drift_pipeline.memory import Message, TokenCounts

STALLED_MARKER = "stalled-once"


class StallOnce:
    """Keeps session ids; the store of the ``stall_at``-th session hangs (once per replicate)."""

    name = "stall_once"
    version = "1"

    def __init__(self, stall_at: int = 3, hang_seconds: float = 60.0) -> None:
        self.stall_at = stall_at
        self.hang_seconds = hang_seconds
        self.kept: list[str] = []

    async def store(self, session_id: str, messages: list[Message]) -> None:
        marker = Path.cwd() / STALLED_MARKER  # the state folder survives the restart
        if session_id.endswith(f"-s{self.stall_at - 1:05d}") and not marker.exists():
            marker.write_text("1")
            time.sleep(self.hang_seconds)  # blocks the whole worker, as a stuck client would
        self.kept.append(session_id)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return " ".join(self.kept)

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(self.kept)
