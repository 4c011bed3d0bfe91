"""One live MCP client session, on an event loop of its own in a thread of its own.

The harness runs each ``store`` and ``retrieve`` as its own task and reads ``snapshot()``
outside any event loop, while an MCP session (the SDK's :class:`mcp.Client`, built on anyio task
groups) must stay inside the task that opened it. So the session lives in a thread: calls are
handed to its loop and awaited (or waited for) from outside. A call the harness cancels (its
timeout) is cancelled on the session's loop too.

A stdio server is started through :mod:`.mcp_launch`, which asks the kernel to kill it when the
thread that started it ends, so a server never outlives its connection, however the worker
stops.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import sys
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, TypeVar
from urllib.parse import urlsplit, urlunsplit

from .mcp_tools import ToolInfo

if TYPE_CHECKING:
    from mcp import Client

__all__ = [
    "MCPCallError",
    "MCPConnection",
    "ServerTarget",
    "command_without_secrets",
    "result_text",
    "url_without_secrets",
]

_T = TypeVar("_T")
CONNECT_TIMEOUT = 60.0
"""Seconds a server may take to start and answer the handshake and the tool list."""


class MCPCallError(RuntimeError):
    """A tool call the server answered with an error, or a connection that failed."""


@dataclass(frozen=True)
class ServerTarget:
    """Where the server is: a command started over stdio, or a Streamable HTTP URL.

    Attributes:
        command: The program and its arguments (stdio).
        url: The server's endpoint (Streamable HTTP).
        env: Variables given to a started server, over the few the SDK passes on.
        cwd: Folder a started server runs in.
        headers: HTTP headers sent with every request to ``url``.
        log: File a started server's stderr is written to (its last line explains a failure).
    """

    command: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    headers: Mapping[str, str] | None = None
    log: str | None = None

    @property
    def transport(self) -> str:
        """``stdio`` or ``streamable-http``."""
        return "streamable-http" if self.url else "stdio"

    def describe(self) -> str:
        """The command or the URL (without credentials), for the run record."""
        return url_without_secrets(self.url) if self.url else command_without_secrets(self.command)


_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|credential|auth", re.IGNORECASE)
_REDACTED = "[redacted]"


def command_without_secrets(command: Sequence[str]) -> str:
    """``command`` as one line, the value of each secret-named flag or variable replaced.

    ``--api-key VALUE``, ``--token=VALUE`` and ``API_KEY=VALUE`` keep their names; the values
    become ``[redacted]`` (a key given on a command line would otherwise reach the run record).
    """
    shown: list[str] = []
    hide_next = False
    for part in command:
        name, sep, _ = part.partition("=")
        if hide_next:
            shown.append(_REDACTED)
            hide_next = False
        elif sep and _SECRET_NAME.search(name):
            shown.append(f"{name}={_REDACTED}")
        else:
            shown.append(part)
            hide_next = part.startswith("-") and bool(_SECRET_NAME.search(part))
    return " ".join(shown)


def url_without_secrets(url: str) -> str:
    """``url`` without user info, query or fragment (where tokens are often put)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def result_text(result: Any) -> str:
    """The text of a tool result: its text items, else its structured content as JSON."""
    texts: list[str] = []
    for item in getattr(result, "content", None) or ():
        text = getattr(item, "text", None)
        if text is None:
            text = getattr(getattr(item, "resource", None), "text", None)
        if isinstance(text, str):
            texts.append(text)
    if texts:
        return "\n".join(texts)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return json.dumps(structured, ensure_ascii=False, sort_keys=True)
    return ""


