"""The Honcho adapter's wire behaviour, through the real SDK, against a loopback Honcho.

The fake service implements the v3 routes the adapter uses, with the request and response
shapes of the SDK's own types (``honcho.api_types``): workspaces, peers, sessions with per-peer
observation, messages, the deriver's queue (which drains a few units per look, so processing
is slow), and peer chat and context over what each peer has derived (only from sessions it
observed). Faults: 429 with ``Retry-After``, 503, and a queue that never drains.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.adapters.honcho import HonchoMemory
from drift_pipeline.memory import check_script

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

KEY = "hk-test-0123456789abcdef"
NOW = "2027-01-04T09:00:00Z"


class FakeHoncho:
    """The service's state: what each workspace holds, and what its deriver has derived."""

    def __init__(self, units_per_look: int = 4) -> None:
        self.units_per_look = units_per_look
        self.sessions: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.messages: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.pending: dict[tuple[str, str], int] = {}
        self.derived: dict[tuple[str, str, str], list[str]] = {}
        self.stuck = False

    def route(self, request: Request) -> Reply:
        parts = request.path.strip("/").split("/")
        assert parts[0] == "v3" and parts[1] == "workspaces", request.path
        if len(parts) == 2:
            return Reply(200, {"id": request.body["id"], "metadata": {}, "created_at": NOW})
        workspace, rest = parts[2], parts[3:]
        if rest == ["peers"]:
            return Reply(200, _peer(workspace, request.body["id"]))
        if rest == ["sessions"]:
            key = (workspace, request.body["id"])
            self.sessions.setdefault(key, {}).update(request.body.get("peers") or {})
            return Reply(200, _session(workspace, request.body["id"]))
        if len(rest) == 3 and rest[0] == "sessions" and rest[2] == "messages":
            return self._add(workspace, rest[1], request.body["messages"])
        if rest == ["queue", "status"]:
            return self._look(workspace, request.query["session_id"])
        if len(rest) == 3 and rest[0] == "peers" and rest[2] == "chat":
            lines = self._known(workspace, rest[1], request.body.get("target"))
            found = [line for line in lines if words(line) & words(request.body["query"])]
            return Reply(200, {"content": " ".join(found) or None})
        if len(rest) == 3 and rest[0] == "peers" and rest[2] == "context":
            lines = self._known(workspace, rest[1], request.query.get("target"))
            return Reply(
                200,
                {
                    "peer_id": rest[1],
                    "target_id": request.query.get("target"),
                    "representation": "\n".join(lines),
                },
            )
        return Reply(404, {"detail": f"no route {request.method} {request.path}"})

    def _add(self, workspace: str, session: str, messages: list[dict[str, Any]]) -> Reply:
        key = (workspace, session)
        if key not in self.sessions:
            return Reply(404, {"detail": f"session {session} not found"})
        self.messages.setdefault(key, []).extend(messages)
        self.pending[key] = self.pending.get(key, 0) + len(messages)
        answer = [
            {
                "id": f"m{n}",
                "content": m["content"],
                "peer_id": m["peer_id"],
                "session_id": session,
                "metadata": m.get("metadata") or {},
                "created_at": m.get("created_at") or NOW,
                "workspace_id": workspace,
                "token_count": len(m["content"].split()),
            }
            for n, m in enumerate(messages)
        ]
        return Reply(200, answer)

    def _look(self, workspace: str, session: str) -> Reply:
        key = (workspace, session)
        pending = self.pending.get(key, 0)
        working = 0 if self.stuck else min(pending, self.units_per_look)
        if not self.stuck:
            self.pending[key] = pending - working
            if self.pending[key] == 0 and pending:
                self._derive(key)
        total = len(self.messages.get(key, []))
        left = self.pending.get(key, 0)
        return Reply(
            200,
            {
                "total_work_units": total,
                "completed_work_units": total - left,
                "in_progress_work_units": working if left else 0,
                "pending_work_units": left,
            },
        )

    def _derive(self, key: tuple[str, str]) -> None:
        """What each observing peer of a session learns of the others, once processed."""
        workspace = key[0]
        for observer, config in self.sessions[key].items():
            if not config.get("observe_others"):
                continue
            for message in self.messages[key]:
                if message["peer_id"] != observer:
                    target = message["peer_id"]
                    self.derived.setdefault((workspace, observer, target), []).append(
                        f"[{message['created_at'][:10]}] {message['content']}"
                    )

    def _known(self, workspace: str, peer: str, target: str | None) -> list[str]:
        return self.derived.get((workspace, peer, target or peer), [])


