"""The ``mcp`` adapter's tool mapping: configured, short form, guessed from tool lists, filled."""

from __future__ import annotations

from typing import Any

import pytest

from drift_pipeline.adapters.mcp_mapping import (
    MCPMappingError,
    ToolInfo,
    fill,
    resolve_mapping,
)


def tool(
    name: str, *strings: str, required: tuple[str, ...] | None = None, **other: Any
) -> ToolInfo:
    properties: dict[str, Any] = {s: {"type": "string"} for s in strings}
    properties.update({k: {"type": v} for k, v in other.items()})
    return ToolInfo(name, {"properties": properties, "required": list(required or strings)})


KNOWLEDGE_GRAPH = [
    ToolInfo("create_entities", {"properties": {"entities": {"type": "array"}}}),
    ToolInfo("add_observations", {"properties": {"observations": {"type": "array"}}}),
    tool("search_nodes", "query"),
    ToolInfo("open_nodes", {"properties": {"names": {"type": "array"}}}),
    ToolInfo("read_graph", {"properties": {}}),
]
# Shaped like a hosted memory service's MCP server: user-scoped add and search.
USER_SCOPED = [
    tool("add_memory", "text", "user_id", "metadata", required=("text", "user_id")),
    tool("search_memories", "query", "user_id", required=("query",), limit="integer"),
    tool("get_all_memories", "user_id"),
    tool("delete_all_memories", "user_id"),
]


def test_the_reference_knowledge_graph_is_recognised_with_no_scope() -> None:
    mapping = resolve_mapping(KNOWLEDGE_GRAPH)
    assert [c.tool for c in mapping.store] == ["create_entities", "add_observations"]
    assert mapping.search.tool == "search_nodes"
    assert mapping.snapshot is not None and mapping.snapshot.tool == "read_graph"
    assert mapping.scope == "none"
    assert "searched together" in mapping.scope_note
    assert mapping.guessed == ("store", "search", "snapshot")
    shown = mapping.describe()
    assert shown["search"] == "search_nodes(query={query})"
    assert shown["guessed"] == "store, search, snapshot"
    assert '"contents": "{lines}"' in shown["store"]


def test_a_search_that_carries_the_entity_makes_the_knowledge_graph_scoped() -> None:
    mapping = resolve_mapping(
        KNOWLEDGE_GRAPH, search={"tool": "open_nodes", "arguments": {"names": ["{entity}"]}}
    )
    assert mapping.scope == "argument"
    assert mapping.guessed == ("store", "snapshot")
    assert fill(mapping.search.arguments, {"entity": "ana", "query": "q", "session_id": "s"}) == {
        "names": ["ana"]
    }


def test_user_scoped_tools_are_guessed_with_their_arguments() -> None:
    mapping = resolve_mapping(USER_SCOPED)
    assert mapping.store[0].arguments == {"text": "{text}", "user_id": "{entity}"}
    assert mapping.search.arguments == {"query": "{query}", "user_id": "{entity}"}
    assert mapping.snapshot is not None
    assert mapping.snapshot.arguments == {"user_id": "{entity}"}
    assert mapping.scope == "argument"


def test_the_short_form_names_the_arguments_and_a_limit() -> None:
    mapping = resolve_mapping(
        USER_SCOPED,
        store={"tool": "add_memory", "text": "text", "scope": "user_id"},
        search={"tool": "search_memories", "query": "query", "limit": 5},
        snapshot=False,
    )
    assert mapping.search.arguments == {"query": "{query}", "user_id": "{entity}", "limit": 5}
    assert mapping.snapshot is None
    assert mapping.guessed == ()


def test_names_are_guessed_from_verbs_and_memory_words() -> None:
    mapping = resolve_mapping(
        [tool("memorize_fact", "fact"), tool("find_memory_items", "keywords")]
    )
    assert mapping.store[0].tool == "memorize_fact"
    assert mapping.store[0].arguments == {"fact": "{text}"}
    assert mapping.search.tool == "find_memory_items"
    assert mapping.search.arguments == {"keywords": "{query}"}
    assert mapping.scope == "none"


def test_a_lone_required_string_is_the_text() -> None:
    mapping = resolve_mapping([tool("remember", "blob"), tool("recall", "blob")])
    assert mapping.store[0].arguments == {"blob": "{text}"}


def test_one_call_per_message_with_its_placeholders() -> None:
    mapping = resolve_mapping(
        USER_SCOPED,
        store={
            "tool": "add_memory",
            "each": "message",
            "arguments": {"text": "{line}", "user_id": "{entity}", "metadata": "{role}"},
        },
    )
    assert mapping.store[0].each == "message"
    assert mapping.describe()["store"].endswith("per message")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"store": "forget_everything"}, "the server has no tool 'forget_everything'; it lists"),
        (
            {"search": {"tool": "search_memories", "arguments": {"query": "{question}"}}},
            "unknown placeholder(s) {question}",
        ),
        (
            {"store": {"tool": "add_memory", "text": "text", "arguments": {"text": "{text}"}}},
            "give either arguments or the argument names",
        ),
        ({"search": {"tool": "search_memories", "top": 3}}, "unknown key(s) top"),
        ({"search": {"tool": "search_memories", "each": "message"}}, "each must be"),
        ({"scope": "everyone"}, "'everyone' is not one of auto, process, none"),
        ({"store": []}, "the list of store calls is empty"),
        ({"search": 3}, "expected a tool name or a mapping with 'tool'"),
    ],
)
def test_a_mapping_that_cannot_work_is_one_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(MCPMappingError, match=None) as raised:
        resolve_mapping(USER_SCOPED, **kwargs)
    text = str(raised.value)
    assert message in text
    assert "\n" not in text


def test_a_server_without_memory_tools_is_refused_naming_its_tools() -> None:
    with pytest.raises(MCPMappingError, match=r"no tool looks like a store .* lists get_time"):
        resolve_mapping([tool("get_time")])
    with pytest.raises(
        MCPMappingError, match="cannot tell which argument of recall takes the query"
    ):
        resolve_mapping([tool("remember", "text"), tool("recall", "a", "b")])


def test_fill_keeps_lists_whole_and_writes_text_into_strings() -> None:
    values = {"lines": ["a", "b"], "entity": "ana", "session_id": "s-3"}
    template = {"contents": "{lines}", "name": "{entity}", "note": "from {session_id} of {entity}"}
    assert fill(template, values) == {
        "contents": ["a", "b"],
        "name": "ana",
        "note": "from s-3 of ana",
    }
