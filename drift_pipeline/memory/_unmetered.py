"""Model calls a backend makes around the harness's meter, seen from inside its worker.

The harness hands every worker its meter's address (``OPENAI_BASE_URL``), and counts what goes
through it. A backend given its own key and URL (a library configured for a hosted model, a
local model server it started itself) calls past the meter, and nothing in the meter shows it.
So the worker watches the two ways Python code speaks HTTP, and counts each request to a model
API (:data:`MODEL_ENDPOINTS`, by the path's ending) sent anywhere but the meter:

- ``http.client`` (``urllib``, ``requests``, ``urllib3``): its ``http.client.send`` audit event
  carries the request line;
- ``httpx`` (the ``openai``, ``anthropic`` and most newer SDKs): its transports' request
  handlers, wrapped as soon as the module is loaded.

Such calls leave the arm's model spend unknown unless its ``token_counts()`` covers them (see
:mod:`._charging`). A memory service's own models, on its servers, are out of any worker's
sight: adapters declare those (``models_outside_meter``). Code that opens its own sockets is not
seen either; what this catches is the common case, a model client pointed elsewhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["MODEL_ENDPOINTS", "UnmeteredCalls", "is_model_path"]

MODEL_ENDPOINTS: Final = (
    # OpenAI and every OpenAI-compatible server (vLLM, llama.cpp, LiteLLM, Ollama's /v1).
    "/chat/completions",
    "/completions",
    "/embeddings",
    "/responses",
    # Anthropic.
    "/messages",
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

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def is_model_path(path: str) -> bool:
    """Whether an HTTP request path (or absolute URL) is a call to a model API."""
    return path.split("?", 1)[0].rstrip("/").endswith(MODEL_ENDPOINTS)


def _address(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    return parts.hostname.lower(), parts.port or _DEFAULT_PORTS.get(parts.scheme, 80)


class UnmeteredCalls:
    """Counts a worker's requests to model APIs that do not go to its meter.

    Args:
        meter_url: The meter's URL (``None``: the worker has no meter, and every model call
            is one it cannot see).
    """

    def __init__(self, meter_url: str | None) -> None:
        self.meter = _address(meter_url) if meter_url else None
        self.count = 0
        self._wrapped = False

    @classmethod
    def from_environment(cls) -> UnmeteredCalls:
        """The watcher of this worker's meter, as the harness set ``OPENAI_BASE_URL``."""
        return cls(os.environ.get("OPENAI_BASE_URL") or None)

    def install(self) -> None:
        """Start watching (once per process: an audit hook cannot be removed)."""
        sys.addaudithook(self._audit)

    def take(self) -> int:
        """The calls seen since the last time this was asked."""
        seen, self.count = self.count, 0
        return seen

    def _seen(self, host: str | None, port: int | None, path: str) -> None:
        if not is_model_path(path):
            return
        if self.meter is not None and host is not None and (host.lower(), port) == self.meter:
            return
        self.count += 1

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        # A hook that raises would fail the backend's own operation: the watch never does.
        try:
            if event == "http.client.send":
                self._request_line(*args[:2])
            elif not self._wrapped:
                self._wrap_httpx()
        except Exception:  # the watch must never break the backend
            pass

    def _request_line(self, connection: Any, data: Any) -> None:
        """A request's first bytes: ``METHOD PATH HTTP/1.1`` (a body's bytes are not one)."""
        if not isinstance(data, bytes | bytearray) or b" HTTP/1." not in data[:8192]:
            return
        line = bytes(data[: data.find(b"\r\n")]).decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rsplit(" ", 1)[0]
        if not method.isupper() or not target:
            return
        if "://" in target:  # through a proxy: the request names the whole URL
            address = _address(target)
            host, port = address if address else (None, None)
            self._seen(host, port, urlsplit(target).path)
            return
        host = getattr(connection, "host", None)
        port = getattr(connection, "port", None)
        self._seen(str(host) if host else None, port if isinstance(port, int) else None, target)

    def _wrap_httpx(self) -> None:
        """Wrap httpx's transports once the module that defines them has loaded."""
        module = sys.modules.get("httpx._transports.default")
        if module is None or not hasattr(module, "AsyncHTTPTransport"):
            return
        self._wrapped = True
        watch = self._seen

        def seen(request: Any) -> None:
            url = request.url
            watch(url.host, url.port or _DEFAULT_PORTS.get(url.scheme, 80), url.path)

        sync: Callable[..., Any] = module.HTTPTransport.handle_request
        asynchronous: Callable[..., Any] = module.AsyncHTTPTransport.handle_async_request

        def handle_request(transport: Any, request: Any) -> Any:
            seen(request)
            return sync(transport, request)

        async def handle_async_request(transport: Any, request: Any) -> Any:
            seen(request)
            return await asynchronous(transport, request)

        module.HTTPTransport.handle_request = handle_request
        module.AsyncHTTPTransport.handle_async_request = handle_async_request
