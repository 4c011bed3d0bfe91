from __future__ import annotations

from drift_pipeline.memory._protocol import TokenCounts
from drift_pipeline.memory.backends import AmnesiacBackend

from ._sessions import ask, chat, store_all


def test_amnesiac_remembers_nothing() -> None:
    backend = AmnesiacBackend()
    store_all(backend, [chat("2027-03-14", "I work at Acme Corp.", "I live in Leeds.")])
    assert ask(backend, "Where does the principal work?") == ""
    assert backend.snapshot() == ""
    assert backend.token_counts() == TokenCounts(write=0, read=0)