class MCPConnection:
    """A connection to one MCP server, opened by :meth:`open` and closed by :meth:`close`.

    Args:
        target: Where the server is.
        call_timeout: Seconds one tool call may take before it is abandoned (None: no limit of
            its own; the harness's per-call timeout still applies).
    """

    def __init__(self, target: ServerTarget, call_timeout: float | None = None) -> None:
        self.target = target
        self.call_timeout = call_timeout
        self.tools: list[ToolInfo] = []
        self.server_name = "unknown"
        self.server_version = "unknown"
        self.protocol_version = "unknown"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Client | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    def open(self) -> None:
        """Start the server (or reach it), complete the handshake and list its tools.

        Raises:
            MCPCallError: The server did not start or answer, in one line.
        """
        self._thread = threading.Thread(target=self._serve, name="mcp-connection", daemon=True)
        self._thread.start()
        if not self._ready.wait(CONNECT_TIMEOUT):
            raise MCPCallError(
                f"MCP server {self.target.describe()!r} did not answer within {CONNECT_TIMEOUT:g}s"
            )
        if self._failure is not None:
            said = self.last_words()
            raise MCPCallError(
                f"MCP server {self.target.describe()!r} failed to start: "
                f"{_one_line(self._failure)}{f' (it said: {said})' if said else ''}"
            ) from self._failure

    def last_words(self) -> str:
        """The last line a started server wrote to its stderr, if any."""
        if not self.target.log:
            return ""
        try:
            with open(self.target.log, encoding="utf-8", errors="replace") as file:
                lines = [line.strip() for line in file.read()[-4000:].splitlines()]
        except OSError:
            return ""
        return next((line for line in reversed(lines) if line), "")[:300]

    def _serve(self) -> None:
        try:
            asyncio.run(self._session())
        except BaseException as error:  # reported to open(), or to the calls still waiting
            self._failure = self._failure or error
        finally:
            self._ready.set()

    async def _session(self) -> None:
        from mcp import Client

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        # No response cache: every call of a benchmark must reach the server.
        with contextlib.ExitStack() as files:
            errlog = files.enter_context(open(self.target.log, "a")) if self.target.log else None
            async with (
                contextlib.AsyncExitStack() as held,
                Client(self._server(errlog, held), cache=None) as client,
            ):
                await self._serve_calls(client)

    async def _serve_calls(self, client: Client) -> None:
        """List the tools, then hold the session open for calls until :meth:`close`."""
        assert self._stop is not None
        listed = await _all_tools(client)
        self.tools = [ToolInfo(t.name, dict(t.input_schema or {})) for t in listed]
        info = client.server_info
        if info is not None:
            self.server_name = info.name or "unknown"
            self.server_version = info.version or "unknown"
        self.protocol_version = client.protocol_version
        self._client = client
        self._ready.set()
        await self._stop.wait()
        self._client = None

    def _server(self, errlog: TextIO | None, held: contextlib.AsyncExitStack) -> Any:
        """The SDK's transport to the server; what it needs closed afterwards goes on ``held``."""
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self.target.url:
            if not self.target.headers:
                return self.target.url
            import httpx2

            # The SDK leaves a client it is given open: closed with the session (``held``).
            http = httpx2.AsyncClient(
                headers=dict(self.target.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            held.push_async_callback(http.aclose)
            return streamable_http_client(self.target.url, http_client=http)
        program, *arguments = self.target.command
        # Started through the launcher: the kernel kills the server with this thread.
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "drift_pipeline.adapters.mcp_launch", program, *arguments],
            env=dict(self.target.env or {}),
            cwd=self.target.cwd,
        )
        return stdio_client(parameters, errlog=errlog or sys.stderr)

    def _submit(self, call: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        if self._loop is None or self._client is None or self._failure is not None:
            call.close()
            reason = _one_line(self._failure) if self._failure else "not connected"
            raise MCPCallError(f"MCP server {self.target.describe()!r}: {reason}")
        return asyncio.run_coroutine_threadsafe(call, self._loop)

    async def _call_tool(self, tool: str, arguments: Mapping[str, Any]) -> str:
        assert self._client is not None
        result = await self._client.call_tool(
            tool, dict(arguments), read_timeout_seconds=self.call_timeout
        )
        text = result_text(result)
        if result.is_error:
            raise MCPCallError(f"{tool}: the server answered with an error: {text[:300]}")
        return text

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """Call ``tool`` from any event loop; return its text.

        Raises:
            MCPCallError: The server answered with an error, or the connection is gone.
        """
        future = self._submit(self._call_tool(tool, arguments))
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()  # the harness gave up on this call: stop it on the server's side
            raise
        except MCPCallError:
            raise
        except Exception as error:  # the connection, not the tool: say what the server said
            raise self._failed(tool, error) from error

    def _failed(self, tool: str, error: BaseException) -> MCPCallError:
        said = self.last_words()
        return MCPCallError(f"{tool}: {_one_line(error)}{f' (server: {said})' if said else ''}")

    def call_blocking(self, tool: str, arguments: Mapping[str, Any], wait: float) -> str:
        """Call ``tool`` from outside any event loop (``snapshot()``); return its text.

        Raises:
            MCPCallError: As :meth:`call`, or no answer within ``wait`` seconds.
        """
        future = self._submit(self._call_tool(tool, arguments))
        try:
            return future.result(wait)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPCallError(f"{tool}: no answer within {wait:g}s") from None
        except MCPCallError:
            raise
        except Exception as error:
            raise self._failed(tool, error) from error

    def close(self) -> None:
        """End the session (a started server is asked to stop, then killed) and the thread.

        A session still starting (a server that never finished its handshake) is cancelled, so
        its server is stopped too rather than left running beside the worker.
        """
        loop, stop, task, thread = self._loop, self._stop, self._task, self._thread
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                if self._client is None and task is not None:
                    loop.call_soon_threadsafe(task.cancel)
                elif stop is not None:
                    loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(timeout=10)


async def _all_tools(client: Client) -> list[Any]:
    """Every tool the server lists, across pages."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _one_line(error: BaseException) -> str:
    # anyio wraps failures inside task groups in exception groups; the first leaf says why.
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).replace("\n", " ").strip()
    return f"{type(error).__name__}: {text}"[:400] if text else type(error).__name__


def command_of(value: str | Sequence[str]) -> tuple[str, ...]:
    """A command from a string (split like a shell would) or a list."""
    import shlex

    parts = shlex.split(value) if isinstance(value, str) else [str(p) for p in value]
    return tuple(parts)
