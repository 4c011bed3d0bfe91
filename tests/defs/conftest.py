"""Fixtures for the Dagster project's tests: a tiny scenario of their own, instances on SQLite,
in memory and on a real PostgreSQL server started here on loopback.

The scenario is written here (not taken from ``scenarios/``): two replicates of 15 sessions, so a
whole cell runs in a second or two.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

PROJECT = Path(__file__).resolve().parents[2]
REPO_SCENARIOS = PROJECT / "scenarios"

TINY_ID = "dagster-tiny-t"
TINY_SESSIONS = 15
TINY_REPLICATES = 2
TINY = f"""\
id: {TINY_ID}
paradigm: user_assistant
seed: 2718
replicates: {TINY_REPLICATES}
horizon:
  short: {{ sessions: {TINY_SESSIONS}, session_gap_hours: 9 }}
noise_ratio: 0.40
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }}
      event_distribution:
        job_change: 0.25
        relocation: 0.20
        habit_form: 0.20
        preference_reveal: 0.20
  - id: assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
checkpoints:
  - {{ after_session: 8, probe_types: [recall, action, revision] }}
"""


def write_tiny(folder: Path, scenario_id: str = TINY_ID) -> Path:
    """Write the tiny scenario (with this id) into ``folder``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario_id}.yaml"
    path.write_text(TINY.replace(TINY_ID, scenario_id), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """The tiny scenario's file, alone in its folder."""
    return write_tiny(tmp_path / "scenarios")


@pytest.fixture(autouse=True)
def _no_user_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the developer's own instance or data root from a test."""
    for name in ("DAGSTER_HOME", "DRIFT_DATA_ROOT", "DRIFT_SCENARIOS"):
        monkeypatch.delenv(name, raising=False)


def sqlite_home(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``folder`` as DAGSTER_HOME with the project's own dagster.yaml (Dagster's SQLite in it)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT / "dagster.yaml", folder / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(folder))
    return folder


# --- declarative automation, tick by tick ----------------------------------------------------


class Ticks:
    """Successive evaluations of every condition, as the sensor's ticks."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        from drift_pipeline.orchestration.launch import build_definitions
        from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog

        self.defs = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())
        self.instance = instance
        self.cursor: object = None

    def tick(self) -> dict[str, set[str | None]]:
        """The requested partitions by asset (``None`` for an unpartitioned asset)."""
        result = dg.evaluate_automation_conditions(
            self.defs,
            self.instance,
            cursor=self.cursor,  # type: ignore[arg-type]
        )
        self.cursor = result.cursor
        requested: dict[str, set[str | None]] = {}
        for entry in result.results:
            if not isinstance(entry.key, dg.AssetKey) or entry.true_subset.is_empty:
                continue
            partitioned = self.defs.resolve_asset_graph().get(entry.key).partitions_def
            keys = result.get_requested_partitions(entry.key) if partitioned else {None}
            requested[entry.key.to_user_string()] = set(keys)
        return requested

    def materialize(self, assets: set[str], partition: str | None) -> None:
        """Report materializations without running anything."""
        for asset in sorted(assets):
            event = dg.AssetMaterialization(asset, partition=partition)
            self.instance.report_runless_asset_event(event)


# --- a real PostgreSQL server on loopback ----------------------------------------------------

_PG_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin; "
    "install them with `apt-get install -y postgresql` (scripts/test.sh does it as root)"
)


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        pytest.fail(_PG_HINT, pytrace=False)
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _default_signals() -> None:
    # A server started from a non-interactive shell may inherit ignored SIGINT/SIGTERM.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def _as_postgres(command: list[str]) -> list[str]:
    # initdb refuses to run as root; the image's `postgres` user owns the cluster then.
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class PostgresServer:
    """A throwaway PostgreSQL server on 127.0.0.1 that a test may stop and start again.

    Attributes:
        env: The ``DRIFT_PG_*`` variables that ``dagster.postgres.yaml`` reads.
    """

    def __init__(self, pg_bin: Path, folder: Path, port: int) -> None:
        self.pg_bin, self.folder, self.data = pg_bin, folder, folder / "data"
        self.env = {
            "DRIFT_PG_HOST": "127.0.0.1",
            "DRIFT_PG_PORT": str(port),
            "DRIFT_PG_USER": "drift",
            "DRIFT_PG_PASSWORD": "",
            "DRIFT_PG_DB": "dagster",
        }
        self.running = False

    def _run(self, *command: str) -> None:
        subprocess.run(
            _as_postgres(list(command)),
            check=True,
            capture_output=True,
            timeout=60,
            preexec_fn=_default_signals,
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections.

        It never syncs to disk (``fsync=off``): a throwaway server loses nothing when its
        process dies, which is the outage the tests cause; only a crash of the machine would.
        Every commit still reaches the server's log before it returns.
        """
        port = self.env["DRIFT_PG_PORT"]
        self._run(
            str(self.pg_bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
            "-o", f"-h 127.0.0.1 -p {port} -k {self.folder} -c fsync=off", "-w", "start",
        )  # fmt: skip
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; ``immediate`` kills it without a clean shutdown, as a crash would."""
        self._run(str(self.pg_bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")
        self.running = False


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server on 127.0.0.1 with a ``dagster`` database.

    Installs nothing: without the server binaries the tests fail, saying what to install.
    A test that stops it must start it again (``postgres_env`` users share it).
    """
    pg_bin = _pg_bin()
    folder = Path(tempfile.mkdtemp(prefix="drift-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    server = PostgresServer(pg_bin, folder, _free_port())
    try:
        server._run(
            str(pg_bin / "initdb"),
            "-D",
            str(server.data),
            "-U",
            "drift",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
        )
        server.start()
        port = server.env["DRIFT_PG_PORT"]
        server._run(
            str(pg_bin / "createdb"), "-h", "127.0.0.1", "-p", port, "-U", "drift", "dagster"
        )
        yield server
    finally:
        if server.running:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_env(postgres_server: PostgresServer) -> dict[str, str]:
    """The ``DRIFT_PG_*`` variables of the session's PostgreSQL server (see above)."""
    return postgres_server.env


def postgres_instance(
    folder: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> dg.DagsterInstance:
    """An instance configured by the project's dagster.postgres.yaml against ``env``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT / "dagster.postgres.yaml", folder / "dagster.yaml")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    instance = dg.DagsterInstance.from_config(str(folder))
    instance.wipe()  # one database for the session: every test starts empty
    for name in ("world", "arm"):
        for key in instance.get_dynamic_partitions(name):
            instance.delete_dynamic_partition(name, key)
    return instance
