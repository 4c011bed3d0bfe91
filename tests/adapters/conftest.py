"""Fixtures for the adapter tests: real memory servers installed from their package registries,
and a small world with two assistants in every session (for runs through the gate).

The reference MCP knowledge-graph server (``@modelcontextprotocol/server-memory``) is installed
with npm from the lock file in ``tests/fixtures/mcp_memory_server/`` into the project's virtual
environment, once per lock file: the sandboxed workers can read the environment (they run its
interpreter), and a new lock file installs beside the old one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import write_scenario

from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_worlds

SERVER_PACKAGE = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_memory_server"
SERVER_ENTRY = "node_modules/@modelcontextprotocol/server-memory/dist/index.js"
SCRIPTED_SERVER = Path(__file__).resolve().parent / "mcp_scripted_server.py"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (pytest-xdist workers install one at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_memory_server() -> Path:
    """The server's entry script, installed from the registry by ``npm ci`` if it is not yet.

    Raises:
        pytest.fail: npm is missing or the install fails (the message says how to fix it).
    """
    lock = (SERVER_PACKAGE / "package-lock.json").read_bytes()
    home = Path(sys.prefix) / "drift-test-servers"
    target = home / f"mcp-server-memory-{hashlib.sha256(lock).hexdigest()[:12]}"
    entry = target / SERVER_ENTRY
    with _locked(home / ".install.lock"):
        if entry.is_file():
            return entry
        npm, node = shutil.which("npm"), shutil.which("node")
        if npm is None or node is None:
            pytest.fail(
                "node and npm are needed for the MCP server tests: apt-get install nodejs npm"
            )
        staging = Path(tempfile.mkdtemp(prefix="staging-", dir=home))
        try:
            for name in ("package.json", "package-lock.json"):
                shutil.copy2(SERVER_PACKAGE / name, staging / name)
            done = subprocess.run(
                [npm, "ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"],
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci of the MCP memory server failed: {done.stderr.strip()[-500:]}")
            for folder, _, files in os.walk(staging):
                # The sandboxed workers run as another user: everything must be readable.
                os.chmod(folder, 0o755)
                for name in files:
                    path = os.path.join(folder, name)
                    if not os.path.islink(path):
                        os.chmod(path, os.stat(path).st_mode | 0o444)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return entry


@pytest.fixture(scope="session")
def memory_server() -> Path:
    """The installed reference knowledge-graph server's entry script (run with ``node``)."""
    return install_memory_server()


SCENARIO_ID = "adapters-t"

SCENARIO = f"""\
id: {SCENARIO_ID}
paradigm: user_assistant
seed: 4711
replicates: 2
horizon:
  short: {{ sessions: 6, session_gap_days: 9 }}
noise_ratio: 0.3
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }}
  - id: work_assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
  - id: home_assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
topology:
  - session_range: [0, -1]
    active: [principal, work_assistant, home_assistant]
    pattern: linear
checkpoints:
  - {{ after_session: 6, probe_types: [recall] }}
"""


@pytest.fixture(scope="session")
def two_agent_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The generated world's root and its scenario id (generated once per test session)."""
    base = tmp_path_factory.mktemp("adapters")
    path = write_scenario(base / "scenarios", SCENARIO)
    generate_worlds([load_scenario(path)], base / "data")
    return base / "data", SCENARIO_ID
