"""The one client that talks to a model: cached, retried, throttled, measured.

Everything that calls an LLM in DRIFT (transcript synthesis, the reader, the judge, the
reference compressor) goes through :class:`LLMClient`. A call is first looked up in the
content-addressed cache; on a miss it is sent through the ``openai`` package (its own retries
off) and retried here on 429, 5xx, timeouts and connection errors, with exponential backoff
whose jitter is drawn from a generator seeded by the call's cache key and attempt (so a rerun
waits the same), honouring a server's ``Retry-After``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from drift_pipeline.tokens import count_tokens

from ._cache import CompletionCache, cache_key
from ._config import LLMConfig
from ._errors import LLMError

if TYPE_CHECKING:
    import openai

# Chat framing tokens per message and per reply (OpenAI's published accounting for its chat
# models); only used when the endpoint reports no usage.
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_REPLY = 3
# Sent when the key variable is unset: local servers (vLLM, Ollama, llama.cpp) accept any key,
# and the openai package refuses an empty one.
_NO_KEY = "no-key"
_RETRY_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class Completion:
    """One model reply and what it cost.

    Attributes:
        text: The reply's text.
        prompt_tokens: From the response's usage; a tiktoken count when the endpoint gives none.
        completion_tokens: Likewise, for the reply.
        cached: Served from the cache (no HTTP request made).
        ttft_ms: Time to the first streamed content token of the original call (``None`` when
            it was not streamed); stored with the entry, so reruns reproduce it.
        latency_ms: The whole original call (its successful attempt).
        cost_usd: From the config's price; ``None`` without one.
        cache_key: sha256 hex of model, messages, parameters and prompt version.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    ttft_ms: float | None
    latency_ms: float
    cost_usd: float | None
    cache_key: str


@dataclass(frozen=True)
class LLMUsage:
    """What a client has done so far.

    Attributes:
        requests: HTTP requests sent (every attempt, failed ones included).
        cache_hits: Calls served from the cache.
        retries: Attempts repeated after a retryable failure.
        failures: Calls that ended in :class:`LLMError`.
        prompt_tokens: Prompt tokens of the calls this client sent (cache hits cost nothing).
        completion_tokens: Completion tokens of those calls.
        cost_usd: USD of those calls; ``None`` without a price.
    """

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class _Flight:
    """A call in flight and how many callers share it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0


class _Retryable(Exception):
    """An attempt failed in a way worth repeating."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


