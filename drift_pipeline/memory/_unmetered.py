"""Model calls a backend makes around the harness's meter, seen from inside its worker.

The harness hands every worker its meter's address (``OPENAI_BASE_URL``) and counts what goes
through it. A backend given its own key and URL (a library configured for a hosted model, a
local model server it started itself) calls past the meter, and nothing in the meter shows it.
So the worker watches what its process writes to the network, below every HTTP client
(``httpx`` and its forks, ``requests``, ``urllib``, ``aiohttp``, plain or over TLS): the first
bytes of an HTTP/1 request name its method and path, and a request to a model API
(:data:`MODEL_ENDPOINTS`, by the path's ending) sent anywhere but the meter is counted.

Such calls leave the arm's model spend unknown unless its ``token_counts()`` covers them (see
:mod:`._charging`). A memory service's own models, on its servers, are out of any worker's
sight: adapters declare those (``models_outside_meter``). Requests in HTTP/2 frames (their
headers are compressed) and code writing through sockets of its own C extensions are not
seen; what this catches is the common case, a model client pointed elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["MODEL_ENDPOINTS", "UnmeteredCalls", "is_model_path"]

MODEL_ENDPOINTS: Final = (
    # OpenAI and every OpenAI-compatible server (vLLM, llama.cpp, LiteLLM, Ollama's /v1).
    "/chat/completions",
    "/completions",
    "/embeddings",
    "/v1/responses",
    # Anthropic (only its own path: a service's API may well have messages of its own).
    "/v1/messages",
    # Google Gemini.
    ":generateContent",
    ":streamGenerateContent",
    ":embedContent",
    ":batchEmbedContents",
    # Ollama's own API.
    "/api/chat",
    "/api/generate",
    "/api/embed",
    "/api/embeddings",
)
"""How the path of a request to a model API ends (a query string aside)."""

_METHODS: Final = (b"POST ", b"GET ", b"PUT ")
"""How a request that can call a model starts."""

_LOOPBACK_NAMES: Final = {"localhost": "127.0.0.1"}


def is_model_path(path: str) -> bool:
    """Whether an HTTP request path (or absolute URL) is a call to a model API."""
    return urlsplit(path).path.rstrip("/").endswith(MODEL_ENDPOINTS)


def _request_path(data: Any) -> str | None:
    """The path an HTTP/1 request's first bytes name, or ``None`` for anything else."""
    if not isinstance(data, bytes | bytearray | memoryview):
        return None
    head = bytes(data[:2048])
    if not head.startswith(_METHODS):
        return None
    line = head.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
        return None
    return parts[1].decode("latin-1")


class UnmeteredCalls:
    """Counts a process's requests to model APIs that do not go to its meter.

    Args:
        meter_url: The meter's URL (``None``: the worker has no meter, and every model call
            is one it cannot see).
    """

    def __init__(self, meter_url: str | None) -> None:
        parts = urlsplit(meter_url) if meter_url else None
        host = (parts.hostname or "").lower() if parts else ""
        self.meter = (
            (_LOOPBACK_NAMES.get(host, host), parts.port or 80)
            if parts is not None and parts.scheme == "http"
            else None
        )
        self.count = 0

    @classmethod
    def from_environment(cls) -> UnmeteredCalls:
        """The watcher of this worker's meter, as the harness set ``OPENAI_BASE_URL``."""
        return cls(os.environ.get("OPENAI_BASE_URL") or None)

    def take(self) -> int:
        """The calls seen since the last time this was asked."""
        seen, self.count = self.count, 0
        return seen

    def _plain(self, sock: socket.socket, data: Any) -> None:
        path = _request_path(data)
        if path is None or not is_model_path(path):
            return
        try:
            peer = sock.getpeername()
        except OSError:
            peer = None
        if self.meter is not None and isinstance(peer, tuple) and peer[:2] == self.meter:
            return
        self.count += 1

    def _encrypted(self, data: Any) -> None:
        # The meter speaks plain HTTP on loopback: a request over TLS never goes to it.
        path = _request_path(data)
        if path is not None and is_model_path(path):
            self.count += 1

    def install(self) -> None:
        """Watch every socket write of this process (once per process; never undone)."""
        watch_plain, watch_encrypted = self._plain, self._encrypted

        def plain(method: Callable[..., Any]) -> Callable[..., Any]:
            def write(sock: socket.socket, data: Any, *args: Any) -> Any:
                _quietly(watch_plain, sock, data)
                return method(sock, data, *args)

            return write

        def encrypted(method: Callable[..., Any]) -> Callable[..., Any]:
            def write(channel: Any, data: Any, *args: Any) -> Any:
                _quietly(watch_encrypted, data)
                return method(channel, data, *args)

            return write

        # Plain sockets (asyncio's transports write through them too); TLS over a socket
        # (its sendall writes through its send); TLS over memory, as asyncio and anyio do it.
        socket.socket.send = plain(socket.socket.send)  # type: ignore[method-assign]
        socket.socket.sendall = plain(socket.socket.sendall)  # type: ignore[method-assign]
        ssl.SSLSocket.send = encrypted(ssl.SSLSocket.send)  # type: ignore[method-assign]
        ssl.SSLObject.write = encrypted(ssl.SSLObject.write)  # type: ignore[method-assign]


def _quietly(watch: Callable[..., None], *args: Any) -> None:
    """Run a watch; it must never fail the backend's own write (one it cannot read is let be)."""
    with contextlib.suppress(Exception):
        watch(*args)
