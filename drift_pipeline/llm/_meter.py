"""The token meter: an OpenAI-compatible endpoint on loopback that counts what backends spend.

A memory system's own model calls (extraction, summaries, embeddings, re-ranking) are part of
its cost (spec §7.7), and a figure the system reports itself can be wrong. So the harness runs
a :class:`TokenMeter` for each cell: an HTTP server on ``127.0.0.1`` at a free port that speaks
the OpenAI API (chat completions, completions, embeddings, responses; anything else is passed
through uncounted), forwards every call to the endpoint the user configured
(``DRIFT_LLM_BASE_URL``, key in ``DRIFT_LLM_API_KEY``: see :class:`~._config.LLMConfig`), and
counts each call's prompt and completion tokens (the reply's ``usage`` where given, else
tiktoken; see :mod:`._meter_counts`).

Each backend worker gets a key of its own (:meth:`TokenMeter.open_account`), handed to it as
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (and, for a backend that declares a model, in its
options), so the user's real key never reaches a backend. Without a configured endpoint the
meter answers every call with an OpenAI-shaped error naming the variable to set.

Attribution: the meter stamps each call with the monotonic clock when it arrives, and records
it before the reply's last byte goes out. The worker reports when each ``store()`` and
``retrieve()`` began and ended on the same clock, so a call made inside a backend call is booked
to that session and phase exactly, however the harness batches its messages
(:meth:`MeterAccount.book`).

An account may keep a reply cache (a backend that caches its own completions gets one instead):
an unstreamed call made again with the same content is answered from it and charged the same
tokens, so a rerun sends nothing upstream and reports the same figures.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ._cache import CompletionCache
from ._config import API_KEY_ENV, BASE_URL_ENV
from ._meter_counts import CallTokens, StreamTally, count_reply

__all__ = [
    "METER_ENV",
    "MeterAccount",
    "MeterBooking",
    "MeteredCall",
    "TokenMeter",
    "Upstream",
]

METER_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
"""The variables through which a worker's ``openai`` client finds the meter."""

_TIMEOUT_ENV = "DRIFT_LLM_TIMEOUT_S"
_DEFAULT_TIMEOUT_S = 600.0
# Paths below the API root, by what the meter counts in them.
_KINDS = {
    "/chat/completions": "chat",
    "/completions": "completions",
    "/embeddings": "embeddings",
    "/responses": "responses",
}
# Never Accept-Encoding: the meter reads each reply to count it, so it asks for plain bytes.
_REQUEST_HEADERS = ("content-type", "accept")
_REPLY_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-request-id")
_REPLY_HEADER_PREFIXES = ("openai-", "x-ratelimit-")


@dataclass(frozen=True)
class Upstream:
    """Where the meter sends a call on: an OpenAI-compatible endpoint and its key's variable.

    Attributes:
        base_url: The endpoint, e.g. ``https://api.openai.com/v1``.
        api_key_env: The variable holding its key, read at each call (unset: no key sent).
        timeout_s: Per-request timeout.
    """

    base_url: str
    api_key_env: str = API_KEY_ENV
    timeout_s: float = _DEFAULT_TIMEOUT_S

    @classmethod
    def from_env(cls) -> Upstream | None:
        """The endpoint of ``DRIFT_LLM_BASE_URL`` (``None`` when unset)."""
        base_url = os.environ.get(BASE_URL_ENV, "").strip()
        if not base_url:
            return None
        try:
            timeout = float(os.environ.get(_TIMEOUT_ENV, "") or _DEFAULT_TIMEOUT_S)
        except ValueError:
            timeout = _DEFAULT_TIMEOUT_S
        return cls(base_url, timeout_s=timeout)

    @property
    def host(self) -> str:
        """host[:port] of the endpoint (no credentials, no path)."""
        parts = urlsplit(self.base_url)
        return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname or "")


@dataclass(frozen=True)
class MeteredCall:
    """One call that went through the meter.

    Attributes:
        arrived_ns: ``time.monotonic_ns()`` when its request arrived.
        kind: ``chat``, ``completions``, ``embeddings``, ``responses`` or ``other``.
        status: The HTTP status the caller got.
        tokens: What it cost (nothing for a failed or refused call).
        streamed: The reply was streamed.
        refused: Refused by the meter itself: no upstream endpoint is configured.
        cached: Answered from the account's reply cache (charged all the same).
    """

    arrived_ns: int
    kind: str
    status: int
    tokens: CallTokens
    streamed: bool = False
    refused: bool = False
    cached: bool = False


