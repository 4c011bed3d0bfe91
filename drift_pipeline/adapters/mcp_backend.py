"""``mcp``: any memory server that speaks the Model Context Protocol, under the gate.

Install with ``pip install drift-pipeline[mcp]`` (the official ``mcp`` SDK). The backend starts
the server over stdio (``command``) or reaches it over Streamable HTTP (``url``), lists its
tools and maps ``store`` and ``retrieve`` onto them (:mod:`.mcp_mapping`): configured in the
backend config, or guessed from common tool names, and written into the run record either way
(:meth:`MCPBackend.service_info`). For example, the reference knowledge-graph server::

    mcp:
      command: npx -y @modelcontextprotocol/server-memory
      env: {MEMORY_FILE_PATH: "{state_dir}/memory.jsonl"}
      search: {tool: open_nodes, arguments: {names: ["{entity}"]}}

Each replicate's worker starts its own server; ``{state_dir}`` in ``command``, ``env`` and
``cwd`` is that worker's own folder, so replicates never share a memory file, and ``{entity}``
there (with ``scope: process``) starts one server per entity.

What it measures and what it cannot:

- **Scope.** A session goes into the memory of each agent the harness stores it for (every
  assistant that speaks in it), once per agent. Where every store call and the search carry
  ``{entity}`` the server keeps entities apart; with ``scope: process`` each entity has a
  server of its own; otherwise (``none``) every entity shares one memory, stored once per
  session, ``{entity}`` reading ``shared`` in every call, and the run record says so. The
  conformance check refuses such a backend (what one agent was told reaches another) unless
  the run allows it to leak (``drift run --allow-leak mcp``, recorded in the run manifest);
  the Privacy probes then measure what leaks.
- **Time to queryable** is the store calls' time: MCP has no way to say that a write is still
  being processed, so a server that indexes in the background after answering may miss probes.
- **Tokens.** MCP carries no token counts. A started server is given the harness's metered
  endpoint (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), so its model calls through an OpenAI
  client are metered; a server calling a model elsewhere spends tokens the harness never sees.
- **Clock.** A server runs in its own process, so the simulated date never reaches its clock;
  the session's time reaches it only as ``{timestamp}`` in the stored text.
- **Faults.** A tool that answers with an error, a connection that fails and a call past
  ``call_timeout`` raise, and the harness records each against that call.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from drift_pipeline.memory import Message, TokenCounts
from drift_pipeline.memory.backends import BackendNeeds, Package

from ._state import KeptNames, state_folder
from .mcp_connection import MCPCallError, MCPConnection, ServerTarget, command_of
from .mcp_mapping import MCPMappingError, ToolMapping, fill, resolve_mapping

__all__ = ["MCPBackend", "MCPSnapshotBackend", "mcp_backend", "mcp_needs"]

METERED_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
"""The harness's metered model endpoint, passed on to a started server."""
_LISTING = "tool-listing"
_ENV_REFERENCE = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
SNAPSHOT_WAIT = 120.0
"""Seconds ``snapshot()`` waits for the listing tool without a ``call_timeout`` of its own."""
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHARED_ENTITY = "shared"
"""What ``{entity}`` reads in every call when nothing keeps entities apart (scope ``none``)."""


