"""The Zep adapter's wire behaviour, through the real SDK, against a loopback Zep.

The fake service implements the v4 routes the adapter uses, with the shapes of the SDK's own
types (``zep_cloud.types``): users and threads with server-assigned uuids, messages whose
extraction runs as a task (processing for a few looks before it succeeds), and edge search over
each user's own graph. Faults: 429 with ``Retry-After``, 502, a task that fails.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.adapters.zep import ZepMemory

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

KEY = "z_test_key_0123456789"


class FakeZep:
    """Users, threads, tasks and each user's graph of facts."""

    def __init__(self, looks_per_task: int = 2) -> None:
        self.looks_per_task = looks_per_task
        self.users: dict[str, dict[str, Any]] = {}
        self.threads: dict[str, str] = {}  # thread uuid -> user uuid
        self.tasks: dict[str, dict[str, Any]] = {}
        self.graph: dict[str, list[dict[str, Any]]] = {}  # user uuid -> edges
        self.fail_tasks = False

    def route(self, request: Request) -> Reply:
        path = request.path.removeprefix("/api/v4/").split("/")
        if request.method == "POST" and path == ["users"]:
            uuid = f"user-{len(self.users)}"
            self.users[uuid] = {"uuid": uuid, **{k: v for k, v in request.body.items() if v}}
            return Reply(201, self.users[uuid])
        if request.method == "POST" and path == ["threads"]:
            uuid = f"thread-{len(self.threads)}"
            self.threads[uuid] = request.body["user_uuid"]
            return Reply(201, {"uuid": uuid, "user_uuid": request.body["user_uuid"]})
        if request.method == "POST" and path[0] == "threads" and path[2:] == ["messages"]:
            return self._add(path[1], request.body["messages"])
        if request.method == "GET" and path[0] == "tasks":
            return self._look(path[1])
        if request.method == "POST" and path[0] == "graphs" and path[2:] == ["search", "edges"]:
            edges = [
                edge
                for edge in self.graph.get(path[1], [])
                if words(edge["said"]) & words(request.body["query"])
            ]
            size = int(request.query.get("page_size") or 10)
            return Reply(200, {"items": edges[:size], "next_cursor": None})
        return Reply(404, {"message": f"no route {request.method} {request.path}"})

    def _add(self, thread: str, messages: list[dict[str, Any]]) -> Reply:
        user = self.threads[thread]
        uuid = f"task-{len(self.tasks)}"
        self.tasks[uuid] = {"user": user, "messages": messages, "looks": 0}
        return Reply(202, {"task": {"uuid": uuid, "status": "pending"}})

    def _look(self, uuid: str) -> Reply:
        task = self.tasks[uuid]
        task["looks"] += 1
        if self.fail_tasks:
            return Reply(200, {"uuid": uuid, "status": "failed", "error": {"message": "LLM down"}})
        if task["looks"] < self.looks_per_task:
            return Reply(200, {"uuid": uuid, "status": "processing"})
        if not task.get("done"):
            task["done"] = True
            for message in task["messages"]:
                self.graph.setdefault(task["user"], []).append(
                    {
                        "uuid": f"edge-{message['name']}",
                        "fact": f"{message['name']} said: {message['content']}",
                        "said": message["content"],
                        "valid_at": message.get("reference_time"),
                        "invalid_at": None,
                    }
                )
        return Reply(200, {"uuid": uuid, "status": "succeeded"})


@pytest.fixture
def zep(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Loopback, FakeZep]]:
    fake = FakeZep()
    monkeypatch.setenv("ZEP_API_KEY", KEY)
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path))
    with serve(fake.route) as server:
        yield server, fake


def _adapter(server: Loopback, **options: Any) -> ZepMemory:
    options.setdefault("retry_delay", 0.01)
    return ZepMemory(base_url=f"{server.url}/api/v4", scenario="ua-t", poll_seconds=0.01, **options)


