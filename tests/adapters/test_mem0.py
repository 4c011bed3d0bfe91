"""The Mem0 adapter on the real ``mem0ai`` SDK: local storage, per-entity scope, its model path.

Every test builds a real ``Memory`` (embedded Qdrant on disk, the package's offline embedder)
in a folder of its own; the model path talks to an OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import TEST_API_KEY, FakeOpenAIServer, word_count

from drift_pipeline.adapters.mem0 import Mem0Backend
from drift_pipeline.memory import (
    CountsOwnStorage,
    DescribesService,
    HasSnapshot,
    IngestsAsynchronously,
    Message,
)
from drift_pipeline.memory.backends import backend_needs, load_backend
from drift_pipeline.tokens import count_tokens, count_tokens_lines


def _turn(speaker: str, text: str, day: int, role: str = "user") -> Message:
    return {
        "speaker": speaker,
        "role": role,
        "content": text,
        "timestamp": f"2031-05-{day:02d}T10:00:00",
    }


SESSIONS: list[tuple[str, list[Message]]] = [
    (
        "s0",
        [
            _turn("ines", "I just moved to Porto for the new job.", 3),
            _turn("helper", "Porto is lovely in spring.", 3, "assistant"),
            _turn("ines", "   ", 3),  # nothing to remember
        ],
    ),
    (
        "s1",
        [
            _turn("ines", "Ich trinke keinen Kaffee mehr, nur grünen Tee. 🍵", 9),
            _turn("helper", "Noted: green tea, no coffee.", 9, "assistant"),
        ],
    ),
    ("s2", [_turn("ines", "My sister Rosa works as a pilot for Azul.", 14)]),
    ("s3", [_turn("tomas", "My locker code is 4471, keep it private.", 15)]),
]


def _store_all(backend: Mem0Backend, sessions: list[tuple[str, list[Message]]]) -> None:
    async def run() -> None:
        for session_id, messages in sessions:
            owner = messages[0]["speaker"]
            await backend.store(session_id, messages, entity_id=owner)
            await backend.wait_until_queryable(session_id)

    asyncio.run(run())


def _ask(backend: Mem0Backend, entity: str, query: str) -> str:
    return asyncio.run(backend.retrieve("s3", entity, query))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Refuse every connection that leaves 127.0.0.1, recording what was tried."""
    tried: list[Any] = []
    connect = socket.socket.connect

    def loopback_only(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in {
            "127.0.0.1",
            "::1",
            "localhost",
        }:
            tried.append(address)
            raise OSError(f"network refused in this test: {address!r}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    yield tried


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Mem0Backend:
    backend = Mem0Backend(path=str(tmp_path_factory.mktemp("mem0")))
    _store_all(backend, SESSIONS)
    return backend


def test_it_is_registered_lazily_with_its_extra_and_its_optional_protocols() -> None:
    assert backend_needs("mem0").packages[0].install == "drift-pipeline[mem0]"
    assert backend_needs("mem0").llm is None
    assert backend_needs("mem0", {"infer": True}).llm is not None
    for protocol in (HasSnapshot, CountsOwnStorage, IngestsAsynchronously, DescribesService):
        assert issubclass(Mem0Backend, protocol), protocol


def test_stores_raw_messages_locally_and_finds_them_for_the_entities_present(
    tmp_path: Path, no_network: list[Any]
) -> None:
    backend = load_backend("mem0", {"path": str(tmp_path / "m")})
    assert isinstance(backend, Mem0Backend)
    _store_all(backend, SESSIONS)
    found = _ask(backend, "ines", "Which city did she move to?")
    assert "[2031-05-03] ines: I just moved to Porto for the new job." in found.splitlines()
    # The assistant took part in the session: it remembers it too; nobody else does.
    assert "Porto" in _ask(backend, "helper", "Where does Ines live now?")
    assert "4471" not in _ask(backend, "ines", "What is the locker code?")
    assert "4471" not in _ask(backend, "helper", "What is the locker code?")
    assert "4471" in _ask(backend, "tomas", "What is the locker code?")
    assert _ask(backend, "stranger", "Porto?") == ""
    assert no_network == []  # no telemetry, notice or model fetch left the machine
    assert (tmp_path / "m" / "qdrant").is_dir() and (tmp_path / "m" / "history.db").is_file()


def test_non_ascii_text_comes_back_unchanged(stored: Mem0Backend) -> None:
    found = _ask(stored, "ines", "What does she drink instead of coffee?")
    assert "[2031-05-09] ines: Ich trinke keinen Kaffee mehr, nur grünen Tee. 🍵" in found


def test_snapshot_holds_every_memory_and_its_own_count_matches(stored: Mem0Backend) -> None:
    lines = stored.snapshot().splitlines()
    # Each non-empty message once per entity that took part (blank messages are not kept).
    assert len(lines) == 2 * 2 + 2 * 2 + 1 + 1
    # In the order added: the session in helper's memory, then the same session in ines's.
    assert lines[0] == lines[2] == "[2031-05-03] ines: I just moved to Porto for the new job."
    assert stored.storage_tokens() == count_tokens_lines(stored.snapshot())
    for line in _ask(stored, "ines", "Porto sister tea").splitlines():
        assert line in lines


def test_the_same_sessions_give_the_same_memory_and_answers(
    stored: Mem0Backend, tmp_path: Path
) -> None:
    again = Mem0Backend(path=str(tmp_path / "again"))
    _store_all(again, SESSIONS)
    assert again.snapshot() == stored.snapshot()
    for query in ("Where does she live?", "coffee", "Who is a pilot?"):
        assert _ask(again, "ines", query) == _ask(stored, "ines", query)


def test_a_restarted_worker_picks_up_the_memory_on_disk(tmp_path: Path) -> None:
    folder = str(tmp_path / "m")
    first = Mem0Backend(path=folder)
    _store_all(first, SESSIONS[:2])
    before = first.snapshot()
    first.close()  # as a worker's exit does
    second = Mem0Backend(path=folder)
    assert second.snapshot() == before
    assert second.storage_tokens() == count_tokens_lines(before)
    _store_all(second, SESSIONS[:3])  # s0 and s1 again: already held, not stored twice
    after = second.snapshot()
    assert after.startswith(before) and after.count("Porto") == before.count("Porto")
    assert "Rosa" in _ask(second, "ines", "What does her sister do?")


def test_service_info_names_sdk_and_embedder_and_no_model(stored: Mem0Backend) -> None:
    info = stored.service_info()
    assert info["sdk"] == "mem0ai" and info["sdk_version"] == "2.2.1"
    assert "all-MiniLM-L6-v2" in info["embedder"] and "offline" in info["embedder"]
    assert info["llm"].startswith("none") and stored.version == "1"


# --- infer=True: Mem0's extraction model through an OpenAI-compatible endpoint ----------------


def _said(messages: list[dict[str, Any]]) -> list[str]:
    """The user lines of the session's new messages in Mem0's extraction prompt."""
    new = messages[-1]["content"].split("## New Messages\n", 1)[1].split("\n## ", 1)[0]
    return [line.removeprefix("user: ") for line in new.splitlines() if line.startswith("user: ")]


def _extract(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Mem0's additive extraction: one fact per user line of the session's new messages."""
    facts = _said(messages)
    return json.dumps(
        {"memory": [{"id": str(i), "text": f"User said: {fact}"} for i, fact in enumerate(facts)]}
    )


@pytest.fixture
def extraction(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(_extract, api_key=TEST_API_KEY) as server:
        monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
        yield server


def _inferring(server: FakeOpenAIServer, folder: Path, **options: Any) -> Mem0Backend:
    return Mem0Backend(
        infer=True,
        llm_base_url=server.base_url,
        llm_model="extractor-1",
        path=str(folder),
        **options,
    )


def test_with_a_model_it_keeps_the_extracted_facts_and_counts_their_tokens(
    extraction: FakeOpenAIServer, tmp_path: Path
) -> None:
    backend = _inferring(extraction, tmp_path / "m")
    _store_all(backend, SESSIONS[:3])
    # One extraction call per session and entity present (ines and helper, then ines alone).
    assert extraction.chat_requests == 5
    body = extraction.requests[0]
    assert body["model"] == "extractor-1" and body["response_format"] == {"type": "json_object"}
    snapshot = backend.snapshot().splitlines()
    assert "[2031-05-14] User said: My sister Rosa works as a pilot for Azul." in snapshot
    assert "Rosa" in _ask(backend, "ines", "What does her sister do?")
    assert "Rosa" not in _ask(backend, "helper", "What does her sister do?")
    # The counts are the endpoint's usage (the test server counts words, not tiktoken tokens).
    expected = sum(
        sum(word_count(m["content"]) for m in b["messages"])
        + word_count(_extract(b["messages"], b))
        for b in extraction.requests
    )
    assert backend.token_counts().write == expected and backend.token_counts().read == 0
    assert backend.version == "1+infer:extractor-1"
    assert backend.service_info()["llm"].startswith("extractor-1 at 127.0.0.1:")
    for path in (tmp_path / "m").rglob("*"):
        assert not path.is_file() or TEST_API_KEY.encode() not in path.read_bytes(), path


def test_rate_limits_and_server_errors_are_retried_then_raised(
    extraction: FakeOpenAIServer, tmp_path: Path
) -> None:
    backend = _inferring(extraction, tmp_path / "m", max_retries=2)
    extraction.fail_next(429, times=2, retry_after=0.01)
    _store_all(backend, SESSIONS[2:3])  # two rate limits, then the answer
    assert extraction.chat_requests == 3 and "Rosa" in backend.snapshot()
    extraction.fail_next(500, times=3)
    with pytest.raises(Exception, match="500"):
        _store_all(backend, SESSIONS[3:])
    assert extraction.chat_requests == 6
    assert "4471" not in backend.snapshot()


def test_an_endpoint_without_usage_is_counted_not_taken_as_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with FakeOpenAIServer(_extract, api_key=TEST_API_KEY, include_usage=False) as server:
        monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
        backend = _inferring(server, tmp_path / "m")
        _store_all(backend, SESSIONS[2:3])
        body = server.requests[0]
    expected = sum(count_tokens(m["content"]) for m in body["messages"])
    expected += count_tokens(_extract(body["messages"], body))
    assert backend.token_counts().write == expected > 0
    assert (
        "(1 calls without usage counted with cl100k_base)" in backend.service_info()["token_counts"]
    )


def _rewrite(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A model that asks Mem0 to rewrite, drop and keep the memories it was shown."""
    prompt = messages[-1]["content"]
    shown = json.loads(prompt.split("## Existing Memories\n", 1)[1].split("\n", 1)[0])
    asked = [{"id": "n", "text": f"User said: {fact}"} for fact in _said(messages)]
    for memory, event in zip(shown, ("UPDATE", "DELETE", "NONE"), strict=False):
        text = f"Now: {memory['text']}" if event == "UPDATE" else memory["text"]
        asked.append({"id": memory["id"], "text": text, "event": event})
    return json.dumps({"memory": asked})


def test_with_a_model_that_asks_for_updates_and_deletes_the_count_stays_exact(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with FakeOpenAIServer(_rewrite, api_key=TEST_API_KEY) as server:
        monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
        backend = _inferring(server, tmp_path / "m")
        before: list[str] = []
        for session in SESSIONS[:3]:
            _store_all(backend, [session])
            snapshot = backend.snapshot()
            assert backend.storage_tokens() == count_tokens_lines(snapshot)
            # The pinned Mem0 only adds: a rewrite is a new memory and nothing is dropped.
            assert snapshot.splitlines()[: len(before)] == before
            before = snapshot.splitlines()
    assert "[2031-05-09] Now: User said: I just moved to Porto for the new job." in before


def test_a_store_that_fails_after_mem0_kept_a_memory_still_counts_it(tmp_path: Path) -> None:
    backend = Mem0Backend(path=str(tmp_path / "m"))
    _store_all(backend, SESSIONS[:1])
    # Mem0 writes a memory's history after the memory itself: with its history file locked by
    # another connection, the memory is kept and the add raises.
    backend._memory.db.connection.execute("PRAGMA busy_timeout = 20")  # fail fast, not in 5 s
    lock = sqlite3.connect(tmp_path / "m" / "history.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    with pytest.raises(Exception, match="locked"):
        _store_all(backend, SESSIONS[2:3])
    lock.execute("ROLLBACK")
    lock.close()
    assert "Rosa" in backend.snapshot()
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())
    _store_all(backend, SESSIONS[3:])
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())
