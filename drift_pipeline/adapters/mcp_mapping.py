"""How DRIFT's ``store``, ``retrieve`` and ``snapshot`` map onto an MCP server's tools.

A mapping names, for each of them, the tool to call and its arguments as a template:
``{"tool": "add_memory", "arguments": {"content": "{text}", "user_id": "{entity}"}}``. The short
form names only the arguments the harness fills (``{"tool": "add_memory", "text":
"content", "scope": "user_id"}``) and a bare tool name leaves those to be read off the tool's
input schema. Whatever the configuration leaves out is guessed from the server's tool list by
common names (``add_memory``, ``store_memory``, ``search_memories``, ``search_nodes``…) and
recorded as guessed, so a run record always shows which calls produced its figures.

The placeholders each kind of call may use are in :mod:`.mcp_tools`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .mcp_tools import (
    PLACEHOLDERS,
    SCOPE_ARGUMENTS,
    MCPMappingError,
    ToolCall,
    ToolInfo,
    fill,
    pick,
    placeholders_in,
    short_form,
)

__all__ = [
    "PLACEHOLDERS",
    "MCPMappingError",
    "ToolCall",
    "ToolInfo",
    "ToolMapping",
    "fill",
    "placeholders_in",
    "resolve_mapping",
]

STORE_NAMES = (
    "add_memory",
    "add_memories",
    "store_memory",
    "save_memory",
    "create_memory",
    "memory_add",
    "memory_store",
    "remember",
    "write_memory",
    "add_observations",
    "write_note",
    "add_note",
    "store",
    "save",
    "add",
)
"""Store tools by common name, most specific first."""
SEARCH_NAMES = (
    "search_memory",
    "search_memories",
    "memory_search",
    "retrieve_memory",
    "retrieve_memories",
    "query_memory",
    "recall",
    "search_nodes",
    "search_notes",
    "search",
    "query",
    "retrieve",
)
"""Search tools by common name, most specific first."""
STORE_VERBS = ("add", "store", "save", "remember", "write", "create", "memoriz", "insert", "ingest")
"""Words in a store tool's name, for a server whose names are none of :data:`STORE_NAMES`."""
SEARCH_VERBS = ("search", "recall", "retrieve", "query", "find", "lookup")
"""Words in a search tool's name, for a server whose names are none of :data:`SEARCH_NAMES`."""
SNAPSHOT_NAMES = (
    "read_graph",
    "list_memories",
    "get_all_memories",
    "list_all_memories",
    "export_memories",
    "get_memories",
    "list_notes",
)
"""Tools that list everything a server holds, by common name."""
_SHORT_KEYS = {"store": ("text", "scope"), "search": ("query", "scope", "limit")}


@dataclass(frozen=True)
class ToolMapping:
    """The resolved mapping of one server, with what was guessed and how it is scoped.

    Attributes:
        store: The calls made for each stored session, in order.
        search: The call made for each retrieve.
        snapshot: The call whose text is the memory's snapshot, if the server has one.
        scope: ``argument`` (the server keeps each entity's memory apart by an argument of
            every call), ``process`` (one server per entity) or ``none``.
        scope_note: Why, in one line.
        guessed: The parts taken from the server's tool list rather than the configuration.
    """

    store: tuple[ToolCall, ...]
    search: ToolCall
    snapshot: ToolCall | None
    scope: Literal["argument", "process", "none"]
    scope_note: str
    guessed: tuple[str, ...] = ()

    def describe(self) -> dict[str, str]:
        """The mapping as short strings, for the run record."""
        return {
            "store": " + ".join(call.describe() for call in self.store),
            "search": self.search.describe(),
            "snapshot": self.snapshot.describe() if self.snapshot else "none",
            "scope": f"{self.scope}: {self.scope_note}",
            "guessed": ", ".join(self.guessed) or "nothing",
        }


# --- the configuration --------------------------------------------------------------------------


