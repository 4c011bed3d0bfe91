"""Backends that hang: on every call, or on one call in five (awaiting, or blocking); and one
that fails every call at once (faults that cost no wait)."""

from __future__ import annotations

import asyncio
import time

from drift_pipeline.memory import Message, TokenCounts


class _Base:
    every = 1
    blocking = False

    def __init__(self) -> None:
        self.calls = 0
        self.kept: list[str] = []

    async def _maybe_hang(self) -> None:
        self.calls += 1
        if self.calls % self.every == 0:
            if self.blocking:
                time.sleep(3600)
            await asyncio.sleep(3600)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        await self._maybe_hang()
        self.kept.append(session_id)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        await self._maybe_hang()
        return "\n".join(self.kept[-5:])

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(self.kept[-5:])


class HangsAlways(_Base):
    """Every store and retrieve awaits forever."""


class HangsOneInFive(_Base):
    """Every fifth call awaits forever."""

    every = 5


class BlocksOneInFive(_Base):
    """Every fifth call blocks the whole worker (no coroutine to cancel)."""

    every = 5
    blocking = True


class Fine(_Base):
    """Never hangs: the fault-free twin."""

    every = 10**9


class RaisesAlways(_Base):
    """Every store and retrieve raises at once."""

    async def _maybe_hang(self) -> None:
        raise RuntimeError("planned failure")
