"""An MCP server's tools as the ``mcp`` backend reads them, and its calls to them as templates.

A call is a tool and its arguments as a template whose strings hold placeholders, filled in for
each call; where a configuration names no argument, the argument is read off the tool's input
schema by common names (``content``, ``query``, ``user_id``…).

Placeholders (a string that is exactly one placeholder takes its value as it is, a list for
``{lines}``; inside longer text it is written in):

- everywhere: ``{entity}`` (whose memory: the entity stored for or asking), ``{session_id}``;
- ``store``: ``{text}`` (the session, one ``timestamp speaker: content`` line per message),
  ``{lines}`` (those lines as a list), ``{messages}`` (a list of ``{role, content}``),
  ``{timestamp}`` (the session's time); with ``each: message``, one call per message with
  ``{content}``, ``{role}``, ``{speaker}``, ``{timestamp}`` and ``{line}``;
- ``search``: ``{query}``;
- ``snapshot``: ``{entity}`` (called once per entity stored so far) or nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "PLACEHOLDERS",
    "QUERY_ARGUMENTS",
    "SCOPE_ARGUMENTS",
    "TEXT_ARGUMENTS",
    "MCPMappingError",
    "ToolCall",
    "ToolInfo",
    "fill",
    "pick",
    "placeholders_in",
    "short_form",
]

TEXT_ARGUMENTS = (
    "content",
    "text",
    "memory",
    "information",
    "message",
    "data",
    "note",
    "fact",
    "observation",
    "body",
    "value",
)
QUERY_ARGUMENTS = ("query", "q", "text", "search", "question", "keywords", "prompt")
SCOPE_ARGUMENTS = (
    "user_id",
    "userId",
    "entity_id",
    "entityId",
    "agent_id",
    "agentId",
    "user",
    "owner",
    "namespace",
)
"""Arguments that name whose memory a call is about, by common name."""

PLACEHOLDERS: Mapping[str, frozenset[str]] = {
    "store": frozenset({"entity", "session_id", "text", "lines", "messages", "timestamp"}),
    "store_message": frozenset(
        {"entity", "session_id", "content", "role", "speaker", "timestamp", "line"}
    ),
    "search": frozenset({"entity", "session_id", "query"}),
    "snapshot": frozenset({"entity"}),
}
"""The placeholders each kind of call may use."""

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class MCPMappingError(ValueError):
    """A mapping that cannot work with this server: one line naming the part and the fix."""


@dataclass(frozen=True)
class ToolInfo:
    """A tool as the server lists it: its name and the JSON Schema of its input."""

    name: str
    input_schema: Mapping[str, Any] = field(default_factory=dict)

    @property
    def properties(self) -> Mapping[str, Any]:
        """The schema's top-level properties."""
        props = self.input_schema.get("properties")
        return props if isinstance(props, Mapping) else {}

    @property
    def required(self) -> tuple[str, ...]:
        """The schema's required property names."""
        return tuple(str(n) for n in self.input_schema.get("required") or ())

    def string_properties(self) -> list[str]:
        """Top-level properties typed as strings (or left untyped), in schema order."""
        return [
            name
            for name, schema in self.properties.items()
            if isinstance(schema, Mapping) and schema.get("type", "string") == "string"
        ]


@dataclass(frozen=True)
class ToolCall:
    """One tool call as a template: its arguments hold placeholders that each call fills.

    Attributes:
        tool: The tool's name.
        arguments: The arguments, with placeholders in their strings.
        each: ``session`` (one call per stored session) or ``message`` (one per message); only
            for store calls.
    """

    tool: str
    arguments: Mapping[str, Any]
    each: Literal["session", "message"] = "session"

    def describe(self) -> str:
        """``tool(name=value, …)`` with the templates as written, for the run record."""
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.arguments.items())
        suffix = " per message" if self.each == "message" else ""
        return f"{self.tool}({shown}){suffix}"

    def uses(self, name: str) -> bool:
        """Whether the placeholder ``{name}`` occurs anywhere in the arguments."""
        return name in placeholders_in(self.arguments)


def _short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def placeholders_in(value: Any) -> set[str]:
    """Every ``{name}`` placeholder in a template (strings inside lists and mappings too)."""
    if isinstance(value, str):
        return set(_PLACEHOLDER.findall(value))
    if isinstance(value, Mapping):
        return {name for item in value.values() for name in placeholders_in(item)}
    if isinstance(value, list | tuple):
        return {name for item in value for name in placeholders_in(item)}
    return set()


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """The template with its placeholders replaced by ``values``.

    A string that is exactly one placeholder becomes the value itself (a list stays a list);
    placeholders inside longer strings are written in as text.
    """
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole is not None:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
    if isinstance(template, Mapping):
        return {key: fill(item, values) for key, item in template.items()}
    if isinstance(template, list | tuple):
        return [fill(item, values) for item in template]
    return template


# --- arguments read off a tool's schema ---------------------------------------------------------


def short_form(kind: str, tool: ToolInfo, given: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments of a ``store`` or ``search`` call from the short form of its configuration.

    The argument names given (``text`` or ``query``, ``scope``, ``limit``), the rest read off
    the tool's schema; ``{}`` for a guessed call.

    Raises:
        MCPMappingError: No argument of the tool can be told to take the text or query.
    """
    arguments: dict[str, Any] = {}
    filled = "{text}" if kind == "store" else "{query}"
    main = given.get("text" if kind == "store" else "query") or _main_argument(kind, tool)
    arguments[str(main)] = filled
    scope = given.get("scope", pick(tool.string_properties(), SCOPE_ARGUMENTS))
    if scope:
        arguments[str(scope)] = "{entity}"
    if kind == "search" and given.get("limit") is not None:
        limit_name = pick(list(tool.properties), ("limit", "top_k", "k", "max_results", "n"))
        if limit_name is None:
            raise MCPMappingError(
                f"mcp search: {tool.name} takes no limit argument (limit, top_k, k, max_results)"
            )
        arguments[limit_name] = int(given["limit"])
    return arguments


def _main_argument(kind: str, tool: ToolInfo) -> str:
    """The argument that carries the stored text (store) or the query (search)."""
    candidates = TEXT_ARGUMENTS if kind == "store" else QUERY_ARGUMENTS
    strings = tool.string_properties()
    found = pick(strings, candidates)
    if found is None:
        required = [name for name in tool.required if name in strings]
        scopes = set(SCOPE_ARGUMENTS)
        unscoped = [name for name in required if name not in scopes]
        if len(unscoped) == 1:
            return unscoped[0]
        what = "text" if kind == "store" else "query"
        raise MCPMappingError(
            f"mcp {kind}: cannot tell which argument of {tool.name} takes the {what} "
            f"(it has {', '.join(tool.properties) or 'none'}); give {kind}: "
            f"{{tool: {tool.name}, {what}: NAME}}"
        )
    return found


def pick(names: Sequence[str], candidates: Sequence[str]) -> str | None:
    """The first of ``candidates`` among ``names`` (case-insensitive), as ``names`` spells it."""
    by_lower = {name.lower(): name for name in names}
    for candidate in candidates:
        if candidate.lower() in by_lower:
            return by_lower[candidate.lower()]
    return None
