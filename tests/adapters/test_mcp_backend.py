"""The ``mcp`` backend against a scripted MCP server: mapping, scoping, transports and faults.

The server (``mcp_scripted_server.py``) is a real MCP server built on the SDK, started by the
adapter over stdio or by a fixture over Streamable HTTP on 127.0.0.1; faults are switched on
through its environment.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline import DriftHarness, DriftReport
from drift_pipeline.adapters.mcp_backend import (
    MCPBackend,
    MCPSnapshotBackend,
    mcp_backend,
    mcp_needs,
)
from drift_pipeline.adapters.mcp_connection import MCPCallError, url_without_secrets
from drift_pipeline.memory import Message, TokenCounts, check_backend, check_script
from drift_pipeline.memory.backends import backend_needs, load_backend

from .conftest import SCRIPTED_SERVER

SESSION: list[Message] = [
    {
        "speaker": "principal",
        "role": "user",
        "content": "I started at Northwind Traders last week.",
        "timestamp": "2027-03-14T09:00:00",
    },
    {
        "speaker": "assistant",
        "role": "assistant",
        "content": "Congratulations on Northwind!",
        "timestamp": "2027-03-14T09:00:00",
    },
]
SCENARIO = """\
id: mcp-scripted-check
seed: 31
replicates: 1
paradigm: user_assistant
horizon:
  short: { sessions: 10, session_gap_hours: 8 }
noise_ratio: 0.5
entities:
  - { id: principal, type: human }
  - { id: assistant, type: assistant_agent }
checkpoints:
  - { every: 5, probe_types: [recall] }
"""


def scripted(*faults: str, tag: str = "") -> dict[str, Any]:
    """Options that start the scripted server with ``faults``, its command marked by ``tag``."""
    command = [sys.executable, str(SCRIPTED_SERVER), *(["--tag", tag] if tag else [])]
    return {"command": command, "env": {"SCRIPTED_MCP_FAULTS": ",".join(faults)}}


def running(tag: str) -> list[int]:
    """Process ids whose command line carries ``tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and tag.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The worker's state folder, as the harness sets it, for backends built in the tests."""
    folder = tmp_path_factory.mktemp("state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DRIFT_STATE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def scoped(state_dir: Path) -> Iterator[MCPBackend]:
    """One scripted server for the module: user-scoped tools, errors on '#bad', hangs on 'slow'."""
    backend = mcp_backend(**scripted("error_on=#bad", "hang_on=slow"))
    asyncio.run(backend.store("s-1", SESSION))
    yield backend
    backend.close()


def test_guessed_tools_keep_each_entity_apart_and_snapshot_its_memory(scoped: MCPBackend) -> None:
    assert isinstance(scoped, MCPSnapshotBackend)
    info = scoped.service_info()
    assert info["service"] == "scripted-memory"
    assert info["service_version"] == "3.1.4"
    assert info["store"] == "remember(content={text}, user_id={entity})"
    assert info["search"] == "recall(query={query}, user_id={entity})"
    assert info["scope"].startswith("argument:")
    assert info["guessed"] == "store, search, snapshot"
    seen = asyncio.run(scoped.retrieve("s-1", "assistant", "Where does she work, Northwind?"))
    assert "2027-03-14T09:00:00 principal: I started at Northwind Traders" in seen
    assert asyncio.run(scoped.retrieve("s-1", "stranger", "Northwind")) == ""
    # Stored into the memory of each speaker, once however often it is stored: both listed.
    asyncio.run(scoped.store("s-1", SESSION, entity_id="principal"))
    assert scoped.snapshot().count("I started at Northwind Traders") == 2
    # Told whose memory it is (as the harness does, once per agent), only that one's.
    later = [{**message, "content": f"{message['content']} (again)"} for message in SESSION]
    asyncio.run(scoped.store("s-2", later, entity_id="assistant"))
    assert scoped.snapshot().count("Traders last week. (again)") == 1
    assert "(again)" not in asyncio.run(scoped.retrieve("s-2", "principal", "Northwind"))


def test_a_tool_error_is_raised_with_the_servers_words(scoped: MCPBackend) -> None:
    with pytest.raises(MCPCallError, match=r"recall: the server answered with an error: .*#bad"):
        asyncio.run(scoped.retrieve("s-1", "assistant", "Where #bad"))
    # A tool error leaves the connection as it was.
    assert "Northwind" in asyncio.run(scoped.retrieve("s-1", "assistant", "Northwind"))


def test_a_call_the_harness_gives_up_on_is_cancelled(scoped: MCPBackend) -> None:
    async def hang() -> None:
        await asyncio.wait_for(scoped.retrieve("s-1", "assistant", "slow question"), 0.5)

    with pytest.raises(TimeoutError):
        asyncio.run(hang())
    assert "Northwind" in asyncio.run(scoped.retrieve("s-1", "assistant", "Northwind"))


def test_a_copy_starts_its_own_server(scoped: MCPBackend) -> None:
    import cloudpickle

    copy = cloudpickle.loads(cloudpickle.dumps(scoped))
    assert copy._servers == {}
    assert copy._mapping is None
    assert scoped._servers  # the original keeps its connection


def test_a_server_that_dies_fails_its_calls_and_leaves_nothing_running(state_dir: Path) -> None:
    tag = uuid.uuid4().hex
    backend = mcp_backend(**scripted("crash_after=1", tag=tag))
    try:
        with pytest.raises(MCPCallError, match="remember"):
            asyncio.run(backend.store("s-1", SESSION))
        with pytest.raises(MCPCallError):
            asyncio.run(backend.retrieve("s-2", "assistant", "Northwind"))
    finally:
        backend.close()
    assert running(tag) == []


def test_a_server_that_does_not_start_is_one_line_with_its_last_words(state_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"failed to start: .*No such file or directory") as raised:
        mcp_backend(command=[sys.executable, "/nonexistent/server.py"])
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match="exactly one of command"):
        MCPBackend()
    with pytest.raises(ValueError, match="rejects options"):
        load_backend("mcp", {**scripted(), "stor": "remember"})


