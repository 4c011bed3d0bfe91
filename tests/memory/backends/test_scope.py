"""Every built-in backend: scope isolation between entities, and deterministic output."""

from __future__ import annotations

import pytest

from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends import load_backend

from ._sessions import NOISE, PRINCIPAL, agent, ask, store_all, user

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
