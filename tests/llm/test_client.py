"""LLMClient against a real loopback HTTP server, through the real ``openai`` package."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from llm_server import TEST_API_KEY, FakeOpenAIServer, word_count

from drift_pipeline.llm import LLMClient, LLMConfig, LLMError, Price
from drift_pipeline.llm import _client as llm_client
from drift_pipeline.tokens import count_tokens

MESSAGES = [
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "Where does Ana live now?"},
]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)


def config(server: FakeOpenAIServer, **overrides: object) -> LLMConfig:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "model": "fake-model",
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "timeout_s": 5.0,
    }
    values.update(overrides)
    return LLMConfig(**values)  # type: ignore[arg-type]


def files_under(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def test_reply_and_key_sent(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.api_key = TEST_API_KEY
    with LLMClient(config(fake_openai), None) as client:
        completion = client.complete(MESSAGES, prompt_version="t1")
    assert completion.text == "echo: Where does Ana live now?"
    assert not completion.cached
    assert fake_openai.authorization == [f"Bearer {TEST_API_KEY}"]
    assert fake_openai.requests[0]["model"] == "fake-model"
    assert fake_openai.requests[0]["messages"] == MESSAGES


def test_wrong_key_is_one_line_error_without_key(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.api_key = "sk-the-right-one"
    with LLMClient(config(fake_openai), None) as client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES, prompt_version="t1")
    message = str(caught.value)
    assert "HTTP 401" in message and "DRIFT_LLM_API_KEY" in message
    assert "\n" not in message and TEST_API_KEY not in message
    assert len(fake_openai.requests) == 1  # a 401 is not retried


def test_rerun_is_served_from_cache(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "llm_cache"
    with LLMClient(config(fake_openai), cache) as client:
        first = client.complete(MESSAGES, prompt_version="t1", max_tokens=50)
    assert len(fake_openai.requests) == 1
    with LLMClient(config(fake_openai), cache) as client:
        again = client.complete(MESSAGES, prompt_version="t1", max_tokens=50)
        assert client.usage.requests == 0 and client.usage.cache_hits == 1
    assert len(fake_openai.requests) == 1  # zero new requests
    assert again.cached and again.text == first.text and again.cache_key == first.cache_key
    assert (again.prompt_tokens, again.latency_ms) == (first.prompt_tokens, first.latency_ms)


@pytest.mark.parametrize(
    "change",
    [
        {"prompt_version": "t2"},
        {"max_tokens": 51},
        {"json_schema": {"type": "object"}},
        {"messages": [*MESSAGES[:1], {"role": "user", "content": "Where now?"}]},
    ],
)
def test_cache_key_covers_call(
    fake_openai: FakeOpenAIServer, tmp_path: Path, change: dict[str, object]
) -> None:
    base: dict[str, object] = {"messages": MESSAGES, "prompt_version": "t1", "max_tokens": 50}
    with LLMClient(config(fake_openai), tmp_path) as client:
        client.complete(**base)  # type: ignore[arg-type]
        client.complete(**{**base, **change})  # type: ignore[arg-type]
    assert len(fake_openai.requests) == 2


def test_other_model_or_temperature_misses(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    with LLMClient(config(fake_openai), tmp_path) as client:
        client.complete(MESSAGES, prompt_version="t1")
    with LLMClient(config(fake_openai, model="other"), tmp_path) as client:
        client.complete(MESSAGES, prompt_version="t1")
    with LLMClient(config(fake_openai, temperature=0.7), tmp_path) as client:
        client.complete(MESSAGES, prompt_version="t1")
    assert len(fake_openai.requests) == 3


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_after_injected_failures(fake_openai: FakeOpenAIServer, status: int) -> None:
    fake_openai.fail_next(status, times=2)
    with LLMClient(config(fake_openai), None) as client:
        completion = client.complete(MESSAGES, prompt_version="t1")
        usage = client.usage
    assert completion.text.startswith("echo:")
    assert len(fake_openai.requests) == 3
    assert (usage.requests, usage.retries, usage.failures) == (3, 2, 0)


def test_retry_after_is_honoured(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(llm_client.time, "sleep", waits.append)
    # Backoff alone would wait at most 0.05 s; the server asks for 0.3 s, then 5 s (cap 1 s).
    fake_openai.fail_next(429, retry_after=0.3)
    fake_openai.fail_next(503, retry_after=5)
    fake_openai.fail_next(500)
    with LLMClient(config(fake_openai, backoff_max_s=1.0), None) as client:
        client.complete(MESSAGES, prompt_version="t1")
    assert len(fake_openai.requests) == 4
    assert waits[:2] == [pytest.approx(0.3), pytest.approx(1.0)]
    assert 0.01 * 4 / 2 <= waits[2] <= 0.01 * 4  # third retry: jittered doubling


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5", "retry-after-ms": "junk"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        # Against the response's Date, not this process's clock (simulated in a worker).
        (
            {
                "retry-after": "Wed, 21 Oct 2015 07:28:03 GMT",
                "date": "Wed, 21 Oct 2015 07:28:00 GMT",
            },
            3.0,
        ),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert llm_client._retry_after(headers) == seconds


def test_backoff_schedule_is_deterministic_and_doubles() -> None:
    client = LLMClient(
        LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", backoff_base_s=1.0), None
    )
    waits = [client._backoff("key", attempt, None) for attempt in range(4)]
    assert waits == [client._backoff("key", attempt, None) for attempt in range(4)]
    for attempt, wait in enumerate(waits):
        assert 2**attempt / 2 <= wait <= 2**attempt
    assert waits != [client._backoff("other", attempt, None) for attempt in range(4)]


def test_gives_up_with_one_line_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.fail_next(500, times=10)
    with LLMClient(config(fake_openai, max_retries=2), None) as client:
        with pytest.raises(LLMError) as caught:
            client.complete(MESSAGES, prompt_version="t1")
        assert client.usage.failures == 1
    message = str(caught.value)
    assert "gave up after 3 attempts" in message and "HTTP 500" in message
    assert "\n" not in message and TEST_API_KEY not in message
    assert len(fake_openai.requests) == 3


def test_timeout_is_retried(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.stall_next(1.0)
    with LLMClient(config(fake_openai, timeout_s=0.2), None) as client:
        completion = client.complete(MESSAGES, prompt_version="t1")
        assert client.usage.retries == 1
    assert completion.text.startswith("echo:")


def test_connection_error_gives_up() -> None:
    server = FakeOpenAIServer().start()
    base_url = server.base_url
    server.stop()  # nothing listens there any more
    cfg = LLMConfig(base_url=base_url, model="m", max_retries=1, backoff_base_s=0.01)
    with LLMClient(cfg, None) as client, pytest.raises(LLMError, match="connection error"):
        client.complete(MESSAGES, prompt_version="t1")


def test_streaming_measures_ttft(tmp_path: Path) -> None:
    with FakeOpenAIServer(first_token_delay_s=0.15) as server:
        with LLMClient(config(server), tmp_path) as client:
            completion = client.complete(MESSAGES, prompt_version="t1", stream=True)
            cached = client.complete(MESSAGES, prompt_version="t1", stream=True)
        assert server.requests[0]["stream"] is True
        assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert completion.text == "echo: Where does Ana live now?"
    assert completion.ttft_ms is not None and completion.ttft_ms >= 150
    assert completion.latency_ms >= completion.ttft_ms
    assert cached.cached and cached.ttft_ms == completion.ttft_ms  # reproduced from the cache
    # Usage came from the stream's final chunk (the server counts words, not tiktoken tokens).
    assert completion.prompt_tokens == sum(word_count(m["content"]) for m in MESSAGES)


def test_unstreamed_has_no_ttft(fake_openai: FakeOpenAIServer) -> None:
    with LLMClient(config(fake_openai), None) as client:
        assert client.complete(MESSAGES, prompt_version="t1").ttft_ms is None


def test_usage_from_response(fake_openai: FakeOpenAIServer) -> None:
    with LLMClient(config(fake_openai), None) as client:
        completion = client.complete(MESSAGES, prompt_version="t1")
        usage = client.usage
    assert completion.prompt_tokens == sum(word_count(m["content"]) for m in MESSAGES)
    assert completion.completion_tokens == word_count(completion.text)
    assert (usage.prompt_tokens, usage.completion_tokens) == (
        completion.prompt_tokens,
        completion.completion_tokens,
    )


@pytest.mark.parametrize("stream", [False, True])
def test_tiktoken_when_usage_absent(stream: bool) -> None:
    with FakeOpenAIServer(include_usage=False) as server, LLMClient(config(server), None) as c:
        completion = c.complete(MESSAGES, prompt_version="t1", stream=stream)
    expected_prompt = 3 + sum(3 + count_tokens(m["content"]) for m in MESSAGES)
    assert completion.prompt_tokens == expected_prompt
    assert completion.completion_tokens == count_tokens(completion.text)


def test_cost_from_price(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    price = Price(input_per_m=2.0, output_per_m=10.0)
    with LLMClient(config(fake_openai, price=price), tmp_path) as client:
        completion = client.complete(MESSAGES, prompt_version="t1")
        client.complete(MESSAGES, prompt_version="t1")  # a cache hit costs nothing
        usage = client.usage
    expected = (completion.prompt_tokens * 2.0 + completion.completion_tokens * 10.0) / 1e6
    assert completion.cost_usd == pytest.approx(expected)
    assert usage.cost_usd == pytest.approx(expected)
    with LLMClient(config(fake_openai), None) as client:
        assert client.complete(MESSAGES, prompt_version="t1").cost_usd is None
        assert client.usage.cost_usd is None


def test_concurrency_limit_and_order_kept() -> None:
    with FakeOpenAIServer(response_delay_s=0.1) as server:
        requests = [
            {"messages": [{"role": "user", "content": f"question {i}"}], "prompt_version": "t1"}
            for i in range(8)
        ]
        with LLMClient(config(server, concurrency=3), None) as client:
            results = client.complete_many(requests)
        assert 2 <= server.max_in_flight <= 3
    assert [r.text for r in results if not isinstance(r, LLMError)] == [
        f"echo: question {i}" for i in range(8)
    ]


def test_concurrency_limit_across_threads() -> None:
    with FakeOpenAIServer(response_delay_s=0.1) as server:
        with LLMClient(config(server, concurrency=2), None) as client:
            threads = [
                threading.Thread(
                    target=client.complete,
                    args=([{"role": "user", "content": f"q{i}"}],),
                    kwargs={"prompt_version": "t1"},
                )
                for i in range(6)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert server.max_in_flight == 2


def test_complete_many_returns_errors_in_place(fake_openai: FakeOpenAIServer) -> None:
    def responder(messages: list[dict[str, object]], body: dict[str, object]) -> str:
        return "ok"

    fake_openai.responder = responder
    fake_openai.api_key = "sk-other"
    with LLMClient(config(fake_openai), None) as client:
        results = client.complete_many(
            [
                {"messages": MESSAGES, "prompt_version": "t1"},
                {"messages": MESSAGES[1:], "prompt_version": "t1"},
            ]
        )
    assert all(isinstance(r, LLMError) for r in results)


def test_identical_calls_in_flight_send_one_request(tmp_path: Path) -> None:
    with FakeOpenAIServer(response_delay_s=0.1) as server:
        with LLMClient(config(server, concurrency=4), tmp_path) as client:
            results = client.complete_many([{"messages": MESSAGES, "prompt_version": "t1"}] * 4)
            assert client._in_flight == {}  # finished keys are forgotten
        assert len(server.requests) == 1
    assert sum(1 for r in results if not isinstance(r, LLMError) and r.cached) == 3


def test_json_schema_requested_strictly(fake_openai: FakeOpenAIServer) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    with LLMClient(config(fake_openai), None) as client:
        client.complete(MESSAGES, prompt_version="t1", json_schema=schema)
    response_format = fake_openai.requests[0]["response_format"]
    assert response_format == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": schema, "strict": True},
    }


def test_key_never_in_cache_or_repr(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_openai.api_key = TEST_API_KEY
    cfg = config(fake_openai, price=Price(1.0, 1.0))
    with LLMClient(cfg, tmp_path) as client:
        client.complete(MESSAGES, prompt_version="t1", stream=True)
        client.complete(MESSAGES[1:], prompt_version="t1")
        texts = [repr(client), repr(cfg), repr(client.usage), json.dumps(cfg.pin())]
    written = files_under(tmp_path)
    assert len(written) == 2
    for path in written:
        assert TEST_API_KEY.encode() not in path.read_bytes()
        assert json.loads(path.read_text())["text"].startswith("echo:")
    assert all(TEST_API_KEY not in text for text in texts)


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRIFT_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("DRIFT_LLM_MODEL", "m1")
    with pytest.raises(LLMError, match="DRIFT_LLM_BASE_URL is not set"):
        LLMConfig.from_env()
    monkeypatch.setenv("DRIFT_LLM_BASE_URL", "http://user:pw@llm.local:8000/v1")
    monkeypatch.setenv("DRIFT_LLM_CONCURRENCY", "7")
    monkeypatch.setenv("DRIFT_LLM_PRICE_INPUT_PER_M", "0.5")
    monkeypatch.setenv("DRIFT_LLM_PRICE_OUTPUT_PER_M", "1.5")
    cfg = LLMConfig.from_env(temperature=0.2)
    assert (cfg.model, cfg.concurrency, cfg.temperature) == ("m1", 7, 0.2)
    assert cfg.price == Price(0.5, 1.5)
    assert cfg.pin() == {"model": "m1", "base_url_host": "llm.local:8000", "temperature": "0.2"}
    monkeypatch.setenv("DRIFT_LLM_MAX_RETRIES", "many")
    with pytest.raises(LLMError, match="DRIFT_LLM_MAX_RETRIES='many' is not a number"):
        LLMConfig.from_env()
    monkeypatch.delenv("DRIFT_LLM_MAX_RETRIES")
    monkeypatch.delenv("DRIFT_LLM_MODEL")
    with pytest.raises(LLMError, match="DRIFT_LLM_MODEL is not set"):
        LLMConfig.from_env()


def test_bad_config_is_refused() -> None:
    with pytest.raises(LLMError, match="must start with http"):
        LLMConfig(base_url="127.0.0.1:8000", model="m")
    with pytest.raises(LLMError, match="concurrency >= 1"):
        LLMConfig(base_url="http://x/v1", model="m", concurrency=0)


def test_key_never_in_debug_logs(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: ours, openai's, the HTTP stack's
    fake_openai.api_key = TEST_API_KEY
    fake_openai.fail_next(429)
    with LLMClient(config(fake_openai), tmp_path) as client:
        client.complete(MESSAGES, prompt_version="t1", stream=True)
        client.complete(MESSAGES, prompt_version="t1")
    assert len(fake_openai.requests) == 2
    assert caplog.records  # the HTTP stack did log at debug level
    assert TEST_API_KEY not in caplog.text
