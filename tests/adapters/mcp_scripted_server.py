"""A small keyword memory served over MCP, with faults on request, for the ``mcp`` adapter tests.

``python mcp_scripted_server.py`` serves over stdio; ``--http PORT`` over Streamable HTTP on
127.0.0.1. Its tools follow the common memory-server names (``remember`` / ``recall`` /
``list_memories``, each taking ``user_id``), so the adapter's guesses are exercised.

Faults, from ``SCRIPTED_MCP_FAULTS`` (comma-separated):
- ``error_on=TEXT``: a call whose text or query contains TEXT answers with a tool error (with
  ``error_after=N``, only once N calls have been answered: a library that starts failing
  part-way through a run);
- ``crash_after=N``: the process exits during its N-th ``remember``;
- ``hang_on=TEXT``: a ``recall`` whose query contains TEXT never answers (others still do).
"""

from __future__ import annotations

import os
import re
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

FAULTS = dict(
    [*item.split("=", 1), ""][:2]
    for item in os.environ.get("SCRIPTED_MCP_FAULTS", "").split(",")
    if item
)
server = MCPServer("scripted-memory", version="3.1.4")
memories: dict[str, list[str]] = {}
stores = 0
calls = 0


def _check(text: str) -> None:
    global calls
    calls += 1
    trigger = FAULTS.get("error_on")
    if trigger and trigger in text and calls > int(FAULTS.get("error_after") or 0):
        raise ToolError(f"syntax error in query near {trigger!r}")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def _remember(content: str, user_id: str) -> str:
    global stores
    stores += 1
    if FAULTS.get("crash_after") and stores >= int(FAULTS["crash_after"]):
        os._exit(3)
    _check(content)
    memories.setdefault(user_id, []).extend(content.splitlines())
    return f"stored {len(content.splitlines())} lines for {user_id}"


async def _recall(query: str, user_id: str) -> str:
    _check(query)
    if FAULTS.get("hang_on") and FAULTS["hang_on"] in query:
        await anyio.sleep(3600)  # this call never answers; the others still do
    wanted = _words(query)
    hits = [line for line in reversed(memories.get(user_id, [])) if wanted & _words(line)]
    return "\n".join(hits[:8])


@server.tool()
def remember(content: str, user_id: str) -> str:
    """Store a memory for a user."""
    return _remember(content, user_id)


@server.tool()
async def recall(query: str, user_id: str) -> str:
    """Find a user's memories sharing a word with the query."""
    return await _recall(query, user_id)


@server.tool()
def list_memories(user_id: str) -> str:
    """Every memory of a user."""
    return "\n".join(memories.get(user_id, []))


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