def test_a_server_that_fails_to_start_is_not_kept_and_says_why_on_every_call(
    state_dir: Path,
) -> None:
    backend = MCPBackend(command=[sys.executable, "/nonexistent/server.py"])  # started lazily
    try:
        for _ in range(2):  # the second call starts it again rather than reusing a dead one
            with pytest.raises(MCPCallError, match="failed to start"):
                asyncio.run(backend.retrieve("s-1", "assistant", "Northwind"))
        assert backend._servers == {}
    finally:
        backend.close()


def test_a_server_that_never_answers_its_handshake_is_stopped(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("drift_pipeline.adapters.mcp_connection.CONNECT_TIMEOUT", 1.0)
    tag = uuid.uuid4().hex
    silent = [sys.executable, "-c", "import time; time.sleep(3600)", tag]
    with pytest.raises(ValueError, match=r"did not answer within 1s"):
        mcp_backend(command=silent)
    deadline = time.monotonic() + 10
    while running(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(tag) == []


def test_registered_lazily_with_what_it_needs() -> None:
    needs = backend_needs("mcp", {"url": "https://mem.example/mcp", "pass_env": ["MEM_KEY"]})
    assert needs.network
    assert [p.install for p in needs.packages] == ["drift-pipeline[mcp]"]
    assert needs.env == ("MEM_KEY",)
    headers = {"Authorization": "Bearer {env:MEM_TOKEN}"}
    assert mcp_needs({"url": "http://127.0.0.1:1/mcp", "headers": headers}).env == ("MEM_TOKEN",)
    assert not mcp_needs({"command": "server"}).network


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The scripted server over Streamable HTTP on 127.0.0.1; its URL."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SCRIPTED_SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def test_a_server_over_streamable_http(
    http_server: str, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM_TOKEN", "t0ken")
    backend = mcp_backend(url=http_server, headers={"Authorization": "Bearer {env:MEM_TOKEN}"})
    try:
        assert backend.deployment == "local"
        info = backend.service_info()
        assert info["transport"] == "streamable-http"
        assert info["endpoint"] == http_server
        assert "t0ken" not in str(info)
        asyncio.run(backend.store("s-http", SESSION))
        found = asyncio.run(backend.retrieve("s-http", "principal", "Northwind"))
        assert "Northwind Traders" in found
    finally:
        backend.close()
    assert MCPBackend(url="https://memory.example.com/mcp").deployment == "cloud"
    # A server reached by URL was not started by the harness: its models are out of the
    # meter's sight unless the user says otherwise; its tokens are unknown, never zero.
    assert backend.models_outside_meter is True
    assert backend.token_counts() == TokenCounts(write=None, read=None)
    assert MCPBackend(url=http_server, models_outside_meter=False).models_outside_meter is False
    assert (
        url_without_secrets("https://u:p@h.example:8443/mcp?key=k#x")
        == "https://h.example:8443/mcp"
    )


def test_a_key_on_the_servers_command_line_stays_out_of_the_record(state_dir: Path) -> None:
    command = ["memsrv", "--api-key", "sk-live-1234", "--db=/m.db", "TOKEN=t0k3n-42", "-v"]
    shown = MCPBackend(command=command).service_info()["endpoint"]
    assert shown == "memsrv --api-key [redacted] --db=/m.db TOKEN=[redacted] -v"


SHARED_MEMORY = {
    "store": {"tool": "remember", "arguments": {"content": "{text}", "user_id": "everyone"}},
    "search": {"tool": "recall", "arguments": {"query": "{query}", "user_id": "everyone"}},
}
"""A mapping that keeps every entity's memory in one: nothing carries ``{entity}``."""


def test_the_check_passes_a_server_that_keeps_users_apart() -> None:
    report = check_backend("mcp", scripted(), call_timeout=10.0)
    assert report.passed, report.reason
    assert report.capabilities["service"]["scope"].startswith("argument:")
    # A server it starts reaches models only through the meter its worker is given: it counts
    # no tokens of its own over MCP, yet its spend is known.
    assert not report.capabilities["models_outside_meter"]
    assert report.capabilities["token_counts"] == "unknown"
    assert report.model_tokens == "metered" and report.unmetered_calls == 0
    assert report.leak is None and not report.leak_allowed


def test_one_memory_for_every_entity_is_refused_unless_the_leak_is_allowed() -> None:
    refused = check_backend("mcp", {**scripted(), **SHARED_MEMORY}, call_timeout=10.0)
    script = check_script()
    (a, b), token = script.entities, script.fact_b.token
    assert refused.reason == (
        f"it leaks across entities: a fact stored for {b} ({token}) was returned to {a}"
    )
    allowed = check_backend(
        "mcp", {**scripted(), **SHARED_MEMORY, "scope": "none"}, allow_leak=True
    )
    assert allowed.passed and allowed.leak_allowed
    assert allowed.leak is not None and allowed.leak.startswith("it leaks across entities")
    assert allowed.checks["scope"] is True
    assert "allowed: its row is marked and its Privacy not measured" in allowed.line()
    assert "  scope: leaks (allowed)" in allowed.lines()
    assert allowed.capabilities["service"]["scope"] == "none: turned off in the configuration"


def run_under_the_gate(folder: Path, options: dict[str, Any]) -> DriftReport:
    """The ``mcp`` backend with ``options`` through the harness on the small scenario."""
    scenario = folder / "mcp-scripted-check.yaml"
    scenario.write_text(SCENARIO)
    harness = DriftHarness(
        backend="mcp", scenario_path=scenario, out=folder / "data", backend_options={"mcp": options}
    )
    return harness.run_sync()


def test_faults_under_the_gate_are_recorded_with_the_servers_error(tmp_path: Path) -> None:
    """A search that starts failing on question marks: the probes fault, the run goes on.

    The faults begin after the first 25 calls of each server: the run's first sessions are
    stored and read, then its calls with a question mark fail. The conformance check before the
    run, on a server of its own, makes fewer calls than that, and passes.
    """
    report = run_under_the_gate(tmp_path, scripted("error_on=?", "error_after=25"))
    cell = next(c for c in report.cells if c.arm.backend == "mcp")
    assert any("syntax error in query near '?'" in fault for fault in cell.faults)
    assert not cell.valid
    assert cell.run.fault_rate > 0


_WITHOUT_SDK = """
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "mcp":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NotInstalled())
from drift_pipeline.memory.backends import backend_needs, load_backend
print("needs:", backend_needs("mcp", {"command": "server"}).packages[0].install)
try:
    load_backend("mcp", {"command": "server"})
except ValueError as error:
    print("error:", error)
"""


def test_without_the_sdk_it_says_what_to_install() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SDK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "needs: drift-pipeline[mcp]" in done.stdout
    assert "error: backend 'mcp' needs the package(s) 'mcp': pip install 'drift-pipeline[mcp]'" in (
        done.stdout
    )