@dataclass(frozen=True)
class MeterBooking:
    """Calls booked to one backend call (or to a whole account).

    Attributes:
        calls: Calls that reached the meter.
        prompt_tokens: Their prompt tokens.
        completion_tokens: Their completion tokens.
        refused: Calls refused because no upstream endpoint is configured.
        failed: Calls that ended in an error (the upstream's, or unreachable).
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refused: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: MeterBooking) -> MeterBooking:
        return MeterBooking(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.refused + other.refused,
            self.failed + other.failed,
        )


_NO_BOOKING = MeterBooking()

NO_UPSTREAM = (
    f"the token meter has no LLM endpoint to forward to: set {BASE_URL_ENV} (and "
    f"{API_KEY_ENV} if it needs a key) where the benchmark runs"
)
"""The error a call gets when no upstream endpoint is configured."""


@dataclass
class MeterAccount:
    """One worker's key and the calls made with it that are not booked yet.

    Attributes:
        key: The key the worker sends (``Authorization: Bearer <key>``).
        label: Who holds it (``arm#replicate``), for messages.
        upstream: Where its calls go; ``None``: every call is refused with :data:`NO_UPSTREAM`.
        base_url: The meter's address, as the worker is given it.
        cache: Where unstreamed replies are kept by request content, so a rerun sends nothing
            upstream and is charged the same tokens; ``None``: no cache.
    """

    key: str
    label: str
    upstream: Upstream | None
    base_url: str
    cache: CompletionCache | None = None
    _pending: list[MeteredCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def environment(self) -> dict[str, str]:
        """``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` for the worker's environment."""
        return dict(zip(METER_ENV, (self.base_url, self.key), strict=True))

    def record(self, call: MeteredCall) -> None:
        """Add a call (the meter's handler threads call this before the reply ends)."""
        with self._lock:
            self._pending.append(call)

    def book(self, until_ns: int | None = None) -> MeterBooking:
        """Take the calls that arrived at or before ``until_ns`` (``None``: all) and sum them.

        The harness calls this with the end of each backend call, in order: a call is booked to
        the first backend call that ended after it arrived, so calls made inside ``store()`` go
        to that session's write cost and calls inside ``retrieve()`` to that read; a call made
        between two (a background thread's) goes to the next one.
        """
        if not self._pending:
            # Nothing to take, and nothing can be missed: a call is recorded before its reply
            # ends, so before the backend call that made it returns. Most backend calls make
            # no model call, and this runs after every one of them.
            return _NO_BOOKING
        with self._lock:
            if until_ns is None:
                taken, self._pending = self._pending, []
            else:
                taken = [c for c in self._pending if c.arrived_ns <= until_ns]
                if taken:
                    self._pending = [c for c in self._pending if c.arrived_ns > until_ns]
        if not taken:
            return _NO_BOOKING
        return MeterBooking(
            calls=len(taken),
            prompt_tokens=sum(c.tokens.prompt_tokens for c in taken),
            completion_tokens=sum(c.tokens.completion_tokens for c in taken),
            refused=sum(1 for c in taken if c.refused),
            failed=sum(1 for c in taken if c.status >= 400 and not c.refused),
        )


_REFUSED = 400
_NOTHING = CallTokens(0, 0, "none")


class _MeterServer(ThreadingHTTPServer):
    daemon_threads = True
    # Backends may open many connections at once (one per replicate, several per client).
    request_queue_size = 64

    def __init__(self, meter: TokenMeter) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.meter = meter


class TokenMeter:
    """The metering endpoint of one cell (see the module docstring).

    Use as a context manager, or :meth:`start` and :meth:`close`. Thread-safe.

    Args:
        upstream: Where calls go by default (:meth:`Upstream.from_env` when not given);
            ``None`` refuses every call of an account that has no upstream of its own.
    """

    def __init__(self, upstream: Upstream | str | None = "env") -> None:
        self.upstream = Upstream.from_env() if upstream == "env" else upstream
        assert not isinstance(self.upstream, str)
        self._accounts: dict[str, MeterAccount] = {}
        self._lock = threading.Lock()
        self._server: _MeterServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the base URL backends are given."""
        if self._server is None:
            raise RuntimeError("the token meter is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> TokenMeter:
        """Listen on a free loopback port and serve in a background thread."""
        if self._server is None:
            self._server = _MeterServer(self)
            # A short poll keeps close() quick: shutdown waits for the loop's next poll.
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="drift-token-meter",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and close the socket (calls in flight finish on their threads)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> TokenMeter:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open_account(
        self,
        label: str,
        upstream: Upstream | str | None = "default",
        cache: CompletionCache | None = None,
    ) -> MeterAccount:
        """A new key for one worker.

        Args:
            label: Who holds it (``arm#replicate``), for messages.
            upstream: Where its calls go; ``"default"``: the meter's own upstream.
            cache: Keep unstreamed replies here by request content (see :class:`MeterAccount`).
        """
        target = self.upstream if upstream == "default" else upstream
        assert not isinstance(target, str)
        account = MeterAccount(
            f"drift-meter-{secrets.token_hex(12)}", label, target, self.url, cache
        )
        with self._lock:
            self._accounts[account.key] = account
        return account

    def account(self, key: str) -> MeterAccount | None:
        """The account of a key, if this meter issued it."""
        with self._lock:
            return self._accounts.get(key)


def _error_body(message: str, code: str, kind: str = "invalid_request_error") -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": kind, "param": None, "code": code}}
    ).encode()


class _Upstreams(threading.local):
    """Each handler thread's open connections to upstream hosts (HTTP keep-alive)."""

    def __init__(self) -> None:
        self.connections: dict[tuple[str, str, float], http.client.HTTPConnection] = {}


_UPSTREAMS = _Upstreams()


def _connection(scheme: str, netloc: str, timeout: float) -> http.client.HTTPConnection:
    key = (scheme, netloc, timeout)
    connection = _UPSTREAMS.connections.get(key)
    if connection is None:
        factory = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        connection = factory(netloc, timeout=timeout)
        _UPSTREAMS.connections[key] = connection
    return connection


def _drop(scheme: str, netloc: str, timeout: float) -> None:
    connection = _UPSTREAMS.connections.pop((scheme, netloc, timeout), None)
    if connection is not None:
        connection.close()


def _reply_key(relative: str, body: Mapping[str, Any]) -> str:
    """sha256 hex of a call's path and body: the same request gets the same reply."""
    text = json.dumps(
        {"path": relative, "body": body}, sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _kind(path: str) -> str:
    """What the meter counts in a call to ``path`` (relative to the API root)."""
    return _KINDS.get(path.split("?", 1)[0].rstrip("/"), "other")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle and delayed ACKs add
    # ~40 ms to every call on loopback.
    disable_nagle_algorithm = True
    server: _MeterServer

    def log_message(self, format: str, *args: Any) -> None:  # never log keys or bodies
        return

    def do_POST(self) -> None:
        self._forward("POST")

    def do_GET(self) -> None:
        self._forward("GET")

    def do_DELETE(self) -> None:
        self._forward("DELETE")

    # --- replies -----------------------------------------------------------------------------

    def _reply(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, code: str) -> None:
        self._reply(status, _error_body(message, code), {"Content-Type": "application/json"})

    # --- forwarding --------------------------------------------------------------------------

    def _forward(self, method: str) -> None:
        arrived = time.monotonic_ns()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        authorization = self.headers.get("Authorization") or ""
        key = authorization.removeprefix("Bearer ").strip()
        account = self.server.meter.account(key)
        if account is None:
            self._error(
                401,
                "unknown key: the token meter accepts only the key the harness gave this "
                "backend (OPENAI_API_KEY in its worker)",
                "invalid_api_key",
            )
            return
        path = self.path
        relative = path[3:] if path.startswith("/v1") else path
        kind = _kind(relative)
        if account.upstream is None:
            account.record(MeteredCall(arrived, kind, _REFUSED, _NOTHING, refused=True))
            self._error(_REFUSED, NO_UPSTREAM, "meter_no_upstream")
            return
        body: Any = None
        if kind != "other" and raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        streamed = isinstance(body, dict) and body.get("stream") is True
        cache_key = None
        if account.cache is not None and isinstance(body, dict) and not streamed:
            cache_key = _reply_key(relative, body)
            entry = account.cache.get(cache_key)
            if entry is not None:
                tokens = CallTokens(
                    int(entry["prompt_tokens"]), int(entry["completion_tokens"]), entry["source"]
                )
                account.record(MeteredCall(arrived, kind, 200, tokens, cached=True))
                content_type = str(entry.get("content_type") or "application/json")
                self._reply(200, str(entry["body"]).encode(), {"Content-Type": content_type})
                return
        upstream = account.upstream
        try:
            response = self._send_upstream(method, upstream, relative, raw)
        except (OSError, http.client.HTTPException) as error:
            account.record(MeteredCall(arrived, kind, 502, _NOTHING, streamed))
            reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
            self._error(
                502,
                f"the token meter could not reach the LLM endpoint at {upstream.host}: {reason}",
                "meter_upstream_unreachable",
            )
            return
        with response:
            event_stream = "text/event-stream" in (response.getheader("Content-Type") or "")
            if response.status == 200 and event_stream and isinstance(body, dict):
                self._relay_stream(account, arrived, kind, body, response)
                return
            data = response.read()
            tokens = _NOTHING
            if response.status == 200 and isinstance(body, dict):
                try:
                    tokens = count_reply(kind, body, json.loads(data))
                except ValueError:
                    tokens = count_reply(kind, body, None)
            headers = self._reply_headers(response)
            if cache_key is not None and account.cache is not None and response.status == 200:
                account.cache.put(
                    cache_key,
                    {
                        "body": data.decode("utf-8", "replace"),
                        "content_type": response.getheader("Content-Type") or "application/json",
                        "prompt_tokens": tokens.prompt_tokens,
                        "completion_tokens": tokens.completion_tokens,
                        "source": tokens.source,
                    },
                )
            account.record(MeteredCall(arrived, kind, response.status, tokens, streamed))
            self._reply(response.status, data, headers)

    def _send_upstream(
        self, method: str, upstream: Upstream, relative: str, raw: bytes
    ) -> http.client.HTTPResponse:
        parts = urlsplit(upstream.base_url)
        target = parts.path.rstrip("/") + relative
        headers = {
            name: value
            for name, value in self.headers.items()
            if name.lower() in _REQUEST_HEADERS or name.lower().startswith("openai-")
        }
        api_key = os.environ.get(upstream.api_key_env, "")
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        headers["Content-Length"] = str(len(raw))
        scheme, netloc = parts.scheme, parts.netloc
        for attempt in (0, 1):
            connection = _connection(scheme, netloc, upstream.timeout_s)
            reused = connection.sock is not None
            try:
                connection.request(method, target, body=raw, headers=headers)
                return connection.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                _drop(scheme, netloc, upstream.timeout_s)
                # A kept-alive connection the server had closed: send once more on a new one.
                if not reused or attempt:
                    raise
            except BaseException:
                _drop(scheme, netloc, upstream.timeout_s)
                raise
        raise AssertionError("unreachable")

    @staticmethod
    def _reply_headers(response: http.client.HTTPResponse) -> dict[str, str]:
        return {
            name: value
            for name, value in response.getheaders()
            if name.lower() in _REPLY_HEADERS or name.lower().startswith(_REPLY_HEADER_PREFIXES)
        }

    def _relay_stream(
        self,
        account: MeterAccount,
        arrived: int,
        kind: str,
        body: dict[str, Any],
        response: http.client.HTTPResponse,
    ) -> None:
        """Pass a server-sent event stream through event by event, counting as it goes.

        The closing ``[DONE]`` is held back until the call is recorded, so a backend that has
        seen its stream end finds the call booked.
        """
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        tally = StreamTally(kind, body)
        done = False
        event: list[bytes] = []
        client_gone = False
        try:
            while True:
                line = response.readline()
                if not line:
                    break
                if line.startswith(b"data:"):
                    payload = line[5:].strip()
                    if payload == b"[DONE]":
                        done = True
                        continue
                    tally.event(payload)
                event.append(line)
                if line in (b"\n", b"\r\n") and not client_gone:
                    try:
                        self.wfile.write(b"".join(event))
                    except OSError:
                        client_gone = True  # the tokens are spent all the same
                    event = []
        finally:
            account.record(MeteredCall(arrived, kind, 200, tally.tokens(), True))
        if client_gone:
            return
        tail = b"".join(event) + (b"data: [DONE]\n\n" if done else b"")
        try:
            if tail:
                self.wfile.write(tail)
        except OSError:
            pass