class MCPBackend:
    """A memory server over MCP as a DRIFT backend (see the module docstring).

    Built without a connection: the server is started (or reached) on the first call, so the
    object can be handed to ``DriftHarness`` and rebuilt in each sandboxed worker. The
    ``mcp`` backend by name is built by :func:`mcp_backend`, which connects at once and adds
    ``snapshot()`` when the server has a tool that lists its whole memory.

    Args:
        command: The server's command (a string split like a shell would, or a list); or
        url: its Streamable HTTP endpoint.
        env: Variables for a started server; ``{state_dir}`` (and ``{entity}`` with ``scope:
            process``) are filled in. Values are written into no record.
        pass_env: Names of the worker's variables passed on to a started server (a key the
            server needs: list it here and the harness passes it to the worker).
        headers: HTTP headers for ``url``; ``{env:NAME}`` is the worker's variable NAME.
        cwd: Folder a started server runs in (default: a folder of its own in the worker's
            state folder).
        store: The store call(s): a tool name, a mapping or a list (see :mod:`.mcp_mapping`).
        search: The search call: a tool name or a mapping.
        snapshot: The call that lists the whole memory; ``False`` for none.
        scope: ``auto``, ``process`` or ``none`` (see :mod:`.mcp_mapping`).
        call_timeout: Seconds one tool call may take (default: the harness's per-call timeout).
        deployment: ``local`` or ``cloud``; default ``local`` for a started server or a loopback
            URL, ``cloud`` for any other URL.
        models_outside_meter: Whether the server calls models the harness's meter cannot see.
            Default: no for a started server (it gets the worker's metered endpoint, so its
            calls are counted), yes for a server reached by URL (the harness did not start it,
            so nothing routes its model calls through the meter); say ``false`` for a server
            that calls no model. Its token cost is otherwise unknown (a lower bound, not ranked).
    """

    name: ClassVar[str] = "mcp"
    version: ClassVar[str] = "1"

    def __init__(
        self,
        *,
        command: str | Sequence[str] | None = None,
        url: str | None = None,
        env: Mapping[str, str] | None = None,
        pass_env: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        cwd: str | None = None,
        store: Any = None,
        search: Any = None,
        snapshot: Any = None,
        scope: Literal["auto", "process", "none"] = "auto",
        call_timeout: float | None = None,
        deployment: Literal["local", "cloud"] | None = None,
        models_outside_meter: bool | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("mcp: give exactly one of command (a stdio server) or url")
        self.command = command_of(command) if command is not None else ()
        if command is not None and not self.command:
            raise ValueError("mcp: command is empty")
        self.url = url or ""
        if self.url and urlsplit(self.url).scheme not in ("http", "https"):
            raise ValueError(f"mcp: url {self.url!r} is not an http(s) URL")
        if scope == "process" and self.url:
            raise ValueError("mcp: scope process starts a server per entity; it needs a command")
        self.env = {str(k): str(v) for k, v in (env or {}).items()}
        self.pass_env = tuple(pass_env)
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self.cwd = cwd
        self.store_config, self.search_config, self.snapshot_config = store, search, snapshot
        self.scope = scope
        self.call_timeout = call_timeout
        self._wait = call_timeout or SNAPSHOT_WAIT
        host = urlsplit(self.url).hostname if self.url else None
        self.deployment = deployment or ("cloud" if host and host not in _LOOPBACK else "local")
        if models_outside_meter is not None and not isinstance(models_outside_meter, bool):
            raise ValueError(
                f"mcp: models_outside_meter is {models_outside_meter!r:.40}, expected true or false"
            )
        self.models_outside_meter = (
            bool(self.url) if models_outside_meter is None else models_outside_meter
        )
        self._servers: dict[str, MCPConnection] = {}
        self._mapping: ToolMapping | None = None
        self._stored: set[tuple[str, str]] = set()
        self._kept: KeptNames | None = None

    # --- connections ----------------------------------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        # Connections are threads and processes: a copy starts its own.
        state = dict(self.__dict__)
        state.update(_servers={}, _mapping=None, _stored=set(), _kept=None)
        return state

    def _names(self) -> KeptNames:
        """What outlives this worker: the entities stored for so far.

        A restarted worker's snapshot must still list every entity stored before the restart
        (their memory outlives it where the server keeps it on disk).
        """
        if self._kept is None:
            self._kept = KeptNames(self.name)
        return self._kept

    @property
    def _entities(self) -> list[str]:
        return self._names().members("entities")

    def _target(self, entity: str) -> ServerTarget:
        values = {"state_dir": state_folder(), "entity": entity}
        if self.url:
            headers = {k: _with_env(v) for k, v in self.headers.items()}
            return ServerTarget(url=self.url, headers=headers)
        env = {k: os.environ[k] for k in (*METERED_ENV, *self.pass_env) if k in os.environ}
        env.update({k: str(fill(v, values)) for k, v in self.env.items()})
        cwd = fill(self.cwd, values) if self.cwd else os.path.join(values["state_dir"], "mcp")
        folder = os.path.join(cwd, entity) if self.scope == "process" and not self.cwd else cwd
        Path(folder).mkdir(parents=True, exist_ok=True)
        command = tuple(str(fill(part, values)) for part in self.command)
        log = os.path.join(values["state_dir"], f"mcp-server-{entity or 'shared'}.log")
        return ServerTarget(command=command, env=env, cwd=folder, log=log)

    def _open(self, key: str) -> MCPConnection:
        """The connection for ``key`` (an entity with ``scope: process``, else ``""``), opened."""
        server = self._servers.get(key)
        if server is None:
            server = MCPConnection(self._target(key), self.call_timeout)
            try:
                server.open()
            except BaseException:
                # Never kept: the next call starts the server afresh and says why it failed.
                server.close()
                raise
            self._servers[key] = server
        if self._mapping is None:
            self._mapping = resolve_mapping(
                server.tools,
                self.store_config,
                self.search_config,
                self.snapshot_config,
                self.scope,
            )
        return server

    def connect(self) -> ToolMapping:
        """Start (or reach) the server now and resolve the mapping; return it.

        With ``scope: process`` a server is started only to list the tools, then stopped.

        Raises:
            MCPCallError: The server did not start or answer.
            MCPMappingError: The mapping cannot work with this server's tools.
        """
        if self._mapping is not None:
            return self._mapping
        key = _LISTING if self.scope == "process" else ""
        self._open(key)
        if self.scope == "process":
            self._servers.pop(key).close()
        assert self._mapping is not None
        return self._mapping

    async def _server(self, entity: str) -> tuple[MCPConnection, ToolMapping]:
        key = entity if self.scope == "process" else ""
        server = self._servers.get(key)
        if server is None or self._mapping is None:
            # Starting a server blocks (a process and a handshake): keep the event loop free.
            server = await asyncio.to_thread(self._open, key)
        assert self._mapping is not None
        return server, self._mapping

    def close(self) -> None:
        """Stop every server this backend started (or disconnect from the URL)."""
        for server in self._servers.values():
            server.close()
        self._servers.clear()

    # --- the protocol ---------------------------------------------------------------------------

    async def store(
        self, session_id: str, messages: list[Message], *, entity_id: str | None = None
    ) -> None:
        """Store the session into ``entity_id``'s memory (else every speaker's).

        The harness names whose memory it is, once for each agent of the session; called
        without ``entity_id``, the session goes into the memory of every entity that speaks in
        it. A session already stored for an entity is not stored for it again. Without scope,
        the one shared memory gets each session once.
        """
        if not messages:
            return
        speakers = list(dict.fromkeys(m["speaker"] for m in messages))
        scopes = [entity_id] if entity_id is not None else speakers
        _, mapping = await self._server(scopes[0])
        if mapping.scope == "none":
            # One shared memory: the session goes in once, whoever it is stored for.
            scopes = [SHARED_ENTITY]
        lines = [f"{m['timestamp']} {m['speaker']}: {m['content']}" for m in messages]
        session = {
            "session_id": session_id,
            "text": "\n".join(lines),
            "lines": lines,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "timestamp": messages[0]["timestamp"],
        }
        for entity in scopes:
            if (session_id, entity) in self._stored:
                continue
            server, _ = await self._server(entity)
            for call in mapping.store:
                if call.each == "message":
                    for message, line in zip(messages, lines, strict=True):
                        values = {
                            "entity": entity,
                            "session_id": session_id,
                            "line": line,
                            "content": message["content"],
                            "role": message["role"],
                            "speaker": message["speaker"],
                            "timestamp": message["timestamp"],
                        }
                        await server.call(call.tool, fill(call.arguments, values))
                else:
                    arguments = fill(call.arguments, {**session, "entity": entity})
                    await server.call(call.tool, arguments)
            self._stored.add((session_id, entity))
            self._names().add_member("entities", entity)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """The search tool's text for ``query``, in ``entity_id``'s memory where scoped."""
        server, mapping = await self._server(entity_id)
        scope = SHARED_ENTITY if mapping.scope == "none" else entity_id
        values = {"entity": scope, "session_id": session_id, "query": query}
        return await server.call(mapping.search.tool, fill(mapping.search.arguments, values))

    def token_counts(self) -> TokenCounts:
        """Unknown: MCP carries no token counts (a started server's calls are metered)."""
        return TokenCounts(write=None, read=None)

    def service_info(self) -> dict[str, str]:
        """The server, the SDK and the mapping in use, for the run record (no secrets)."""
        server = next(iter(self._servers.values()), None)
        info = {
            "service": server.server_name if server else "not connected",
            "service_version": server.server_version if server else "unknown",
            "sdk": "mcp",
            "sdk_version": _sdk_version(),
            "transport": "streamable-http" if self.url else "stdio",
            "endpoint": server.target.describe() if server else _describe(self),
            "protocol_version": server.protocol_version if server else "unknown",
            "token_counts": "not reported over MCP; a started server's metered calls counted"
            + ("; the server's own model calls are unknown" if self.models_outside_meter else ""),
        }
        if self._mapping is not None:
            info.update(self._mapping.describe())
        return info


class MCPSnapshotBackend(MCPBackend):
    """:class:`MCPBackend` with ``snapshot()``: the text of the server's listing tool.

    The listing tool is called once per entity stored so far where it takes the entity or
    each entity has a server of its own, else once; the harness counts the text's tokens as
    the memory's size and reads it for Selectivity.
    """

    def snapshot(self) -> str:
        """Everything the server holds, as its listing tool returns it.

        A server not running yet in this worker (an entity's, after a restart) is started.
        """
        entities = self._entities
        if not entities:
            return ""  # nothing stored yet
        mapping = self.connect()
        call = mapping.snapshot
        if call is None:
            raise MCPMappingError("mcp snapshot: the server has no tool that lists its memory")
        if self.scope != "process" and not call.uses("entity"):
            server = self._open("")
            return server.call_blocking(call.tool, fill(call.arguments, {}), self._wait)
        # One listing per entity stored so far: from its own server, or by its argument.
        texts = []
        for entity in entities:
            server = self._open(entity if self.scope == "process" else "")
            arguments = fill(call.arguments, {"entity": entity})
            texts.append(server.call_blocking(call.tool, arguments, self._wait))
        return "\n".join(texts)


def mcp_backend(**options: Any) -> MCPBackend:
    """Build the ``mcp`` backend and connect it now (its worker times this as its start).

    Returns an :class:`MCPSnapshotBackend` when the mapping has a listing tool, so the run
    earns Selectivity and storage figures; otherwise those are reported as not measured.

    Raises:
        ValueError: Bad options, a server that does not start or answer, or a mapping that
            cannot work with the server's tools (one line each).
    """
    try:
        inspect.signature(MCPBackend).bind(**options)
    except TypeError as error:
        raise ValueError(f"backend 'mcp' rejects options {sorted(options)}: {error}") from None
    backend = MCPBackend(**options)
    try:
        mapping = backend.connect()
    except (MCPCallError, MCPMappingError) as error:
        backend.close()
        raise ValueError(str(error)) from None
    if mapping.snapshot is None:
        return backend
    # The same state (its open server and resolved mapping) under the class that snapshots.
    with_snapshot = MCPSnapshotBackend.__new__(MCPSnapshotBackend)
    with_snapshot.__dict__.update(backend.__dict__)
    return with_snapshot


def mcp_needs(options: Mapping[str, Any]) -> BackendNeeds:
    """The SDK, the network for a URL, and the variables a server or its headers are given.

    Args:
        options: The backend's options.
    """
    headers = options.get("headers") or {}
    referenced = [n for value in headers.values() for n in _ENV_REFERENCE.findall(str(value))]
    return BackendNeeds(
        network=bool(options.get("url")),
        packages=(Package("mcp", "drift-pipeline[mcp]"),),
        env=tuple(dict.fromkeys([*(options.get("pass_env") or ()), *referenced])),
    )


def _with_env(value: str) -> str:
    """``value`` with each ``{env:NAME}`` replaced by the variable (a token kept out of files)."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ValueError(f"mcp headers: the variable {name} is not set (list it in pass_env)")
        return os.environ[name]

    return _ENV_REFERENCE.sub(variable, value)


def _sdk_version() -> str:
    try:
        return version("mcp")
    except PackageNotFoundError:
        return "unknown"


def _describe(backend: MCPBackend) -> str:
    return ServerTarget(command=backend.command, url=backend.url).describe()
