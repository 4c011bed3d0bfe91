"""A backend that misbehaves in every way the loop must contain.

- ``store`` raises on every ``raise_every``-th call (per worker incarnation) and prints to
  stdout on every call (which must not corrupt the worker protocol);
- the first ``retrieve`` of each replicate hangs for ``hang_seconds`` (once: a marker in its state
  folder, which survives the restart, remembers it);
- afterwards every other ``retrieve`` returns a dict instead of a string.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from drift_pipeline.memory import Message, TokenCounts

HUNG_MARKER = "hung-once"


class FaultyBackend:
    """Raises, hangs once, returns the wrong type; remembers the sessions it managed to store."""

    name = "faulty"
    version = "1"

    def __init__(self, raise_every: int = 3, hang_seconds: float = 60.0) -> None:
        self.raise_every = raise_every
        self.hang_seconds = hang_seconds
        self.stores = 0
        self.retrieves = 0
        self.kept: list[str] = []

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.stores += 1
        print(f"faulty: storing {session_id}, this goes to stderr, not the protocol")
        if self.stores % self.raise_every == 0:
            raise RuntimeError(f"planned failure on store call {self.stores}")
        self.kept.append(session_id)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> Any:
        self.retrieves += 1
        marker = Path.cwd() / HUNG_MARKER
        if not marker.exists():
            marker.write_text("1")
            time.sleep(self.hang_seconds)  # blocks the whole worker, as a stuck client would
        if self.retrieves % 2 == 0:
            return {"answer": "a dict, not a string"}
        return f"sessions kept: {', '.join(self.kept)}"

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(self.kept)


class BadText:
    """Returns text that is not valid Unicode (a lone surrogate) from retrieve and snapshot."""

    name = "bad_text"
    version = "1"

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return "half a character: \ud800"

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\udcff"


class Huge:
    """Answers every query with ``size`` characters (to overflow the harness's line limit)."""

    name = "huge"
    version = "1"

    def __init__(self, size: int = 2_000_000) -> None:
        self.size = size
        self.calls = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        self.calls += 1
        return "x" * (self.size if query == "huge" else 10)

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""


class SlowStart:
    """Takes ``seconds`` to construct (a model to load, a server to reach), then works."""

    name = "slow_start"
    version = "1"

    def __init__(self, seconds: float = 2.0) -> None:
        time.sleep(seconds)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return "ready"

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""
