"""Backend objects across the worker boundary: packed in the harness, rebuilt in the sandbox."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.memory import BackendWorker, MemoryBackend, Message, TokenCounts, pack_backend
from drift_pipeline.memory._instance import INSTANCE_OPTION, instance_name, unpack_backend

SESSION = [
    {"speaker": "principal", "role": "user", "content": "I moved to Oslo.", "timestamp": "2027"},
]
STRONGEST = "unprivileged-user+mount-namespace"


class Notebook:
    """Keeps lines; reports where it runs, so the test sees the worker, not the harness."""

    version = "0.9"

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    async def store(self, session_id: str, messages: list[Message]) -> None:
        self.lines.append(session_id)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return f"pid={os.getpid()} uid={os.getuid()} lines={','.join(self.lines)}"

    def token_counts(self) -> TokenCounts:
        return TokenCounts(write=len(self.lines))

    def snapshot(self) -> str:
        return "\n".join(self.lines)


def _in_worker(options: dict[str, Any], body: Any) -> Any:
    async def go() -> Any:
        worker = BackendWorker("notebook", options, [Path(__file__).parent], 10.0)
        try:
            started = await worker.start()
            return started, await body(worker)
        finally:
            await worker.close()

    return asyncio.run(go())


def test_the_worker_starts_from_the_object_as_it_was_when_packed():
    notebook = Notebook(["preloaded"])
    packed = pack_backend(notebook)
    notebook.lines.append("added after packing")  # not seen by the worker

    async def body(worker: BackendWorker) -> list[str]:
        await worker.call({"op": "store", "session_id": "s1", "messages": SESSION})
        before = await worker.call({"op": "snapshot"})
        await worker._restart()  # what a timeout or crash does: a fresh copy of the packed one
        after = await worker.call({"op": "snapshot"})
        answer = await worker.call(
            {"op": "retrieve", "session_id": "s1", "entity_id": "principal", "query": "?"}
        )
        return [before.data["snapshot"], after.data["snapshot"], answer.data["context"]]

    started, (before, after, answer) = _in_worker(packed.worker_options(), body)
    assert started.ok, started.error
    assert started.data["version"] == "0.9"
    assert before == "preloaded\ns1"
    assert after == "preloaded"
    assert f"pid={os.getpid()} " not in answer  # it ran in the worker process
    if os.geteuid() == 0:
        assert started.data["isolation"] == STRONGEST
        assert "uid=0 " not in answer
    assert notebook.lines == ["preloaded", "added after packing"]


def test_the_packed_object_travels_in_the_init_request_not_as_a_constructor_option():
    worker = BackendWorker("notebook", {**pack_backend(Notebook([])).worker_options()}, [], 5.0)
    try:
        assert INSTANCE_OPTION not in worker.options
        assert worker.options == {}
    finally:
        asyncio.run(worker.close())  # never started, but its folder is made: removed here


def test_a_payload_that_does_not_load_is_one_line_naming_the_backend():
    with pytest.raises(ValueError, match=r"^cannot rebuild backend instance 'notebook' in its "):
        unpack_backend("bm90IGEgcGlja2xl", "notebook")
    broken = _in_worker({INSTANCE_OPTION: "bm90IGEgcGlja2xl"}, lambda worker: asyncio.sleep(0))
    assert not broken[0].ok
    assert "cannot rebuild backend instance 'notebook'" in str(broken[0].error)


def test_the_default_name_is_the_class_name_lower_cased():
    assert instance_name(Notebook([])) == "notebook"
    named = Notebook([])
    named.name = "field_notes"  # type: ignore[attr-defined]
    assert instance_name(named) == "field_notes"
    named.name = 7  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="name attribute is a int, expected a str"):
        instance_name(named)


def test_a_backend_with_sync_store_is_refused_before_packing():
    class Blocking(Notebook):
        def store(self, session_id: str, messages: list[Message]) -> None:  # type: ignore[override]
            self.lines.append(session_id)

    with pytest.raises(ValueError, match="Blocking must define store with 'async def'"):
        pack_backend(Blocking([]))


def test_modules_outside_the_environment_travel_by_value(tmp_path: Path):
    # A class from a module of the user's own: not installed, and gone by the time it loads.
    (tmp_path / "private_memory.py").write_text(
        "from drift_pipeline.memory import TokenCounts\n"
        "class Private:\n"
        "    async def store(self, session_id, messages): pass\n"
        "    async def retrieve(self, session_id, entity_id, query): return 'private'\n"
        "    def token_counts(self): return TokenCounts()\n"
        "    def snapshot(self): return ''\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import private_memory  # type: ignore[import-not-found]

        packed = pack_backend(private_memory.Private())
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("private_memory", None)
    assert (packed.name, packed.class_path) == ("private", "private_memory:Private")
    # By reference this would need `import private_memory`, which no longer resolves.
    rebuilt = unpack_backend(packed.worker_options()[INSTANCE_OPTION], "private")
    assert asyncio.run(rebuilt.retrieve("s", "e", "q")) == "private"


def test_a_subclass_of_the_protocol_as_spec_shows_it_runs_in_the_worker():
    class SpecStyle(MemoryBackend):
        async def store(self, session_id: str, messages: list[Message]) -> None:
            self.last = session_id

        async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
            return f"after {self.last}"

        def token_counts(self) -> TokenCounts:
            return TokenCounts(read=1)

        def snapshot(self) -> str:
            return self.last

    packed = pack_backend(SpecStyle())
    assert packed.name == "specstyle"

    async def body(worker: BackendWorker) -> str:
        await worker.call({"op": "store", "session_id": "s7", "messages": SESSION})
        answer = await worker.call(
            {"op": "retrieve", "session_id": "s7", "entity_id": "principal", "query": "?"}
        )
        return str(answer.data["context"])

    started, answer = _in_worker(packed.worker_options(), body)
    assert started.ok, started.error
    assert answer == "after s7"


def test_the_spec_example_with_three_methods_runs_and_its_storage_is_not_measured():
    class ZepStyle(MemoryBackend):  # spec §8.2: store, retrieve, token_counts; no snapshot()
        async def store(self, session_id: str, messages: list[Message]) -> None:
            self.last = session_id

        async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
            return f"after {self.last}"

        def token_counts(self) -> TokenCounts:
            return TokenCounts()

    packed = pack_backend(ZepStyle())

    async def body(worker: BackendWorker) -> dict[str, Any]:
        stored = await worker.call(
            {"op": "store", "session_id": "s7", "messages": SESSION, "snapshot": True}
        )
        assert stored.ok, stored.error
        answer = await worker.call(
            {"op": "retrieve", "session_id": "s7", "entity_id": "principal", "query": "?"}
        )
        return {**stored.data, "context": answer.data["context"]}

    started, data = _in_worker(packed.worker_options(), body)
    assert started.ok, started.error
    # Stored and answered; its size is not measured (null, never 0) and no snapshot is sent.
    assert data["context"] == "after s7"
    assert data["storage_tokens"] is None and "snapshot" not in data
    assert data["t0"] <= data["t1"]  # the store's span on the meter's clock
