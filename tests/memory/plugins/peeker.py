"""A backend that searches its own process for sessions it has not been given yet.

Sessions reach the worker in runs (one message per run of sessions up to the next checkpoint).
At every ``store`` this backend walks every object the garbage collector tracks, collects the
ids of all session payloads still alive in the worker, and keeps, per stored session, the
furthest session it could see. ``snapshot`` lists ``stored_id furthest_visible_id`` lines, so
a test can check that nothing past the next checkpoint was ever within reach.
"""

from __future__ import annotations

import gc
import re

from drift_pipeline.memory import Message, TokenCounts

_INDEX = re.compile(r"-s(\d+)$")


def _index(session_id: str) -> int:
    found = _INDEX.search(session_id)
    return int(found.group(1)) if found else -1


class Peeker:
    """Stores nothing of the sessions themselves; records how far ahead it could look."""

    name = "peeker"
    version = "1"

    def __init__(self) -> None:
        self.furthest: list[tuple[str, str]] = []

    async def store(self, session_id: str, messages: list[Message]) -> None:
        visible = [session_id]
        for thing in gc.get_objects():
            if isinstance(thing, dict) and "messages" in thing:
                other = thing.get("session_id")
                if isinstance(other, str):
                    visible.append(other)
        self.furthest.append((session_id, max(visible, key=_index)))

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return ""

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return "\n".join(f"{stored} {furthest}" for stored, furthest in self.furthest)
