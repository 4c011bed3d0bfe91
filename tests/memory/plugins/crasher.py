"""A backend whose worker process dies (``os._exit``) once, in the middle of a run.

It spends pretend LLM tokens on every store and retrieve, so the tests can check that token
accounting carries on correctly after the worker is restarted with fresh counters.
"""

from __future__ import annotations

import os
from pathlib import Path

from drift_pipeline.memory import Message, TokenCounts

CRASHED_MARKER = "crashed-once"
EXIT_CODE = 3


class CrashOnce:
    """Keeps session ids; exits the process on the ``crash_at``-th store of a replicate."""

    name = "crash_once"
    version = "1"

    def __init__(self, crash_at: int = 5, write_cost: int = 7, read_cost: int = 2) -> None:
        self.crash_at = crash_at
        self.write_cost = write_cost
        self.read_cost = read_cost
        self.kept: list[str] = []
        self.write = 0
        self.read = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.write += self.write_cost
        marker = Path.cwd() / CRASHED_MARKER
        if session_id.endswith(f"-s{self.crash_at - 1:05d}") and not marker.exists():
            marker.write_text("1")
            os._exit(EXIT_CODE)
        self.kept.append(session_id)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        self.read += self.read_cost
        return " ".join(self.kept)

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=self.write, read=self.read)

    def snapshot(self) -> str:
        return "\n".join(self.kept)
