"""Every built-in backend: scope isolation between entities, and deterministic output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from drift_pipeline.memory._protocol import CountsOwnStorage, MemoryBackend, Message
from drift_pipeline.memory.backends import backend_names, backend_registration, load_backend
from drift_pipeline.memory.backends._scoped import entity_scoped
from drift_pipeline.tokens import count_tokens_lines

from ._sessions import (
    NOISE,
    PRINCIPAL,
    agent,
    ask,
    chat,
    random_history,
    run,
    store_all,
    store_counting,
    user,
)

REMEMBERING = ["full_context", "reference_compressor", "bm25", "fact_store", "temporal_graph"]
QUESTION = "Where does the principal live and where does the principal work?"


def _session(date: str, helper: str, *lines: str) -> list[Message]:
    return [m for line in lines for m in (user(line, date), agent("Got it, thanks.", date, helper))]


def _world() -> list[list[Message]]:
    # A private disclosure to assistant_a (a canary for assistant_b), then a session with b only.
    return [
        _session("2027-03-01", "assistant_a", "I live in Reykjavik.", "I work at Fjordbank."),
        *NOISE,
        _session("2027-03-05", "assistant_b", "I live in Oslo."),
    ]


@pytest.mark.parametrize("name", REMEMBERING)
def test_private_facts_never_reach_an_entity_that_was_not_there(name: str) -> None:
    backend = load_backend(name, {})
    store_all(backend, _world())
    seen_by_b = ask(backend, QUESTION, entity="assistant_b")
    assert "Reykjavik" not in seen_by_b
    assert "Fjordbank" not in seen_by_b
    assert "Oslo" in seen_by_b
    seen_by_a = ask(backend, QUESTION, entity="assistant_a")
    assert "Reykjavik" in seen_by_a
    assert "Fjordbank" in seen_by_a
    assert "Oslo" not in seen_by_a
    assert ask(backend, QUESTION, entity="outsider") == ""
    assert "Oslo" in ask(backend, QUESTION, entity=PRINCIPAL)


@pytest.mark.parametrize("name", ["amnesiac", *REMEMBERING])
def test_same_input_same_output(name: str) -> None:
    first, second = load_backend(name, {}), load_backend(name, {})
    store_all(first, _world())
    store_all(second, _world())
    assert first.snapshot() == second.snapshot()
    assert first.token_counts() == second.token_counts()
    for entity in ("assistant_a", "assistant_b", PRINCIPAL):
        assert ask(first, QUESTION, entity=entity) == ask(second, QUESTION, entity=entity)


def _scoped_built_ins() -> list[str]:
    return [name for name in backend_names() if backend_registration(name).scoped]


def test_every_scoped_built_in_keeps_each_entity_to_the_sessions_it_was_given() -> None:
    # As the harness stores a shared session: once per entity whose memory it enters. The
    # private one goes to ana's memory only; ben, asked the same question, must not get it.
    private = _session("2027-03-01", "desk", "I live in Reykjavik.")
    shared = _session("2027-03-05", "desk", "I live in Oslo.")
    names = _scoped_built_ins()
    assert {"bm25", "fact_store", "sentence_log", "recency_buffer"} <= set(names)
    shared_seen = set()
    for name in names:
        backend = load_backend(name, {})

        async def go(backend: MemoryBackend = backend) -> None:
            await backend.store("s1", private, entity_id="ana")  # type: ignore[call-arg]
            for entity in ("ana", "ben"):
                await backend.store("s2", shared, entity_id=entity)  # type: ignore[call-arg]

        run(go())
        seen_by_ben = ask(backend, QUESTION, entity="ben")
        assert "Reykjavik" not in seen_by_ben, name
        assert ask(backend, QUESTION, entity="outsider") == "", name
        if "Oslo" in seen_by_ben:
            shared_seen.add(name)
    # Not a scope kept by storing nothing: the shared session reached ben's memory.
    assert set(REMEMBERING) <= shared_seen


def test_the_leaky_reference_hands_one_entity_s_session_to_another() -> None:
    assert "leaky_shared" not in _scoped_built_ins()
    backend = load_backend("leaky_shared", {})
    run(backend.store("s1", _session("2027-03-01", "desk", "I live in Reykjavik.")))
    assert "Reykjavik" in ask(backend, QUESTION, entity="ben")


def test_several_memories_count_their_joined_snapshot_exactly() -> None:
    # Every scoped built-in, its memories growing in turn (an insertion in the middle of the
    # joined snapshot), then one with awkward line ends: blank lines, a part ending in a break.
    sessions = [
        ("ana", _session("2027-03-01", "desk", "I live in Reykjavik.", "I work at Fjordbank.")),
        ("ben", _session("2027-03-02", "desk", "I live in Oslo.")),
        ("ana", _session("2027-03-03", "desk", "I moved to Bergen.")),
        ("cy", _session("2027-03-04", "desk", "I prefer tea.")),
        ("ben", _session("2027-03-05", "desk", "I started at Equinor.")),
    ]
    for name in _scoped_built_ins():
        backend = load_backend(name, {})
        counted = 0
        for number, (entity, messages) in enumerate(sessions):
            run(backend.store(f"s{number}", messages, entity_id=entity))  # type: ignore[call-arg]
            report = getattr(backend, "storage_tokens", None)
            if number and callable(report):
                assert report() == count_tokens_lines(backend.snapshot()), (name, number)
                counted += 1
        assert counted == len(sessions) - 1, name

    class Lines:
        def __init__(self) -> None:
            self.text = ""

        async def store(self, session_id: str, messages: list[Message]) -> None:
            self.text += "".join(message["content"] for message in messages)

        def snapshot(self) -> str:
            return self.text

    scoped = entity_scoped(Lines)()
    pieces = ["a", "\n", "\n\n", " ", ".\n", "Hello world", "é\n", "x"]
    for step in range(60):
        entity = "abc"[(step * 7) % 3]
        text = "".join(pieces[(step * k) % len(pieces)] for k in range(step % 4))
        run(scoped.store("s", [user(text, speaker=entity)], entity_id=entity))  # type: ignore[call-arg]
        report = getattr(scoped, "storage_tokens", None)
        if callable(report):
            assert report() == count_tokens_lines(scoped.snapshot()), step


@pytest.mark.parametrize("name", ["bm25", "fact_store", "temporal_graph"])
def test_several_memories_that_count_themselves_count_the_joined_snapshot_unbuilt(
    name: str,
) -> None:
    # A memory per speaker, people and assistants, each changing in turn; the first and the last
    # memory by entity id heard only small talk (a fact memory keeps nothing of it).
    backend = load_backend(name, {})
    small_talk = chat("2027-01-01", "I'm so tired today.", speaker="aaron", helper="zed")
    history = random_history(7, 40, ("principal", "partner"), ("assistant_a", "assistant_b"))
    store_counting(backend, [small_talk, *history])
    assert len(backend._memories) == 6  # type: ignore[attr-defined]
    built = 0

    def counted(memory: Any) -> Callable[[], str]:
        snapshot = memory.snapshot

        def counting() -> str:
            nonlocal built
            built += 1
            return str(snapshot())

        return counting

    for memory in backend._memories.values():  # type: ignore[attr-defined]
        memory.snapshot = counted(memory)
    assert isinstance(backend, CountsOwnStorage)
    reported = backend.storage_tokens()
    assert built == 0  # counted from the memories' own counts
    assert reported == count_tokens_lines(backend.snapshot())
    with pytest.raises(AttributeError):
        backend.snapshot_tail  # noqa: B018  (the first memory's is not the joined snapshot's)
