"""``braincore``: a BrainCore adapter run as a DRIFT memory backend, under the budget gate.

Each message of a session becomes one memory item (``memory_id`` ``<session>:<turn>``, its text
as ``content``, the session time as ``timestamp``, plus ``session_id``, ``speaker`` and
``role``), and the session's items go to ``ingest`` in one batch. ``retrieve`` asks the adapter
for its ``top_k`` items and returns them as context lines ``[date] speaker: text`` in the
adapter's rank order, keeping only items from sessions the asking entity took part in; an item
whose id the backend did not hand out cannot be placed in a session and is left out.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from drift_pipeline.memory._protocol import Message, TokenCounts

from ._adapter import BrainCoreAdapter, absolute_adapter_spec, load_adapter, not_items
from ._dataset import BrainCoreError

__all__ = ["BrainCoreBackend", "caller_options"]

DEFAULT_ADAPTER = "drift_pipeline.braincore._baseline:KeywordAdapter"


class BrainCoreBackend:
    """A BrainCore adapter (``ingest`` / ``retrieve`` / ``storage_bytes``) as a DRIFT backend.

    ``snapshot()`` is every item handed to the adapter, one line each: the adapter interface
    cannot show what it keeps, so its storage is counted as everything it was given.

    Args:
        adapter: ``MODULE[:Class]`` or ``FILE.py[:Class]`` of the adapter (built on first use,
            in the backend's worker); the keyword baseline by default. A relative file is taken
            from the folder this object is built in.
        top_k: Items asked for per retrieve: the context's size in items.
        search_path: A folder to import ``MODULE`` from (``drift run`` gives its caller's
            folder, since the worker starts in a folder of its own).
    """

    name: ClassVar[str] = "braincore"
    version: ClassVar[str] = "1"

    def __init__(
        self, adapter: str = DEFAULT_ADAPTER, top_k: int = 5, search_path: str | None = None
    ) -> None:
        if top_k < 1:
            raise ValueError(f"braincore top_k must be >= 1, got {top_k}")
        self.adapter_spec = absolute_adapter_spec(adapter)
        self.top_k = top_k
        self.search_path = search_path
        self._adapter: BrainCoreAdapter | None = None
        self._lines: dict[str, str] = {}
        self._speakers: dict[str, frozenset[str]] = {}

    def _built(self) -> BrainCoreAdapter:
        # Built lazily so the backend object stays a plain value until its worker uses it.
        if self._adapter is None:
            if self.search_path is not None and self.search_path not in sys.path:
                sys.path.insert(0, self.search_path)
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
        kind = not_items(returned)
        if kind is not None:
            # A fault the gate records, as drift braincore stops on it: an empty context would
            # pass for an adapter that found nothing.
            raise BrainCoreError(
                f"adapter {self.adapter_spec!r}: retrieve returned {kind}, expected a list of dicts"
            )
        lines: list[str] = []
        for item in returned[: self.top_k]:
            memory_id = item.get("memory_id", item.get("id"))
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


def caller_options(
    configured: Mapping[str, Any], adapter: str | None, folder: str | Path
) -> dict[str, Any]:
    """The ``braincore`` backend's options as its worker needs them, fixed in the caller.

    The worker starts in a folder of its own: a relative ``FILE.py`` becomes absolute against
    ``folder``, and a module is imported from ``folder`` too (``search_path``) unless the options
    name another. A file that is not there is an error here, before any worker starts.

    Args:
        configured: The options from ``--backend-config`` (may name ``adapter``).
        adapter: The adapter named on the command line (``--braincore-adapter``), if any.
        folder: The caller's folder.

    Returns:
        The options, ``adapter`` absolute where it is a file.

    Raises:
        BrainCoreError: One line: the adapter is named twice differently, or its file is missing.
    """
    options = dict(configured)
    given = options.get("adapter")
    if adapter is not None:
        if given is not None and given != adapter:
            raise BrainCoreError(
                f"--braincore-adapter {adapter!r} and the backend config's adapter {given!r} "
                "disagree; give one"
            )
        options["adapter"] = adapter
    spec = options.get("adapter")
    if not isinstance(spec, str):
        return options
    resolved = absolute_adapter_spec(spec, folder)
    target = resolved.partition(":")[0]
    if target.endswith(".py"):
        if not Path(target).is_file():
            raise BrainCoreError(f"braincore adapter {spec!r}: no such file {target}")
    else:
        options.setdefault("search_path", str(Path(folder).resolve()))
    options["adapter"] = resolved
    return options
