"""The reference compressor's LLM summariser, against a loopback OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_server import FakeOpenAIServer, word_count

from drift_pipeline import tokens
from drift_pipeline.memory.backends.reference_compressor import (
    SUMMARY_CAP_TOKENS,
    ReferenceCompressor,
)

from ._sessions import PRINCIPAL, chat, run

KEY = "sk-test-DRIFT-SECRET-123"


@pytest.fixture(autouse=True)
def worker_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DRIFT_LLM_API_KEY", KEY)


def compressor(server: FakeOpenAIServer) -> ReferenceCompressor:
    return ReferenceCompressor(
        summariser="llm", llm_base_url=server.base_url, llm_model="summary-model"
    )


def test_one_call_per_session_with_its_actual_tokens(tmp_path: Path) -> None:
    replies: list[str] = []

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        replies.append("principal: joined Kestrel Aerospace as an engineer")
        return replies[-1]

    with FakeOpenAIServer(respond, api_key=KEY) as server:
        backend = compressor(server)
        session = chat("2027-03-14", "I joined Kestrel Aerospace.", "It rained all day.")
        run(backend.store("s1", session))
        run(backend.store("s2", []))  # nothing to summarise: no call
        body = server.requests[0]
    assert len(server.requests) == 1 and body["max_tokens"] == SUMMARY_CAP_TOKENS
    sent = sum(word_count(m["content"]) for m in body["messages"])
    # The server counts words: write cost is what the endpoint reported, not a model.
    assert backend.token_counts().write == sent + word_count(replies[0])
    assert backend.snapshot() == f"[2027-03-14]\n{replies[0]}"
    assert "Kestrel" in run(backend.retrieve("s3", PRINCIPAL, "Is she a Kestrel engineer?"))
    assert backend.version.startswith("11+llm:summary-model@")
    assert any((tmp_path / "state" / "llm_cache").rglob("*.json"))


def test_a_long_reply_is_cut_to_the_cap() -> None:
    with FakeOpenAIServer(lambda m, b: "word " * 2000) as server:
        backend = compressor(server)
        run(backend.store("s1", chat("2027-03-14", "I moved to Lisbon.")))
    assert tokens.count_tokens(backend.snapshot()) <= SUMMARY_CAP_TOKENS


def test_a_failed_call_fails_the_store() -> None:
    from drift_pipeline.llm import LLMError

    with FakeOpenAIServer(lambda m, b: "x") as server:
        backend = ReferenceCompressor(
            summariser="llm", llm_base_url=server.base_url, llm_model="m", llm_max_retries=0
        )
        server.fail_next(500)
        with pytest.raises(LLMError, match="HTTP 500"):
            run(backend.store("s1", chat("2027-03-14", "I moved to Lisbon.")))
    assert backend.snapshot() == ""


def test_the_llm_summariser_needs_an_endpoint() -> None:
    with pytest.raises(ValueError, match="llm_base_url and llm_model"):
        ReferenceCompressor(summariser="llm")
    with pytest.raises(ValueError, match="extractive or llm"):
        ReferenceCompressor(summariser="abstractive")  # type: ignore[arg-type]