def _peer(workspace: str, peer: str) -> dict[str, Any]:
    return {"id": peer, "workspace_id": workspace, "created_at": NOW, "metadata": {}}


def _session(workspace: str, session: str) -> dict[str, Any]:
    return {"id": session, "is_active": True, "workspace_id": workspace, "created_at": NOW}


@pytest.fixture
def honcho(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[tuple[Loopback, FakeHoncho]]:
    fake = FakeHoncho()
    monkeypatch.setenv("HONCHO_API_KEY", KEY)
    monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path))
    with serve(fake.route) as server:
        yield server, fake


def _adapter(server: Loopback, **options: Any) -> HonchoMemory:
    options.setdefault("retry_delay", 0.01)
    return HonchoMemory(base_url=server.url, scenario="ua-t", poll_seconds=0.01, **options)


def test_each_agent_reads_only_what_it_took_part_in(honcho: tuple[Loopback, FakeHoncho]):
    server, _ = honcho
    memory = _adapter(server)

    answers = asyncio.run(scoping_answers(memory))
    assert "Lisbon" in answers["work"] and "Lisbon" in answers["home"]
    assert "salary" in answers["work_private"]
    assert answers["home_private"] == "" and answers["stranger"] == ""
    # The mapping: one workspace named after the scenario, peers per speaker, the agents
    # observing the others, messages with their speaker's peer and the session's time.
    sessions = server.requests("POST", r"/sessions$")
    assert len(sessions) == 2  # each session added once, however many agents it went to
    assert sessions[0].body["peers"] == {
        "principal": {"observe_others": False, "observe_me": True},
        "work": {"observe_others": True, "observe_me": True},
        "home": {"observe_others": True, "observe_me": True},
    }
    workspace = sessions[0].path.split("/")[3]
    assert workspace.startswith("drift-ua-t-") and workspace == memory.workspace
    added = server.requests("POST", r"/sessions/s1/messages$")[0].body["messages"]
    assert added[0]["peer_id"] == "principal"
    assert dt.datetime.fromisoformat(added[0]["created_at"]) == dt.datetime(
        2027, 1, 10, 9, tzinfo=dt.UTC
    )
    chat = server.requests("POST", r"/peers/work/chat$")[0]
    assert chat.body["target"] == "principal" and chat.body["reasoning_level"] == "low"
    # The key travels only in the Authorization header; it is in no record of the adapter.
    assert {r.headers["authorization"] for r in server.log} == {f"Bearer {KEY}"}
    assert KEY not in json.dumps(memory.service_info())
    assert all(KEY not in p.read_text() for p in Path(memory._names._path).parent.iterdir())


def test_a_restarted_worker_still_reads_about_everyone_its_agent_met(
    honcho: tuple[Loopback, FakeHoncho],
):
    server, _ = honcho

    async def before_the_restart() -> str:
        memory = _adapter(server)
        moved = session("2027-01-10T09:00:00", "I moved to Lisbon for work.", "work")
        await memory.store("s1", moved, entity_id="work")
        await memory.wait_until_queryable("s1")
        return memory.workspace

    workspace = asyncio.run(before_the_restart())
    # The worker is restarted (a timeout, a crash): the adapter is built again, as it is there.
    again = _adapter(server)
    assert again.workspace == workspace
    assert "Lisbon" in asyncio.run(again.retrieve("s2", "work", "Where did the principal move?"))


def test_the_context_read_returns_the_peers_representation(honcho: tuple[Loopback, FakeHoncho]):
    server, _ = honcho
    memory = _adapter(server, read="context")

    async def go() -> str:
        pixel = session("2027-01-10T09:00:00", "I adopted a greyhound named Pixel.", "work")
        await memory.store("s1", pixel, entity_id="work")
        await memory.wait_until_queryable("s1")
        return await memory.retrieve("s1", "work", "What is the dog called?")

    assert "greyhound named Pixel" in asyncio.run(go())
    assert server.requests("GET", r"/peers/work/context$")[0].query["search_query"] == (
        "What is the dog called?"
    )


