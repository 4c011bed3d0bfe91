"""The Letta adapter's wire behaviour, through the real client, against a loopback Letta.

The fake server implements the v1 routes the adapter uses, with the shapes of the client's own
types (``letta_client.types``): its health (the server's version), agent creation,
archival-memory inserts (listed only after a short indexing delay, counted in looks), the
archive's list and its search, each over one agent's own archive. Faults: 429 with
``Retry-After``, 500, an archive that never lists.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.adapters.letta import LettaMemory

from ._loopback import (
    Loopback,
    Reply,
    Request,
    gate_cell,
    passes_the_check,
    scoping_answers,
    serve,
    session,
    words,
)

KEY = "letta-test-key-0123456789"
VERSION = "0.16.7"


class FakeLetta:
    """Agents and their archives; an insert is listed after ``looks_to_index`` list calls."""

    def __init__(self, looks_to_index: int = 1) -> None:
        self.looks_to_index = looks_to_index
        self.agents: dict[str, dict[str, Any]] = {}
        self.archive: dict[str, list[dict[str, Any]]] = {}
        self.unlisted: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self.never_index = False

    def route(self, request: Request) -> Reply:
        path = request.path.strip("/").split("/")
        if request.method == "GET" and path == ["v1", "health"]:
            return Reply(200, {"status": "ok", "version": VERSION})
        if request.method == "POST" and path == ["v1", "agents"]:
            agent = f"agent-{len(self.agents)}"
            self.agents[agent] = request.body
            return Reply(200, {"id": agent, "name": request.body["name"]})
        agent = path[2]
        if agent not in self.agents:
            return Reply(404, {"detail": f"agent {agent} not found"})
        if path[3:] == ["archival-memory"] and request.method == "POST":
            passage = {
                "id": f"passage-{sum(len(a) for a in self.archive.values())}-{agent}",
                "text": request.body["text"],
                "created_at": request.body.get("created_at"),
                "tags": request.body.get("tags"),
            }
            self.archive.setdefault(agent, []).append(passage)
            self.unlisted.setdefault(agent, []).append((0, passage))
            return Reply(200, [passage])
        if path[3:] == ["archival-memory"] and request.method == "GET":
            return Reply(200, self._listed(agent)[::-1][: int(request.query.get("limit", 50))])
        if path[3:] == ["archival-memory", "search"]:
            found = [
                p for p in self._listed(agent) if words(p["text"]) & words(request.query["query"])
            ][: int(request.query.get("top_k", 10))]
            results = [
                {"id": p["id"], "content": p["text"], "timestamp": p["created_at"]} for p in found
            ]
            return Reply(200, {"count": len(results), "results": results})
        return Reply(404, {"detail": f"no route {request.method} {request.path}"})

    def _listed(self, agent: str) -> list[dict[str, Any]]:
        """The agent's passages that are indexed (a list call is a look that indexes some)."""
        waiting = []
        for looks, passage in self.unlisted.get(agent, []):
            if self.never_index or looks + 1 < self.looks_to_index:
                waiting.append((looks + 1, passage))
        self.unlisted[agent] = waiting
        hidden = {p["id"] for _, p in waiting}
        return [p for p in self.archive.get(agent, []) if p["id"] not in hidden]


@pytest.fixture
def letta(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Loopback, FakeLetta]]:
    fake = FakeLetta()
    monkeypatch.setenv("LETTA_API_KEY", KEY)
    monkeypatch.delenv("LETTA_BASE_URL", raising=False)
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path))
    with serve(fake.route) as server:
        yield server, fake


def _adapter(server: Loopback, **options: Any) -> LettaMemory:
    options.setdefault("retry_delay", 0.01)
    return LettaMemory(base_url=server.url, scenario="ua-t", poll_seconds=0.01, **options)


def test_each_agent_has_its_own_archive(letta: tuple[Loopback, FakeLetta]):
    server, fake = letta
    memory = _adapter(server)

    answers = asyncio.run(scoping_answers(memory))
    assert answers["home"] == "[2027-01-10] principal: I moved to Lisbon for work."
    assert answers["work_private"] == "[2027-02-10] principal: My salary review is on Friday."
    assert answers["home_private"] == "" and answers["stranger"] == ""
    created = server.requests("POST", r"^/v1/agents/?$")
    assert [a.body["name"].rsplit("-", 1)[-1] for a in created] == ["work", "home"]
    assert created[0].body["embedding"] == "openai/text-embedding-3-small"
    inserted = server.requests("POST", r"/archival-memory$")[0].body
    assert inserted == {
        "text": "[2027-01-10] principal: I moved to Lisbon for work.",
        "created_at": "2027-01-10T09:00:00Z",
        "tags": ["s1"],
    }
    assert {r.headers["authorization"] for r in server.log} == {f"Bearer {KEY}"}
    assert KEY not in json.dumps(memory.service_info())
    assert len(fake.agents) == 2


def test_rate_limits_and_server_errors_are_retried_and_reported(letta: tuple[Loopback, FakeLetta]):
    server, _ = letta
    memory = _adapter(server)
    server.refuse(
        "POST",
        r"/archival-memory$",
        Reply(429, {"detail": "slow down"}, {"retry-after": "0"}),
        Reply(500, {"detail": "oops"}),
    )

    async def go() -> None:
        await memory.store("s1", session("2027-01-10T09:00:00", "Hi.", "w"), entity_id="w")

    asyncio.run(go())
    assert memory.drain_retries() == [
        "insert passage of s1 for w: HTTP 429; retry 1 of 3 after 0s",
        "insert passage of s1 for w: HTTP 500; retry 2 of 3 after 0.02s",
    ]


def test_indexing_is_waited_for_and_an_archive_that_never_lists_is_a_fault(
    letta: tuple[Loopback, FakeLetta],
):
    server, fake = letta
    fake.looks_to_index = 3
    memory = _adapter(server, queryable_limit_seconds=0.3)

    async def go() -> None:
        await memory.store("s1", session("2027-01-10T09:00:00", "I moved.", "w"), entity_id="w")
        await memory.wait_until_queryable("s1")

    asyncio.run(go())
    assert len(server.requests("GET", r"/archival-memory$")) == 3
    fake.never_index = True

    async def never() -> None:
        await memory.store("s2", session("2027-02-10T09:00:00", "Hello.", "w"), entity_id="w")
        await memory.wait_until_queryable("s2")

    with pytest.raises(TimeoutError, match=r"letta passage passage-\S+ of s2: not done after"):
        asyncio.run(never())


def test_letta_cloud_needs_its_key_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LETTA_API_KEY", raising=False)
    monkeypatch.delenv("LETTA_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="letta: set LETTA_API_KEY to the Letta API key"):
        LettaMemory()


def test_under_the_gate_letta_is_a_cloud_arm_scoped_per_agent(
    letta: tuple[Loopback, FakeLetta], two_agent_world: tuple[Path, str]
):
    server, fake = letta
    cell = gate_cell("letta", two_agent_world, {"base_url": server.url}, ("LETTA_API_KEY", KEY))
    assert cell.service["sdk_version"] == "1.12.1"
    assert cell.service["service_version"] == VERSION  # asked of the server during the run
    assert len(fake.agents) == 4  # two agents in each of two replicates


def test_it_passes_the_conformance_check_a_run_starts_with(letta: tuple[Loopback, FakeLetta]):
    server, fake = letta
    passes_the_check(
        "letta",
        {"base_url": server.url},
        "LETTA_API_KEY",
        KEY,
    )
    assert len(fake.agents) == 2  # an agent (and its own archive) per agent of the check