def _configured_call(kind: str, given: Any, tools: Mapping[str, ToolInfo]) -> ToolCall | None:
    """A call from its configuration (a tool name, a short form or a template), or None."""
    if given is None:
        return None
    if isinstance(given, str):
        given = {"tool": given}
    if not isinstance(given, Mapping) or not isinstance(given.get("tool"), str):
        raise MCPMappingError(
            f"mcp {kind}: expected a tool name or a mapping with 'tool', got {given!r:.80}"
        )
    allowed = {"tool", "arguments", "each", *_SHORT_KEYS.get(kind, ())}
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise MCPMappingError(
            f"mcp {kind}: unknown key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    name = str(given["tool"])
    tool = tools.get(name)
    if tool is None:
        raise MCPMappingError(
            f"mcp {kind}: the server has no tool {name!r}; it lists {', '.join(sorted(tools))}"
        )
    each = given.get("each", "session")
    if each not in ("session", "message") or (each == "message" and kind != "store"):
        raise MCPMappingError(f"mcp {kind}: each must be 'session' or (for store) 'message'")
    if "arguments" in given:
        arguments = given["arguments"]
        if not isinstance(arguments, Mapping):
            raise MCPMappingError(f"mcp {kind}: arguments must be a mapping of name to template")
        if any(key in given for key in _SHORT_KEYS.get(kind, ())):
            raise MCPMappingError(
                f"mcp {kind}: give either arguments or the argument names "
                f"({', '.join(_SHORT_KEYS[kind])}), not both"
            )
        return ToolCall(name, dict(arguments), each)
    return ToolCall(name, short_form(kind, tool, given), each)


# --- guessing from the tool list ---------------------------------------------------------------


def _knowledge_graph(tools: Mapping[str, ToolInfo]) -> bool:
    """The reference knowledge-graph server's tools (and the many servers that copy them)."""
    return {"create_entities", "add_observations", "search_nodes"} <= set(tools)


def _guess_store(tools: Mapping[str, ToolInfo]) -> tuple[ToolCall, ...]:
    if _knowledge_graph(tools):
        # An entity per DRIFT entity; each session's lines become its observations. The entity
        # is created first (a no-op once it exists) because add_observations refuses unknown ones.
        return (
            ToolCall(
                "create_entities",
                {"entities": [{"name": "{entity}", "entityType": "entity", "observations": []}]},
            ),
            ToolCall(
                "add_observations",
                {"observations": [{"entityName": "{entity}", "contents": "{lines}"}]},
            ),
        )
    name = _by_name(tools, STORE_NAMES, STORE_VERBS)
    if name is None:
        raise MCPMappingError(
            f"mcp store: no tool looks like a store ({', '.join(STORE_NAMES[:5])}…); the server "
            f"lists {', '.join(sorted(tools))}; give store: {{tool: NAME, text: ARGUMENT}}"
        )
    return (ToolCall(name, short_form("store", tools[name], {})),)


def _guess_search(tools: Mapping[str, ToolInfo]) -> ToolCall:
    name = _by_name(tools, SEARCH_NAMES, SEARCH_VERBS)
    if name is None:
        raise MCPMappingError(
            f"mcp search: no tool looks like a search ({', '.join(SEARCH_NAMES[:5])}…); the "
            f"server lists {', '.join(sorted(tools))}; give search: {{tool: NAME, query: ARGUMENT}}"
        )
    return ToolCall(name, short_form("search", tools[name], {}))


def _guess_snapshot(tools: Mapping[str, ToolInfo], scoped: bool) -> ToolCall | None:
    for name in SNAPSHOT_NAMES:
        tool = tools.get(name)
        if tool is None:
            continue
        scope = pick(tool.string_properties(), SCOPE_ARGUMENTS)
        others = [n for n in tool.required if n != scope]
        if others:
            continue  # it needs more than the harness can give
        if scoped and scope:
            return ToolCall(name, {scope: "{entity}"})
        if not tool.required:
            return ToolCall(name, {})
    return None


def _by_name(
    tools: Mapping[str, ToolInfo], names: Sequence[str], verbs: Iterable[str]
) -> str | None:
    """The first tool named like ``names``, else one whose name has a verb and a memory word."""
    lowered = {name.lower(): name for name in tools}
    for name in names:
        if name in lowered:
            return lowered[name]
    nouns = ("memor", "note", "fact", "observation", "knowledge")
    for lower, name in sorted(lowered.items()):
        if any(v in lower for v in verbs) and any(n in lower for n in nouns):
            return name
    return None


def resolve_mapping(
    tools: Sequence[ToolInfo],
    store: Any = None,
    search: Any = None,
    snapshot: Any = None,
    scope: str = "auto",
) -> ToolMapping:
    """The mapping for a server with ``tools``: the configured parts, the rest guessed.

    Args:
        tools: The server's tools, as it lists them.
        store: A tool name, a mapping (``tool`` with ``arguments`` or the argument names
            ``text`` and ``scope``, and ``each``), or a list of such calls; None: guessed.
        search: A tool name or a mapping (``tool`` with ``arguments`` or ``query``, ``scope``,
            ``limit``); None: guessed.
        snapshot: A tool name or mapping; None: guessed; False: no snapshot.
        scope: ``auto`` (by argument where every call carries ``{entity}``, else none),
            ``process`` (one server per entity) or ``none``.

    Raises:
        MCPMappingError: One line naming the part that cannot work and what to give instead.
    """
    by_name = {tool.name: tool for tool in tools}
    guessed: list[str] = []
    if store is None:
        store_calls = _guess_store(by_name)
        guessed.append("store")
    else:
        listed = store if isinstance(store, list) else [store]
        store_calls = tuple(
            call for item in listed if (call := _configured_call("store", item, by_name))
        )
        if not store_calls:
            raise MCPMappingError("mcp store: the list of store calls is empty")
    search_call = _configured_call("search", search, by_name)
    if search_call is None:
        search_call = _guess_search(by_name)
        guessed.append("search")
    if scope not in ("auto", "process", "none"):
        raise MCPMappingError(f"mcp scope: {scope!r} is not one of auto, process, none")
    by_argument = search_call.uses("entity") and all(c.uses("entity") for c in store_calls)
    if snapshot is False:
        snapshot_call = None
    elif snapshot is None:
        snapshot_call = _guess_snapshot(by_name, by_argument and scope == "auto")
        if snapshot_call is not None:
            guessed.append("snapshot")
    else:
        snapshot_call = _configured_call("snapshot", snapshot, by_name)
    for kind, call in (
        *(("store", c) for c in store_calls),
        ("search", search_call),
        ("snapshot", snapshot_call),
    ):
        if call is not None:
            _check_placeholders(kind, call)
    if scope == "process":
        mode: Literal["argument", "process", "none"] = "process"
        note = "one server process per entity"
    elif scope == "none":
        mode, note = "none", "turned off in the configuration"
    elif by_argument:
        mode = "argument"
        note = f"{search_call.tool} and every store call carry the entity"
    else:
        mode = "none"
        note = (
            f"{search_call.tool} takes no entity argument, so every entity's memory is "
            "searched together (refused by the conformance check unless leaks are allowed)"
        )
    return ToolMapping(store_calls, search_call, snapshot_call, mode, note, tuple(guessed))


def _check_placeholders(kind: str, call: ToolCall) -> None:
    allowed = PLACEHOLDERS["store_message" if call.each == "message" else kind]
    unknown = sorted(placeholders_in(call.arguments) - allowed)
    if unknown:
        raise MCPMappingError(
            f"mcp {kind} {call.tool}: unknown placeholder(s) "
            f"{', '.join('{' + u + '}' for u in unknown)}; allowed: "
            f"{', '.join('{' + a + '}' for a in sorted(allowed))}"
        )