def _one_line(text: str, secret: str | None, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters, with ``secret`` masked."""
    if secret:
        text = text.replace(secret, "***")
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asked to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    # An HTTP date is measured against the response's own Date where it has one: in a backend's
    # worker this process's clock reads the session's simulated time during a call.
    try:
        now = parsedate_to_datetime(headers["date"]).timestamp()
    except (KeyError, TypeError, ValueError):
        now = time.time()
    return max(0.0, when.timestamp() - now)


def _response_format(json_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``response_format`` asking for strict JSON following ``json_schema``.

    ``json_schema`` is either a JSON Schema (wrapped under the name ``reply``) or already the
    ``{"name", "schema", "strict"}`` object of the chat completions API.
    """
    if "schema" in json_schema and "name" in json_schema:
        return {"type": "json_schema", "json_schema": dict(json_schema)}
    return {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": dict(json_schema), "strict": True},
    }


class LLMClient:
    """Calls one OpenAI-compatible model, through a cache, with retries and a concurrency cap.

    Thread-safe: :meth:`complete` may be called from many threads; at most
    ``config.concurrency`` requests are in flight at once, and two identical calls in flight
    together send one request.
    """

    def __init__(self, config: LLMConfig, cache_dir: str | os.PathLike[str] | None) -> None:
        """A client of ``config``'s endpoint.

        Args:
            config: Endpoint, model and call policy.
            cache_dir: Where completions are kept (normally ``<data root>/llm_cache``; a local
                folder or an ``s3://`` prefix); ``None`` disables the cache.
        """
        self.config = config
        self._cache = CompletionCache(cache_dir) if cache_dir is not None else None
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._in_flight: dict[str, _Flight] = {}
        self._http: openai.DefaultHttpxClient | None = None
        self._usage = LLMUsage(cost_usd=0.0 if config.price is not None else None)

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, host={self.config.host!r})"

    # --- public API -------------------------------------------------------------------------

    @property
    def usage(self) -> LLMUsage:
        """Requests, cache hits, retries, tokens and cost so far."""
        with self._lock:
            return self._usage

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        prompt_version: str,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        stream: bool = False,
    ) -> Completion:
        """One chat completion, from the cache when this exact call was made before.

        Args:
            messages: Chat messages (``role`` and ``content``).
            prompt_version: Version of the prompt that built ``messages``; part of the cache key,
                so a new prompt (or a retry with another attempt tag) never reuses a stale reply.
            max_tokens: Cap of the reply's tokens.
            json_schema: Ask for strict JSON following this schema (see the module notes).
            stream: Stream the reply and measure the time to its first token (not part of the
                cache key: a streamed and an unstreamed call share an entry).

        Raises:
            LLMError: After ``config.max_retries`` retries, on a 4xx other than 408/409/429, or
                when the endpoint returns no text. One line, never the key.
        """
        parameters: dict[str, Any] = {
            "temperature": self.config.temperature,
            "max_tokens": max_tokens,
            "json_schema": dict(json_schema) if json_schema is not None else None,
        }
        key = cache_key(
            model=self.config.model,
            messages=messages,
            parameters=parameters,
            prompt_version=prompt_version,
        )
        with self._single_flight(key):
            if self._cache is not None and (entry := self._cache.get(key)) is not None:
                self._add(cache_hits=1)
                return self._completion(entry, key, cached=True)
            entry = self._call(messages, key, max_tokens, json_schema, stream)
            if self._cache is not None:
                self._cache.put(key, entry)
        completion = self._completion(entry, key, cached=False)
        self._add(
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
        )
        return completion

    def complete_many(self, requests: Sequence[Mapping[str, Any]]) -> list[Completion | LLMError]:
        """Many calls at once (each a mapping of :meth:`complete`'s arguments), order kept.

        Runs up to ``config.concurrency`` calls in parallel; a call that fails for good gives
        its :class:`LLMError` in its place instead of stopping the others.
        """

        def run(request: Mapping[str, Any]) -> Completion | LLMError:
            try:
                return self.complete(**request)
            except LLMError as error:
                return error

        if len(requests) <= 1:
            return [run(request) for request in requests]
        workers = min(self.config.concurrency, len(requests))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="drift-llm") as pool:
            return list(pool.map(run, requests))

    def close(self) -> None:
        """Close the HTTP connection pool (the client reopens one if used again)."""
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- internals --------------------------------------------------------------------------

    @contextmanager
    def _single_flight(self, key: str) -> Iterator[None]:
        """Hold ``key``'s lock: an identical call waits, then finds the reply in the cache."""
        with self._lock:
            flight = self._in_flight.setdefault(key, _Flight())
            flight.users += 1
        try:
            with flight.lock:
                yield
        finally:
            with self._lock:
                flight.users -= 1
                if not flight.users:  # forget finished keys: a long run makes many
                    del self._in_flight[key]

    def _add(self, *, cost_usd: float | None = None, **counts: int) -> None:
        """Add to the usage counters (``LLMUsage`` is frozen: readers get a consistent copy)."""
        with self._lock:
            usage = self._usage
            cost = usage.cost_usd
            if cost is not None and cost_usd is not None:
                cost += cost_usd
            totals = {name: getattr(usage, name) + count for name, count in counts.items()}
            self._usage = replace(usage, cost_usd=cost, **totals)

    def _completion(self, entry: Mapping[str, Any], key: str, *, cached: bool) -> Completion:
        prompt_tokens = int(entry["prompt_tokens"])
        completion_tokens = int(entry["completion_tokens"])
        price = self.config.price
        return Completion(
            text=str(entry["text"]),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached=cached,
            ttft_ms=None if entry.get("ttft_ms") is None else float(entry["ttft_ms"]),
            latency_ms=float(entry["latency_ms"]),
            cost_usd=price.cost(prompt_tokens, completion_tokens) if price else None,
            cache_key=key,
        )

    def _openai(self, api_key: str) -> openai.OpenAI:
        """A throwaway SDK client over the shared connection pool, with the SDK's retries off.

        Built per call so the key is read from the environment at call time and lives on no
        long-lived object. ``openai`` is imported here, on first use: importing it takes
        seconds, and most commands never call a model.
        """
        import openai

        with self._lock:
            if self._http is None:
                self._http = openai.DefaultHttpxClient()
            http = self._http
        return openai.OpenAI(
            api_key=api_key,
            base_url=self.config.base_url,
            timeout=self.config.timeout_s,
            max_retries=0,
            http_client=http,
        )

    def _call(
        self,
        messages: Sequence[Mapping[str, str]],
        key: str,
        max_tokens: int | None,
        json_schema: Mapping[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        config = self.config
        reason = ""
        for attempt in range(config.max_retries + 1):
            if attempt:
                self._add(retries=1)
            self._add(requests=1)
            try:
                with self._slots:
                    return self._attempt(messages, max_tokens, json_schema, stream)
            except _Retryable as failure:
                reason = failure.reason
                if attempt == config.max_retries:
                    break
                time.sleep(self._backoff(key, attempt, failure.retry_after_s))
            except LLMError:
                self._add(failures=1)
                raise
        self._add(failures=1)
        raise LLMError(
            f"LLM call to {config.model} at {config.host} gave up after "
            f"{config.max_retries + 1} attempts: {reason}"
        )

    def _backoff(self, key: str, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry ``attempt + 1``: the server's ask, else jittered doubling.

        The jitter comes from a generator seeded by the call and attempt, so the schedule is
        reproducible while concurrent calls still spread out.
        """
        config = self.config
        if retry_after_s is not None:
            return min(retry_after_s, config.backoff_max_s)
        ceiling = min(config.backoff_max_s, config.backoff_base_s * 2.0**attempt)
        jitter = random.Random(f"{key}:{attempt}").random()
        return ceiling * (0.5 + 0.5 * jitter)

    def _attempt(
        self,
        messages: Sequence[Mapping[str, str]],
        max_tokens: int | None,
        json_schema: Mapping[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        """One HTTP request; the cache entry of its reply, or :class:`_Retryable`."""
        import openai

        config = self.config
        api_key = os.environ.get(config.api_key_env) or _NO_KEY
        arguments: dict[str, Any] = {
            "model": config.model,
            "messages": [dict(message) for message in messages],
            "temperature": config.temperature,
        }
        if max_tokens is not None:
            arguments["max_tokens"] = max_tokens
        if json_schema is not None:
            arguments["response_format"] = _response_format(json_schema)
        client = self._openai(api_key)
        started = time.perf_counter()
        ttft_ms: float | None = None
        usage: Any = None
        try:
            if stream:
                parts: list[str] = []
                with client.chat.completions.create(
                    **arguments, stream=True, stream_options={"include_usage": True}
                ) as chunks:
                    for chunk in chunks:
                        if chunk.usage is not None:
                            usage = chunk.usage
                        for choice in chunk.choices:
                            if choice.delta.content:
                                if ttft_ms is None:
                                    ttft_ms = (time.perf_counter() - started) * 1000
                                parts.append(choice.delta.content)
                text: str | None = "".join(parts) if parts else None
            else:
                response = client.chat.completions.create(**arguments)
                usage = response.usage
                text = response.choices[0].message.content if response.choices else None
        except openai.APITimeoutError:
            raise _Retryable(f"timed out after {config.timeout_s:g} s") from None
        except openai.APIConnectionError as error:
            raise _Retryable(f"connection error: {_one_line(str(error), api_key)}") from None
        except openai.APIStatusError as error:
            status = error.status_code
            message = _one_line(error.message, api_key)
            if status in _RETRY_STATUSES or status >= 500:
                raise _Retryable(
                    f"HTTP {status}: {message}", _retry_after(error.response.headers)
                ) from None
            hint = f" (is {config.api_key_env} set?)" if status in (401, 403) else ""
            raise LLMError(
                f"LLM call to {config.model} at {config.host} failed: HTTP {status}: "
                f"{message}{hint}"
            ) from None
        except openai.APIError as error:
            raise LLMError(
                f"LLM call to {config.model} at {config.host} failed: "
                f"{_one_line(str(error), api_key)}"
            ) from None
        latency_ms = (time.perf_counter() - started) * 1000
        if text is None:
            raise LLMError(f"LLM call to {config.model} at {config.host} returned no text")
        if usage is not None and usage.prompt_tokens is not None:
            prompt_tokens, completion_tokens = usage.prompt_tokens, usage.completion_tokens or 0
            source = "response"
        else:
            prompt_tokens = _TOKENS_PER_REPLY + sum(
                _TOKENS_PER_MESSAGE + count_tokens(message.get("content", ""))
                for message in messages
            )
            completion_tokens, source = count_tokens(text), "tiktoken"
        return {
            "model": config.model,
            "text": text,
            "prompt_tokens": int(prompt_tokens),
            "completion_tokens": int(completion_tokens),
            "usage_source": source,
            "ttft_ms": ttft_ms,
            "latency_ms": latency_ms,
            "streamed": stream,
        }