def test_rate_limits_and_server_errors_are_retried_and_reported(
    honcho: tuple[Loopback, FakeHoncho],
):
    server, _ = honcho
    memory = _adapter(server)
    server.refuse(
        "POST",
        r"/messages$",
        Reply(429, {"detail": "rate limited"}, {"retry-after": "0"}),
        Reply(503, {"detail": "try later"}),
    )

    async def go() -> list[str]:
        moved = session("2027-01-10T09:00:00", "I moved to Lisbon.", "work")
        await memory.store("s1", moved, entity_id="work")
        return memory.drain_retries()

    notes = asyncio.run(go())
    assert notes == [
        "add messages to s1: HTTP 429; retry 1 of 3 after 0s",
        "add messages to s1: HTTP 503; retry 2 of 3 after 0.02s",
    ]
    assert len(server.requests("POST", r"/messages$")) == 3
    assert memory.drain_retries() == []  # drained


def test_a_service_that_keeps_failing_raises_its_own_error(honcho: tuple[Loopback, FakeHoncho]):
    server, _ = honcho
    memory = _adapter(server, attempts=2)
    server.refuse("POST", r"/messages$", *[Reply(500, {"detail": "boom"})] * 2)

    async def go() -> None:
        await memory.store(
            "s1", session("2027-01-10T09:00:00", "I moved.", "work"), entity_id="work"
        )

    with pytest.raises(Exception, match="boom") as caught:
        asyncio.run(go())
    assert type(caught.value).__name__ == "ServerError"
    assert memory.drain_retries() == ["add messages to s1: HTTP 500; retry 1 of 1 after 0.01s"]


def test_slow_processing_is_waited_for_and_a_stuck_queue_is_a_fault(
    honcho: tuple[Loopback, FakeHoncho],
):
    server, fake = honcho
    memory = _adapter(server, queryable_limit_seconds=0.3)
    long_session = session("2027-01-10T09:00:00", "I moved to Lisbon.", "work") * 6  # 12 messages

    async def before_and_after() -> tuple[str, str]:
        await memory.store("s1", long_session, entity_id="work")
        early = await memory.retrieve("s1", "work", "Where did I move?")
        await memory.wait_until_queryable("s1")
        return early, await memory.retrieve("s1", "work", "Where did I move?")

    early, late = asyncio.run(before_and_after())
    assert early == "" and "Lisbon" in late  # found only once the deriver drained the queue
    assert len(server.requests("GET", r"/queue/status$")) == 3  # 12 units, 4 per look
    fake.stuck = True

    async def stuck() -> None:
        await memory.store("s2", session("2027-02-10T09:00:00", "Hi.", "work"), entity_id="work")
        await memory.wait_until_queryable("s2")

    with pytest.raises(TimeoutError, match=r"honcho deriver queue of s2: not done after 0\.3s"):
        asyncio.run(stuck())


def test_the_hosted_service_needs_its_key_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("HONCHO_API_KEY", raising=False)
    monkeypatch.delenv("HONCHO_URL", raising=False)
    with pytest.raises(ValueError, match="honcho: set HONCHO_API_KEY to the Honcho API key"):
        HonchoMemory()


def test_under_the_gate_honcho_is_a_cloud_arm_with_its_waits_retries_and_versions(
    honcho: tuple[Loopback, FakeHoncho], two_agent_world: tuple[Path, str]
):
    server, _ = honcho
    server.refuse("POST", r"/messages$", Reply(429, {"detail": "slow down"}, {"retry-after": "0"}))
    cell = gate_cell("honcho", two_agent_world, {"base_url": server.url}, ("HONCHO_API_KEY", KEY))
    assert cell.service["sdk_version"] == "2.7.0"
    assert [f for f in cell.faults if "retried: add messages" in f]
    assert cell.fault_summary.retried["store"] == 1


def test_it_passes_the_conformance_check_a_run_starts_with(honcho: tuple[Loopback, FakeHoncho]):
    server, fake = honcho
    passes_the_check(
        "honcho",
        {"base_url": server.url},
        "HONCHO_API_KEY",
        KEY,
    )
    # Each agent's peer learned its own fact, from the user it met: nothing of the other's.
    learned = {observer: lines for (_, observer, _), lines in fake.derived.items()}
    script = check_script()
    (a, b), token = script.entities, script.fact_a.token
    assert token in " ".join(learned[a])
    assert token not in " ".join(learned[b])
