"""A memory server written by others, from the npm registry, under the gate through ``mcp``.

``@modelcontextprotocol/server-memory`` (the reference knowledge-graph server) is installed by
the ``memory_server`` fixture from the pinned lock file and started by the adapter with the
machine's Node.js, once per replicate, each with its own memory file in its worker's folder.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.adapters.mcp_backend import MCPSnapshotBackend, mcp_backend
from drift_pipeline.memory import Message

from .test_mcp_backend import run_under_the_gate, running

OPEN_OWN_NODE = {"tool": "open_nodes", "arguments": {"names": ["{entity}"]}}
"""Read the asking entity's own node: scoped per entity, the way agents use this server."""


def options(server: Path, **extra: Any) -> dict[str, Any]:
    """Start the installed server with its memory file in the worker's own folder."""
    return {
        "command": ["node", str(server)],
        "env": {"MEMORY_FILE_PATH": "{state_dir}/memory.jsonl"},
        **extra,
    }


def test_its_tools_are_recognised_and_the_guesses_recorded(
    memory_server: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path))
    session: list[Message] = [
        {
            "speaker": "principal",
            "role": "user",
            "content": "I adopted a greyhound.",
            "timestamp": "2027-05-02T10:00:00",
        },
    ]
    backend = mcp_backend(**options(memory_server))
    try:
        assert isinstance(backend, MCPSnapshotBackend)
        info = backend.service_info()
        assert info["service"] == "memory-server"
        assert info["service_version"] not in ("", "unknown")
        assert info["search"] == "search_nodes(query={query})"
        assert info["store"].startswith("create_entities(") and "add_observations(" in info["store"]
        assert info["snapshot"] == "read_graph()"
        assert info["scope"].startswith("none:")
        assert info["guessed"] == "store, search, snapshot"
        asyncio.run(backend.store("s-0", session))
        # Its search matches the query as one substring: a keyword finds, a question does not.
        found = asyncio.run(backend.retrieve("s-0", "assistant", "greyhound"))
        assert "2027-05-02T10:00:00 principal: I adopted a greyhound." in found
        assert "greyhound" not in asyncio.run(
            backend.retrieve("s-0", "assistant", "Which dog did she adopt?")
        )
        # Nothing keeps entities apart, so the session went into one shared memory, once.
        graph = json.loads(backend.snapshot())
        assert [entity["name"] for entity in graph["entities"]] == ["shared"]
        assert (tmp_path / "memory.jsonl").is_file()
    finally:
        backend.close()
    assert running(str(memory_server)) == []


def test_scope_process_gives_each_entity_a_server_and_a_file_of_its_own(
    memory_server: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path))
    own_file = {"MEMORY_FILE_PATH": "{state_dir}/memory-{entity}.jsonl"}
    backend = mcp_backend(**options(memory_server, env=own_file), scope="process")
    said: list[Message] = [
        {
            "speaker": "principal",
            "role": "user",
            "content": "My greyhound is Juno.",
            "timestamp": "2027-05-03T09:00:00",
        },
    ]

    async def calls() -> tuple[str, str]:
        await backend.store("s-1", said)
        return (
            await backend.retrieve("s-1", "principal", "Juno"),
            await backend.retrieve("s-1", "assistant", "Juno"),
        )

    try:
        own, other = asyncio.run(calls())
        assert "My greyhound is Juno." in own
        assert "Juno" not in other  # the assistant's own server holds nothing of it
        assert backend.service_info()["scope"] == "process: one server process per entity"
        assert sorted(p.name for p in tmp_path.glob("memory-*.jsonl")) == ["memory-principal.jsonl"]
        assert len(running(str(memory_server))) == 2
        # The snapshot lists every entity's own server.
        assert isinstance(backend, MCPSnapshotBackend)
        assert "My greyhound is Juno." in backend.snapshot()
    finally:
        backend.close()
    assert running(str(memory_server)) == []
    # A restarted worker builds the backend again: its snapshot still lists the memory stored
    # before, starting that entity's server from its file.
    again = mcp_backend(**options(memory_server, env=own_file), scope="process")
    try:
        assert "My greyhound is Juno." in again.snapshot()
    finally:
        again.close()
    assert running(str(memory_server)) == []


def test_it_runs_under_the_gate_and_is_ranked(memory_server: Path, tmp_path: Path) -> None:
    report = run_under_the_gate(tmp_path, options(memory_server, search=OPEN_OWN_NODE))
    assert report.faults == []
    cell = next(c for c in report.cells if c.arm.backend == "mcp")
    assert cell.valid
    assert [(r.arm, r.valid) for r in report.standings] == [("mcp@hard", True)]
    arms = report.to_dict()["arms"]
    assert [(a["arm"], a["rank"]) for a in arms] == [("mcp@hard", 1)]
    figures = {m.metric: m.value for m in cell.metrics.rows if m.checkpoint is None}
    assert figures["mvot"] is not None
    assert figures["selectivity"] is not None  # read_graph is its snapshot: storage measured
    assert "mcp@hard" in report.leaderboard()
    assert "not ranked" not in report.leaderboard()
    assert running(str(memory_server)) == []
