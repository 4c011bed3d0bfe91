"""The pinned LLM reader against a loopback OpenAI-compatible server (real ``openai`` client)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from llm_server import FakeOpenAIServer
from probe_family_example import CANARY

from drift_pipeline import tokens
from drift_pipeline.evaluation import LLMReader, cap_context
from drift_pipeline.evaluation._prompts import load_prompt, prompts_sha256
from drift_pipeline.llm import LLMClient, LLMConfig
from drift_pipeline.world.probe_families import _registry, register_probe_family

RECALL: dict[str, Any] = {"probe_type": "recall", "question": "Where does Ada work now?"}
ACTION: dict[str, Any] = {
    "probe_type": "action",
    "question": "Sign Ada's email.",
    "options": [{"text": "Leave it out"}, {"text": "Sign as Kestrel"}],
}


def config(server: FakeOpenAIServer) -> LLMConfig:
    return LLMConfig(server.base_url, "reader-model", max_retries=1, backoff_base_s=0.01)


def test_cap_keeps_the_first_tokens_deterministically() -> None:
    text = " ".join(f"word{i}" for i in range(500))
    capped = cap_context(text, 40)
    assert text.startswith(capped) and tokens.count_tokens(capped) == 40
    assert cap_context(text, 40) == capped
    assert cap_context("short", 40) == "short"
    assert cap_context(text, 0) == ""


def test_messages_carry_the_question_options_and_the_capped_context() -> None:
    reader = LLMReader(LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None), 5)
    user = reader.messages(RECALL, "one two three four five six seven eight")[1]["content"]
    assert "Question: Where does Ada work now?" in user
    assert "one two three four five" in user and "six" not in user
    empty = reader.messages(ACTION, "")[1]["content"]
    assert "(nothing was retrieved)" in empty
    assert "1. Leave it out\n2. Sign as Kestrel" in empty
    assert reader.pin()["context_cap_tokens"] == 5 and "key" not in str(reader.pin())
    with pytest.raises(ValueError, match="cap"):
        LLMReader(LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None), 0)


def test_answers_are_streamed_with_a_measured_ttft_and_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer(lambda m, b: "Kestrel Aerospace.", first_token_delay_s=0.1) as server:
        reader = LLMReader(LLMClient(config(server), tmp_path / "cache"))
        answers = reader.read_many([(RECALL, "Ada: I joined Kestrel."), (ACTION, "")])
        assert [a.text for a in answers] == ["Kestrel Aerospace."] * 2
        assert all(a.error is None and a.ttft_ms is not None and a.ttft_ms >= 100 for a in answers)
        assert all(body["stream"] for body in server.requests)
        sent = len(server.requests)
        again = LLMReader(LLMClient(config(server), tmp_path / "cache"))
        assert again.read_many([(RECALL, "Ada: I joined Kestrel.")])[0] == answers[0]
        assert len(server.requests) == sent


def test_a_failed_reader_call_is_an_error_not_an_answer() -> None:
    with FakeOpenAIServer(lambda m, b: "x") as server:
        server.fail_next(500, times=2)
        answer = LLMReader(LLMClient(config(server), None)).read_many([(RECALL, "text")])[0]
    assert answer.text is None and answer.ttft_ms is None
    assert answer.error is not None and answer.error.startswith("reader: ")
    assert "HTTP 500" in answer.error


# A family whose reader prompt is another shipped prompt file (any would do).
OTHER_PROMPT = dataclasses.replace(CANARY, name="other", reader_prompt="judge_answer")


def test_each_family_is_read_with_its_declared_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    client = LLMClient(LLMConfig("http://127.0.0.1:9/v1", "m"), None)
    reader = LLMReader(client)
    # The built-in families (and the example) share one prompt: the pin names that file.
    assert reader.pin()["prompt"] == "evaluation/prompts/reader.md"
    assert reader.pin()["prompt_sha256"] == load_prompt("reader").sha256
    monkeypatch.setattr(_registry, "_FAMILIES", _registry._FAMILIES.copy())
    register_probe_family("other", f"{__name__}:OTHER_PROMPT")
    both = LLMReader(client)
    assert both.pin()["prompts"] == [
        "evaluation/prompts/reader.md",
        "evaluation/prompts/judge_answer.md",
    ]
    assert both.pin()["prompt_sha256"] == prompts_sha256(("reader", "judge_answer"))
    assert both.name != reader.name
    other = {**RECALL, "probe_type": "other"}
    assert both.messages(other, "")[0]["content"] == load_prompt("judge_answer").text
    assert both.messages(RECALL, "")[0]["content"] == load_prompt("reader").text
    assert both.prompt_version(other).startswith("judge_answer:")
