"""``braincore``: a BrainCore adapter run as a DRIFT memory backend, under the budget gate.

Each message of a session becomes one memory item (``memory_id`` ``<session>:<turn>``, its text
as ``content``, the session time as ``timestamp``, plus ``session_id``, ``speaker`` and
``role``), and the session's items go to ``ingest`` in one batch. ``retrieve`` asks the adapter
for its ``top_k`` items and returns them as context lines ``[date] speaker: text`` in the
adapter's rank order, keeping only items from sessions the asking entity took part in; an item
whose id the backend did not hand out cannot be placed in a session and is left out.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts

from ._adapter import BrainCoreAdapter, load_adapter

__all__ = ["BrainCoreBackend"]

DEFAULT_ADAPTER = "drift_pipeline.braincore._baseline:KeywordAdapter"


class BrainCoreBackend:
    """A BrainCore adapter (``ingest`` / ``retrieve`` / ``storage_bytes``) as a DRIFT backend.

    ``snapshot()`` is every item handed to the adapter, one line each: the adapter interface
    cannot show what it keeps, so its storage is counted as everything it was given.

    Args:
        adapter: ``MODULE[:Class]`` or ``FILE.py[:Class]`` of the adapter (built on first use,
            in the backend's worker); the keyword baseline by default.
        top_k: Items asked for per retrieve: the context's size in items.
    """

    name: ClassVar[str] = "braincore"
    version: ClassVar[str] = "1"

    def __init__(self, adapter: str = DEFAULT_ADAPTER, top_k: int = 5) -> None:
        if top_k < 1:
            raise ValueError(f"braincore top_k must be >= 1, got {top_k}")
        self.adapter_spec = adapter
        self.top_k = top_k
        self._adapter: BrainCoreAdapter | None = None
        self._lines: dict[str, str] = {}
        self._speakers: dict[str, frozenset[str]] = {}

    def _built(self) -> BrainCoreAdapter:
        # Built lazily so the backend object stays a plain value until its worker uses it.
        if self._adapter is None:
            self._adapter = load_adapter(self.adapter_spec)
        return self._adapter

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Hand the session's messages to the adapter as one batch of memory items."""
        if not messages:
            return
        speakers = frozenset(m["speaker"] for m in messages)
        items: list[dict[str, Any]] = []
        for turn, message in enumerate(messages):
            memory_id = f"{session_id}:{turn}"
            items.append(
                {
                    "memory_id": memory_id,
                    "content": message["content"],
                    "timestamp": message["timestamp"],
                    "session_id": session_id,
                    "speaker": message["speaker"],
                    "role": message["role"],
                }
            )
            date = message["timestamp"][:10]
            self._lines[memory_id] = f"[{date}] {message['speaker']}: {message['content']}"
            self._speakers[memory_id] = speakers
        self._built().ingest(items)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """The adapter's top items the asking entity may see, as context lines."""
        returned = self._built().retrieve(query, self.top_k)
        lines: list[str] = []
        for item in returned[: self.top_k]:
            memory_id = item.get("memory_id", item.get("id")) if isinstance(item, dict) else None
            if not isinstance(memory_id, str) or memory_id not in self._lines:
                continue
            if entity_id in self._speakers[memory_id] and self._lines[memory_id] not in lines:
                lines.append(self._lines[memory_id])
        return "\n".join(lines)

    def token_counts(self) -> TokenCounts:
        """No model calls are counted: the adapter interface does not report any."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Every item handed to the adapter, one line each."""
        return "\n".join(self._lines.values())

    def storage_bytes(self) -> int:
        """What the adapter reports as its footprint."""
        return int(self._built().storage_bytes())
