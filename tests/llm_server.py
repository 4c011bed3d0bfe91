"""A real OpenAI-compatible chat completions server on loopback, for tests of the LLM path.

``FakeOpenAIServer`` speaks ``POST /v1/chat/completions`` (and ``/v1/embeddings``) over HTTP
on ``127.0.0.1`` (threaded, one thread per connection), with plain JSON replies and SSE
streaming (a final usage chunk when ``stream_options.include_usage`` is set). What it answers
comes from a ``responder`` function; failures (429/500 with an optional Retry-After, stalls past
the client's timeout) are injected with :meth:`FakeOpenAIServer.fail_next` and
:meth:`FakeOpenAIServer.stall_next`, or chosen per request by a ``fails`` function. Every
received body is logged in :attr:`FakeOpenAIServer.requests`, so tests count the requests a run
sent.

Usage reported by the server is deliberately not a tiktoken count (it counts words), so a test
can tell "usage came from the response" from "usage was counted locally".
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Responder = Callable[[list[dict[str, Any]], dict[str, Any]], str]
"""(messages, request body) -> the reply's text."""

TEST_API_KEY = "sk-test-DRIFT-0123456789abcdef-never-written"
"""A recognisable key the tests put in the environment and then grep for in every file."""


def echo_last_user(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The default responder: repeats the last user message."""
    users = [m for m in messages if m.get("role") == "user"]
    return f"echo: {users[-1]['content'] if users else ''}"


def word_count(text: str) -> int:
    """The server's own token measure (words), distinct from tiktoken on purpose."""
    return len(text.split())


class FakeOpenAIServer:
    """An OpenAI-compatible endpoint on ``127.0.0.1:<free port>`` with scripted answers.

    Args:
        responder: Builds each reply's text from the messages and the request body.
        api_key: When set, requests without ``Authorization: Bearer <api_key>`` get a 401.
        first_token_delay_s: Streaming: pause before the first content chunk.
        response_delay_s: Pause before answering any request (makes overlap observable).
        include_usage: Report usage (``False`` mimics servers that omit it).
        fails: The HTTP status to answer a request with, from its body (0: answer it); a
            server that fails every call, or the same calls on every run.
    """

    def __init__(
        self,
        responder: Responder = echo_last_user,
        *,
        api_key: str | None = None,
        first_token_delay_s: float = 0.0,
        response_delay_s: float = 0.0,
        include_usage: bool = True,
        fails: Callable[[dict[str, Any]], int] | None = None,
    ) -> None:
        self.fails = fails
        self.responder = responder
        self.api_key = api_key
        self.first_token_delay_s = first_token_delay_s
        self.response_delay_s = response_delay_s
        self.include_usage = include_usage
        self.requests: list[dict[str, Any]] = []
        """Every body received, injected failures included, in arrival order."""
        self.authorization: list[str | None] = []
        """The Authorization header of each request (kept only in memory, never written)."""
        self.request_headers: list[dict[str, str]] = []
        """Every request's headers, in arrival order."""
        self.max_in_flight = 0
        """Most requests handled at the same time."""
        self._in_flight = 0
        self._failures: list[tuple[int, float | None]] = []
        self._stalls: list[float] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def fail_next(self, status: int, times: int = 1, retry_after: float | None = None) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (and a Retry-After header)."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def stall_next(self, seconds: float, times: int = 1) -> None:
        """Hold the next ``times`` requests for ``seconds`` before answering (client timeouts)."""
        with self._lock:
            self._stalls.extend([seconds] * times)

    @property
    def chat_requests(self) -> int:
        """How many requests were received."""
        with self._lock:
            return len(self.requests)

    def start(self) -> FakeOpenAIServer:
        """Listen on a free loopback port and serve in a background thread."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        # A short poll keeps stop() quick (shutdown waits for the loop's next poll).
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- serving (called by the handler thread) --------------------------------------------

    def _admit(self, body: dict[str, Any], authorization: str | None) -> tuple[int, float | None]:
        """Log a request; the injected failure to answer with (status 0: none), after stalls."""
        with self._lock:
            self.requests.append(body)
            self.authorization.append(authorization)
            failure = self._failures.pop(0) if self._failures else (0, None)
            if not failure[0] and self.fails is not None:
                failure = (self.fails(body), None)
            stall = self._stalls.pop(0) if self._stalls else 0.0
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        if stall:
            time.sleep(stall)
        if self.response_delay_s:
            time.sleep(self.response_delay_s)
        return failure

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _usage(self, messages: list[dict[str, Any]], text: str) -> dict[str, int]:
        prompt = sum(word_count(str(m.get("content", ""))) for m in messages)
        completion = word_count(text)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }


def _handler_for(fake: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: without this, Nagle and delayed ACKs
        # add ~40 ms to every request on loopback.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            with fake._lock:
                fake.request_headers.append(dict(self.headers.items()))
            if self.path.rstrip("/") == "/v1/embeddings":
                self._embeddings(raw)
                return
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_json(404, {"error": {"message": f"no route {self.path}"}}, {})
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send_json(400, {"error": {"message": "body is not JSON"}}, {})
                return
            status, retry_after = fake._admit(body, self.headers.get("Authorization"))
            try:
                self._answer(body, status, retry_after)
            finally:
                fake._leave()

        def _embeddings(self, raw: bytes) -> None:
            """``POST /v1/embeddings``: one small vector per input, usage in words."""
            body = json.loads(raw)
            status, retry_after = fake._admit(body, self.headers.get("Authorization"))
            try:
                if status:
                    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
                    error = {"message": f"injected failure {status}", "type": "server_error"}
                    self._send_json(status, {"error": error}, headers)
                    return
                inputs = body.get("input")
                texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
                data = [
                    {"object": "embedding", "index": i, "embedding": [float(len(str(t))), 1.0]}
                    for i, t in enumerate(texts)
                ]
                words = sum(word_count(str(t)) for t in texts)
                payload: dict[str, Any] = {"object": "list", "data": data, "model": body["model"]}
                if fake.include_usage:
                    payload["usage"] = {"prompt_tokens": words, "total_tokens": words}
                self._send_json(200, payload, {})
            finally:
                fake._leave()

        def _answer(self, body: dict[str, Any], status: int, retry_after: float | None) -> None:
            if fake.api_key is not None and self.headers.get("Authorization") != (
                f"Bearer {fake.api_key}"
            ):
                self._send_json(401, {"error": {"message": "invalid api key"}}, {})
                return
            if status:
                headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
                error = {"message": f"injected failure {status}", "type": "server_error"}
                self._send_json(status, {"error": error}, headers)
                return
            messages = body.get("messages", [])
            text = fake.responder(messages, body)
            usage = fake._usage(messages, text)
            created = 1_700_000_000
            if not body.get("stream"):
                payload: dict[str, Any] = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": created,
                    "model": body.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                }
                if fake.include_usage:
                    payload["usage"] = usage
                self._send_json(200, payload, {})
                return
            self._stream(body, text, usage, created)

        def _stream(
            self, body: dict[str, Any], text: str, usage: dict[str, int], created: int
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            base = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", ""),
            }

            def event(payload: dict[str, Any] | str) -> None:
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.wfile.write(f"data: {data}\n\n".encode())
                self.wfile.flush()

            def delta(content: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                choice = {"index": 0, "delta": content, "finish_reason": finish}
                return {**base, "choices": [choice]}

            event(delta({"role": "assistant", "content": ""}))
            if fake.first_token_delay_s:
                time.sleep(fake.first_token_delay_s)
            for piece in _pieces(text):
                event(delta({"content": piece}))
            event(delta({}, "stop"))
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            if wants_usage and fake.include_usage:
                event({**base, "choices": [], "usage": usage})
            event("[DONE]")

    return Handler


def _pieces(text: str, size: int = 8) -> Iterator[str]:
    """``text`` in small chunks, as a model streams it."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` (echo responder), stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server