def test_each_agent_is_a_user_whose_graph_holds_only_its_sessions(zep: tuple[Loopback, FakeZep]):
    server, _ = zep
    memory = _adapter(server)

    answers = asyncio.run(scoping_answers(memory))
    assert answers["work"] == "principal said: I moved to Lisbon for work. (valid 2027-01-10)"
    assert "salary review" in answers["work_private"]
    assert answers["home_private"] == "" and answers["stranger"] == ""
    users = server.requests("POST", r"/users$")
    assert [u.body["first_name"] for u in users] == ["work", "home"]
    assert users[0].body["user_id"].startswith("drift-ua-t-")
    added = server.requests("POST", r"/messages$")[0].body["messages"]
    assert added[0] == {
        "content": "I moved to Lisbon for work.",
        "role": "user",
        "name": "principal",
        "reference_time": "2027-01-10T09:00:00Z",
    }
    assert len(server.requests("POST", r"/threads$")) == 3  # a thread per agent and session
    assert {r.headers["authorization"] for r in server.log} == {f"Api-Key {KEY}"}
    assert KEY not in json.dumps(memory.service_info())


def test_queries_are_cut_to_what_the_search_takes(zep: tuple[Loopback, FakeZep]):
    server, _ = zep
    memory = _adapter(server)

    async def go() -> None:
        await memory.store("s1", session("2027-01-10T09:00:00", "Hi.", "work"), entity_id="work")
        await memory.retrieve("s1", "work", "word " * 200)

    asyncio.run(go())
    assert len(server.requests("POST", r"/search/edges$")[0].body["query"]) == 400


def test_rate_limits_and_server_errors_are_retried_and_reported(zep: tuple[Loopback, FakeZep]):
    server, _ = zep
    memory = _adapter(server)
    server.refuse(
        "POST",
        r"/search/edges$",
        Reply(429, {"message": "rate limited"}, {"retry-after": "0"}),
        Reply(502, {"message": "bad gateway"}),
    )

    async def go() -> str:
        await memory.store(
            "s1", session("2027-01-10T09:00:00", "I moved to Lisbon.", "w"), entity_id="w"
        )
        await memory.wait_until_queryable("s1")
        return await memory.retrieve("s1", "w", "Where did I move?")

    assert "Lisbon" in asyncio.run(go())
    assert memory.drain_retries() == [
        "search edges as w: HTTP 429; retry 1 of 3 after 0s",
        "search edges as w: HTTP 502; retry 2 of 3 after 0.02s",
    ]


def test_extraction_is_waited_for_and_a_failed_task_is_a_fault(zep: tuple[Loopback, FakeZep]):
    server, fake = zep
    memory = _adapter(server)

    async def go() -> tuple[str, str]:
        await memory.store(
            "s1", session("2027-01-10T09:00:00", "I moved to Lisbon.", "w"), entity_id="w"
        )
        early = await memory.retrieve("s1", "w", "Where did I move?")
        await memory.wait_until_queryable("s1")
        return early, await memory.retrieve("s1", "w", "Where did I move?")

    early, late = asyncio.run(go())
    assert early == "" and "Lisbon" in late
    assert len(server.requests("GET", r"/tasks/")) == 2  # processing, then succeeded
    fake.fail_tasks = True

    async def failing() -> None:
        await memory.store("s2", session("2027-02-10T09:00:00", "Hello.", "w"), entity_id="w")
        await memory.wait_until_queryable("s2")

    with pytest.raises(RuntimeError, match="zep task task-1 of s2 failed: LLM down"):
        asyncio.run(failing())


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ZEP_API_KEY", raising=False)
    with pytest.raises(ValueError, match="zep: set ZEP_API_KEY to the Zep API key"):
        ZepMemory()


def test_under_the_gate_zep_is_a_cloud_arm_scoped_per_agent(
    zep: tuple[Loopback, FakeZep], two_agent_world: tuple[Path, str]
):
    server, fake = zep
    options = {"base_url": f"{server.url}/api/v4"}
    cell = gate_cell("zep", two_agent_world, options, ("ZEP_API_KEY", KEY))
    assert cell.service["sdk_version"] == "4.0.1"
    # Two agents and two replicates: four users, each with its own graph.
    assert len(fake.users) == 4 and len({u["user_id"] for u in fake.users.values()}) == 4


def test_it_passes_the_conformance_check_a_run_starts_with(zep: tuple[Loopback, FakeZep]):
    server, fake = zep
    passes_the_check(
        "zep",
        {"base_url": f"{server.url}/api/v4"},
        "ZEP_API_KEY",
        KEY,
    )
    assert len(fake.users) == 2  # a user (and its own graph) per agent of the check
