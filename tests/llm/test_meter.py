"""The token meter against a real loopback endpoint, called with the real ``openai`` client."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from llm_server import FakeOpenAIServer, word_count

from drift_pipeline.llm import (
    NO_UPSTREAM,
    CompletionCache,
    MeterAccount,
    TokenMeter,
    Upstream,
)
from drift_pipeline.tokens import count_tokens

UPSTREAM_KEY = "sk-test-upstream-0123456789"


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("DRIFT_TEST_UPSTREAM_KEY", UPSTREAM_KEY)
    with FakeOpenAIServer(api_key=UPSTREAM_KEY) as server:
        yield server


@pytest.fixture
def meter(upstream: FakeOpenAIServer) -> Iterator[TokenMeter]:
    with TokenMeter(Upstream(upstream.base_url, api_key_env="DRIFT_TEST_UPSTREAM_KEY")) as m:
        yield m


def _client(account: MeterAccount) -> openai.OpenAI:
    return openai.OpenAI(base_url=account.base_url, api_key=account.key, max_retries=0)


def test_a_chat_call_is_forwarded_with_the_users_key_and_counted_from_its_usage(
    meter: TokenMeter, upstream: FakeOpenAIServer
) -> None:
    account = meter.open_account("arm#0")
    reply = _client(account).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "one two three"}]
    )
    assert reply.choices[0].message.content == "echo: one two three"
    # The upstream got the user's key, never the worker's.
    assert upstream.authorization == [f"Bearer {UPSTREAM_KEY}"]
    booked = account.book()
    assert (booked.calls, booked.prompt_tokens, booked.completion_tokens) == (1, 3, 4)
    assert account.book().calls == 0  # booked once


def test_calls_are_booked_to_the_backend_call_they_arrived_in(meter: TokenMeter) -> None:
    account = meter.open_account("arm#0")
    client = _client(account)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a b"}])
    first_ended = time.monotonic_ns()
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "c d e"}])
    second = account.book(first_ended)
    assert (second.calls, second.prompt_tokens) == (1, 2)
    assert account.book(time.monotonic_ns()).prompt_tokens == 3


def test_a_stream_passes_through_and_is_counted_from_its_usage_chunk(
    meter: TokenMeter,
) -> None:
    account = meter.open_account("arm#0")
    with _client(account).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "stream these five words"}],
        stream=True,
        stream_options={"include_usage": True},
    ) as chunks:
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "echo: stream these five words"
    booked = account.book()
    assert (booked.prompt_tokens, booked.completion_tokens) == (4, 5)


def test_a_stream_without_usage_is_counted_with_tiktoken(meter: TokenMeter) -> None:
    account = meter.open_account("arm#0")
    words = "count me with the tokenizer"
    with _client(account).chat.completions.create(
        model="m", messages=[{"role": "user", "content": words}], stream=True
    ) as chunks:
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    booked = account.book()
    # OpenAI's chat framing: 3 per message and 3 for the reply.
    assert booked.prompt_tokens == 3 + 3 + count_tokens(words)
    assert booked.completion_tokens == count_tokens(text)


def test_embeddings_pass_through_and_count_their_inputs(meter: TokenMeter) -> None:
    account = meter.open_account("arm#0")
    reply = _client(account).embeddings.create(model="e", input=["alpha beta", "gamma"])
    assert [len(item.embedding) for item in reply.data] == [2, 2]
    booked = account.book()
    assert (booked.prompt_tokens, booked.completion_tokens) == (3, 0)


def test_upstream_errors_pass_through_with_their_status_and_retry_after(
    meter: TokenMeter, upstream: FakeOpenAIServer
) -> None:
    account = meter.open_account("arm#0")
    upstream.fail_next(429, retry_after=7)
    with pytest.raises(openai.RateLimitError) as raised:
        _client(account).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert raised.value.response.headers["retry-after"] == "7"
    booked = account.book()
    assert (booked.calls, booked.failed, booked.total) == (1, 1, 0)


def test_without_an_endpoint_every_call_is_refused_naming_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DRIFT_LLM_BASE_URL", raising=False)
    with TokenMeter() as meter:
        account = meter.open_account("arm#0")
        with pytest.raises(openai.BadRequestError) as raised:
            _client(account).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
    assert "DRIFT_LLM_BASE_URL" in raised.value.message and NO_UPSTREAM in raised.value.message
    assert raised.value.code == "meter_no_upstream"
    assert account.book().refused == 1


def test_a_key_the_meter_did_not_issue_is_refused(meter: TokenMeter) -> None:
    client = openai.OpenAI(base_url=meter.url, api_key="sk-guessed", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_an_unreachable_endpoint_is_a_502_naming_its_host() -> None:
    with TokenMeter(Upstream("http://127.0.0.1:9/v1", timeout_s=2)) as meter:
        account = meter.open_account("arm#0")
        with pytest.raises(openai.InternalServerError) as raised:
            _client(account).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
    assert "127.0.0.1:9" in raised.value.message
    assert account.book().failed == 1


def test_a_cached_reply_sends_nothing_upstream_and_is_charged_the_same(
    meter: TokenMeter, upstream: FakeOpenAIServer, tmp_path: Path
) -> None:
    cache = CompletionCache(tmp_path / "cache")
    first, second = (meter.open_account(f"arm#{i}", cache=cache) for i in (0, 1))
    messages = [{"role": "user", "content": "the same question twice"}]
    replies = [
        _client(account).chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        for account in (first, second)
    ]
    assert upstream.chat_requests == 1
    assert replies[0].choices[0].message.content == replies[1].choices[0].message.content
    assert (
        first.book().total == second.book().total == 4 + word_count("echo: the same question twice")
    )


def test_drift_bench_measures_what_the_meter_adds_to_a_call() -> None:
    from drift_pipeline.bench._meter_overhead import WARMUP, measure_meter_overhead

    measured = measure_meter_overhead(calls=300)
    # Every call went through the meter and was booked with the endpoint's usage.
    assert measured.sent == WARMUP + 300 == measured.booked.calls
    assert measured.booked.total == 660 * measured.sent and measured.booked.failed == 0
    assert len(measured.direct_ms) == len(measured.metered_ms) == 300
    # One more loopback hop and a count: a fraction of a millisecond on a quiet machine.
    # The bound catches a stall per call (Nagle's 40 ms, a process per call), not load.
    assert 0 < measured.median_added_ms < 15
    assert math.isfinite(measured.p99_added_ms)


def test_the_upstream_is_asked_for_plain_bytes_whatever_the_client_accepts(
    meter: TokenMeter, upstream: FakeOpenAIServer
) -> None:
    # A compressed reply could be neither counted nor passed on without its encoding header.
    account = meter.open_account("arm#0")
    client = openai.OpenAI(
        base_url=account.base_url,
        api_key=account.key,
        max_retries=0,
        default_headers={"Accept-Encoding": "gzip"},
    )
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a b"}])
    assert upstream.request_headers[-1].get("Accept-Encoding", "identity") == "identity"
    assert account.book().completion_tokens == 3
