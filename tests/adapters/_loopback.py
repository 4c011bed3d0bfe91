"""A loopback HTTP server for adapter contract tests: routes in Python, faults on demand.

Each service's test module gives it a ``route(request) -> Reply`` function implementing the
endpoints its adapter uses, after the service's published API (the SDK's own request and
response types). The server runs on 127.0.0.1 in a thread, logs every request, and can be told
to refuse the next requests matching a pattern with given statuses (rate limits, server errors)
before answering normally.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from drift_pipeline.evaluation import token_audit
from drift_pipeline.memory import (
    Arm,
    CellRun,
    ConformanceReport,
    Gate,
    LoopConfig,
    Message,
    check_backend,
    run_cell,
)


@dataclass
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


@dataclass
class Reply:
    """One answer: a status, a JSON body, extra headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Loopback:
    """A running server: its URL, its request log, and the faults still to inject."""

    url: str
    log: list[Request] = field(default_factory=list)
    faults: list[tuple[str, re.Pattern[str], Reply]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refuse(self, method: str, pattern: str, *replies: Reply) -> None:
        """Answer the next requests matching ``method`` and ``pattern`` with ``replies``."""
        with self.lock:
            for reply in replies:
                self.faults.append((method, re.compile(pattern), reply))

    def requests(self, method: str, pattern: str) -> list[Request]:
        """The logged requests matching ``method`` and ``pattern``."""
        found = re.compile(pattern)
        return [r for r in self.log if r.method == method and found.search(r.path)]


def _fault(server: Loopback, request: Request) -> Reply | None:
    with server.lock:
        for index, (method, pattern, reply) in enumerate(server.faults):
            if method == request.method and pattern.search(request.path):
                del server.faults[index]
                return reply
    return None


@contextmanager
def serve(route: Callable[[Request], Reply]) -> Iterator[Loopback]:
    """Run a server on 127.0.0.1 (a free port) answering through ``route``; stop it after."""
    state: dict[str, Loopback] = {}

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = Request(
                self.command,
                parts.path,
                {k: v[-1] for k, v in parse_qs(parts.query).items()},
                json.loads(raw) if raw else None,
                {k.lower(): v for k, v in self.headers.items()},
            )
            server = state["server"]
            with server.lock:
                server.log.append(request)
            reply = _fault(server, request)
            if reply is None:
                try:
                    reply = route(request)
                except KeyError as missing:
                    reply = Reply(404, {"detail": f"not found: {missing}"})
            payload = json.dumps(reply.body).encode() if reply.body is not None else b""
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["server"] = Loopback(f"http://127.0.0.1:{httpd.server_address[1]}")
    # A short poll interval: shutdown() waits for the serving loop's next look (0.5 s by default).
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state["server"]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


_COMMON = {"when", "where", "what", "with", "that", "this", "have", "your", "keep", "thanks"}


def words(text: str) -> set[str]:
    """The first four letters of each uncommon word of 4+ letters: a fake service's relevance."""
    return {w[:4] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _COMMON}


def session(stamp: str, said: str, *agents: str) -> list[Message]:
    """A session: the principal says ``said``, then each agent answers."""
    messages = [Message(speaker="principal", role="user", content=said, timestamp=stamp)]
    return messages + [
        Message(speaker=a, role="assistant", content="Noted, thanks.", timestamp=stamp)
        for a in agents
    ]


SHARED = session("2027-01-10T09:00:00", "I moved to Lisbon for work.", "work", "home")
"""A session both agents took part in."""
PRIVATE = session("2027-02-10T09:00:00", "My salary review is on Friday.", "work")
"""A later session with the work agent only."""


async def scoping_answers(memory: Any) -> dict[str, str]:
    """Store :data:`SHARED` and :data:`PRIVATE` as the harness does, then ask as each agent.

    ``home_private`` (the home agent asking about the private session) and ``stranger`` (an
    agent in no session) must come back empty from any adapter that scopes by agent.
    """
    for session_id, messages in (("s1", SHARED), ("s2", PRIVATE)):
        agents = dict.fromkeys(m["speaker"] for m in messages if m["role"] == "assistant")
        for agent in agents:
            await memory.store(session_id, messages, entity_id=agent)
        await memory.wait_until_queryable(session_id)
    asks = {
        "work": ("work", "Where did the principal move?"),
        "home": ("home", "Where did the principal move?"),
        "home_private": ("home", "When is the salary review?"),
        "work_private": ("work", "When is the salary review?"),
        "stranger": ("stranger", "Where did the principal move?"),
    }
    return {name: await memory.retrieve("s2", agent, q) for name, (agent, q) in asks.items()}


def gate_cell(
    backend: str, world: tuple[Path, str], options: dict[str, Any], key: tuple[str, str]
) -> CellRun:
    """The adapter by name under the gate on the two-agent world (fixture ``two_agent_world``).

    Checks what every service adapter's cell must show: no faulted call, a valid cloud arm, its
    waits until queryable measured, the agents finding what their sessions held, and the key
    (``key``: its variable and value, passed into the worker) in no record of the cell.
    """
    root, scenario = world
    variable, value = key
    cell = run_cell(
        root,
        scenario,
        "short",
        2,
        Arm(backend, Gate("hard")),
        options={"poll_seconds": 0.01, "retry_delay": 0.01, **options},
        config=LoopConfig(call_timeout=20.0, protect=(root,), worker_env=(variable,)),
    )
    assert [e for e in cell.snapshots.column("error").to_pylist() if e] == [] and cell.valid
    assert cell.deployment == "cloud" and cell.service["service"] == backend
    assert cell.time_to_queryable is not None
    assert cell.time_to_queryable["sessions"] == cell.snapshots.num_rows
    assert [c for c in cell.retrievals.column("context").to_pylist() if c]
    assert value not in json.dumps(cell.faults) + json.dumps(cell.service)
    # The service's models run on its servers and it reports none of their tokens: declared,
    # recorded as unknown (null, never zero), and the cell's model spend is unknown.
    assert set(cell.snapshots.column("models_outside_meter").to_pylist()) == {True}
    assert set(cell.snapshots.column("reported_write_tokens").to_pylist()) == {None}
    assert set(cell.retrievals.column("reported_read_tokens").to_pylist()) == {None}
    audit = token_audit(cell.snapshots, cell.retrievals)
    assert audit is not None and audit.source == "unknown" and not audit.cost_known
    return cell


def passes_the_check(
    backend: str, options: dict[str, Any], key_variable: str, key: str
) -> ConformanceReport:
    """Run the conformance check on a service adapter as ``drift run`` would, and see it pass.

    The adapter runs in the sandboxed worker with the service's key passed in; it must keep
    the two agents' facts apart, wait until each session is queryable, and keep its key out of
    the report.
    """
    fast = {"poll_seconds": 0.01, "retry_delay": 0.01, **options}
    report = check_backend(backend, fast, call_timeout=20.0, env={key_variable: key})
    assert report.passed, report.reason
    assert report.leak is None
    declared = report.capabilities
    assert declared["stores_for_entity"] and declared["asynchronous"]
    assert len(report.queryable_ms) == 5 and report.read_ms
    assert declared["service"]["service"] == backend
    assert key not in json.dumps(report.to_json())
    # Its models are out of the meter's sight and it counts no tokens: said before a run.
    assert declared["models_outside_meter"] and declared["token_counts"] == "unknown"
    assert report.model_tokens == "unknown" and "model tokens unknown" in report.line()
    return report
