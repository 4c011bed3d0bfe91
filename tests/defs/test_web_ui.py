"""The web UI, for real: ``dagster dev -w workspace.yaml`` (as the README starts it) driven by a
headless Chromium, and ``dagster-webserver -w workspace.yaml`` answering GraphQL.

Each server runs in a temporary project folder of its own: ``DAGSTER_HOME`` holds a copy of the
repository's ``dagster.yaml`` (Dagster's own SQLite storages, under ``DAGSTER_HOME``; the server
runs from the folder above it, as the README runs it from the project root),
``DRIFT_DATA_ROOT`` and ``DRIFT_SCENARIOS`` point at a data folder and a tiny scenario written
here. The whole process group is stopped, and the folder removed, in a ``finally``.

The browser is Debian's ``chromium`` (``/usr/bin/chromium``), driven by Playwright through its
executable path; Playwright never downloads a browser here. Without Chromium the browser test
fails, saying how to install it (``scripts/test.sh`` installs it as root); it is never skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from drift_pipeline.orchestration.partitions import WorldKey
from drift_pipeline.storage import PART_FILE, TRANSCRIPTS, partition_dir

from .conftest import PROJECT, TINY_REPLICATES, TINY_SESSIONS, write_tiny

pytestmark = pytest.mark.slow

SCENARIO_ID = "webui-tiny"
WORLD = WorldKey(SCENARIO_ID, "short")
WORLD_ASSETS = ("latent_profiles", "event_schedules", "transcripts", "ground_truth", "probes")
LOCATION = "drift"  # workspace.yaml's location_name

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_HINT = (
    f"Chromium not found at {CHROMIUM}: install Debian's package with "
    "`apt-get update && apt-get install -y chromium` (scripts/test.sh does it as root)"
)
# As on the machine notes: no sandbox as root, and nothing that reaches for the network.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

SERVER_START_TIMEOUT = 120.0  # seconds until the code location is loaded (about 10-20 s here)
RUN_TIMEOUT_MS = 180_000  # the world run itself takes about 20 s here, queueing included
UI_TIMEOUT_MS = 30_000


# --- servers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A Dagster webserver started here, and the temporary project it serves."""

    url: str
    data: Path
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's combined output."""
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return text[-chars:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _default_signals() -> None:
    # A server started from a non-interactive shell may inherit ignored SIGINT/SIGTERM.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def _graphql(url: str, query: str, timeout: float = 30.0) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: dict[str, Any] = json.load(response)
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


_LOCATIONS = """
{ workspaceOrError { __typename ... on Workspace { locationEntries {
    name loadStatus
    locationOrLoadError { __typename ... on PythonError { message } }
} } } }
"""


def _wait_ready(server: Server, process: subprocess.Popen[bytes]) -> None:
    """Until ``/server_info`` answers and the code location is loaded (bounded)."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    answered, status = False, "no answer"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"the Dagster server exited with {process.returncode}:\n{server.log_tail()}",
                pytrace=False,
            )
        try:
            if not answered:
                with urllib.request.urlopen(f"{server.url}/server_info", timeout=5) as response:
                    answered = response.status == 200
            if answered:
                entries = _graphql(server.url, _LOCATIONS)["workspaceOrError"]["locationEntries"]
                entry = next((e for e in entries if e["name"] == LOCATION), None)
                status = json.dumps(entry)
                if entry and entry["loadStatus"] == "LOADED":
                    loaded = entry["locationOrLoadError"]
                    assert loaded["__typename"] == "RepositoryLocation", (
                        f"code location {LOCATION!r} failed to load: {loaded.get('message')}"
                    )
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(
        f"Dagster server not ready after {SERVER_START_TIMEOUT:.0f} s ({status}):\n"
        f"{server.log_tail()}",
        pytrace=False,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ctrl-C the whole process group (webserver, daemon, code servers, runs), as a terminal
    would; whatever is left of the group after 30 s is killed."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline and (process.poll() is None or _group_alive(process.pid)):
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _server_env(home: Path, data: Path, scenarios: Path, tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DAGSTER_HOME", "DRIFT_DATA_ROOT", "DRIFT_SCENARIOS"}
    }
    env.update(
        DAGSTER_HOME=str(home),
        DRIFT_DATA_ROOT=str(data),
        DRIFT_SCENARIOS=str(scenarios),
        DAGSTER_DISABLE_TELEMETRY="1",  # dagster.yaml turns telemetry off too
        TMPDIR=str(tmp),  # code-server sockets and such end up in the folder removed below
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def serve() -> Iterator[Any]:
    """Starts ``<venv>/bin/<command> -w workspace.yaml -h 127.0.0.1 -p <free port>`` on demand.

    Returns a function of the command name (``dagster dev`` or ``dagster-webserver``) that
    gives a ready ``Server``; every server is stopped, and its folder removed, afterwards.
    """
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(*command: str) -> Server:
        folder = Path(tempfile.mkdtemp(prefix="drift-webui-"))
        home, data, tmp = folder / "home", folder / "data", folder / "tmp"
        for path in (home, data, tmp):
            path.mkdir()
        shutil.copy(PROJECT / "dagster.yaml", home / "dagster.yaml")
        scenarios = write_tiny(folder / "scenarios", SCENARIO_ID).parent
        port = _free_port()
        server = Server(f"http://127.0.0.1:{port}", data, folder / "server.log")
        executable = Path(sys.executable).with_name(command[0])
        argv = [str(executable), *command[1:]]
        argv += ["-w", str(PROJECT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)]
        with server.log.open("wb") as log:
            process = subprocess.Popen(
                argv,
                cwd=folder,  # the instance's files resolve from DAGSTER_HOME, not from here
                env=_server_env(home, data, scenarios, tmp),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_default_signals,
            )
        started.append((process, folder))
        _wait_ready(server, process)
        return server

    try:
        yield start
    finally:
        for process, folder in reversed(started):
            try:
                _stop(process)
            finally:
                shutil.rmtree(folder, ignore_errors=True)


# --- GraphQL -----------------------------------------------------------------------------------


def test_webserver_serves_the_asset_graph_over_graphql(serve: Any) -> None:
    server: Server = serve("dagster-webserver")
    data = _graphql(
        server.url,
        "{ assetNodes { assetKey { path } groupName isPartitioned dependencyKeys { path } } }",
    )
    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    for name in (*WORLD_ASSETS, "memory_snapshots", "retrievals", "leaderboard", "cost_curves"):
        assert name in nodes, f"{name} not among {sorted(nodes)}"
    assert {n for n, node in nodes.items() if node["groupName"] == "world"} == set(WORLD_ASSETS)
    assert nodes["transcripts"]["isPartitioned"]
    assert not nodes["leaderboard"]["isPartitioned"]
    assert {"path": ["transcripts"]} in nodes["memory_snapshots"]["dependencyKeys"]

    # The code location registered the scenario's world when it loaded (DRIFT_SCENARIOS).
    partitions = _graphql(
        server.url,
        '{ assetNodeOrError(assetKey: {path: ["transcripts"]}) '
        "{ ... on AssetNode { partitionKeys } } }",
    )
    assert partitions["assetNodeOrError"]["partitionKeys"] == [WORLD.partition_key]


# --- the browser -------------------------------------------------------------------------------


def test_materialize_a_world_partition_from_the_ui(serve: Any, tmp_path: Path) -> None:
    # Debian's Chromium, or a failure saying how to install it (never a skip).
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(CHROMIUM_HINT, pytrace=False)
    server: Server = serve("dagster", "dev")
    # The project's dagster.yaml turns the first-visit community dialog off: a fresh instance
    # opens without it, nothing marked seen.
    assert _graphql(server.url, "{ shouldShowNux }")["shouldShowNux"] is False
    # A direct run into the served folder and instance: its assets show as materialised, and
    # the reports up to date though arms the run did not run have partitions.
    _direct_run(server)
    nodes = _graphql(server.url, "{ assetNodes { assetKey { path } staleStatus } }")
    status = {"/".join(n["assetKey"]["path"]): n["staleStatus"] for n in nodes["assetNodes"]}
    assert status["leaderboard"] == status["cost_curves"] == "FRESH", status
    profile = Path(tempfile.mkdtemp(prefix="drift-chromium-"))
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(profile),  # a fresh --user-data-dir, removed below
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1600, "height": 1000},
            )
            try:
                page = context.new_page()
                page.set_default_timeout(UI_TIMEOUT_MS)
                try:
                    _check_direct_run(page, server, tmp_path)
                    run_prefix = _materialize_world(page, server)
                    rows, sessions = _read_metadata(page, server, run_prefix)
                except BaseException as error:
                    shot, log = tmp_path / "failure.png", tmp_path / "server.log"
                    with contextlib.suppress(Exception):  # never hide the failure itself
                        page.screenshot(path=str(shot), full_page=True)
                        shutil.copy(server.log, log)
                    error.add_note(f"screenshot: {shot}; server log: {log}")
                    raise
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)

    stored = pq.read_table(partition_dir(server.data, TRANSCRIPTS, WORLD) / PART_FILE)
    assert stored.num_rows > 0
    assert rows == stored.num_rows
    assert sessions == TINY_SESSIONS
    assert len(set(stored.column("session_index").to_pylist())) == TINY_SESSIONS
    assert len(set(stored.column("replicate").to_pylist())) == TINY_REPLICATES


def _materialize_world(page: Page, server: Server) -> str:
    """From the asset graph, launch the world assets of ``WORLD``; return the run's id prefix."""
    # The global asset graph shows the project's groups ...
    page.goto(f"{server.url}/asset-groups")
    expect(page.get_by_text("Global asset lineage").first).to_be_visible(timeout=UI_TIMEOUT_MS)
    for group in ("world", "memory", "evaluation", "report"):
        expect(page.get_by_text(group, exact=True).first).to_be_visible(timeout=UI_TIMEOUT_MS)

    # ... and the world group its five assets (in the list: the group's graph also draws the
    # links to its downstream groups, and leaves nodes outside the viewport undrawn).
    page.goto(f"{server.url}/locations/{LOCATION}/asset-groups/world")
    page.get_by_role("tab", name="List").click()
    for asset in WORLD_ASSETS:
        expect(page.get_by_text(asset, exact=True).first).to_be_visible(timeout=UI_TIMEOUT_MS)
    page.get_by_role("tab", name="Lineage").click()

    page.get_by_role("button", name="Materialize all").click()
    dialog = page.get_by_role("dialog").filter(has_text="Launch runs to materialize")
    expect(dialog).to_contain_text("Launch runs to materialize 5 assets", timeout=UI_TIMEOUT_MS)
    dialog.get_by_text("Select a partition or create one").click()
    page.get_by_role("menuitem").filter(has_text=WORLD.partition_key).click()
    page.keyboard.press("Escape")  # close the partition list, not the dialog
    expect(dialog).to_contain_text("1 partition", timeout=UI_TIMEOUT_MS)
    dialog.get_by_role("button", name="Launch 1 run").click()
    expect(dialog).to_be_hidden(timeout=UI_TIMEOUT_MS)

    launched = page.get_by_text(re.compile(r"^Launched run [0-9a-f]{8}$")).first
    expect(launched).to_be_visible(timeout=UI_TIMEOUT_MS)
    prefix: str = launched.inner_text().split()[-1]
    # To the run through the Runs list (the toast's View button is gone after a few seconds).
    page.goto(f"{server.url}/runs")
    page.get_by_text(prefix, exact=True).first.click()
    page.wait_for_url(re.compile(rf"/runs/{prefix}[0-9a-f-]{{28}}"))

    # The run page's status tag: queued, starting, started, then one of these.
    status = page.get_by_text(re.compile(r"^(Success|Failure|Canceled)$")).first
    expect(status).to_be_visible(timeout=RUN_TIMEOUT_MS)
    assert status.inner_text() == "Success", f"run {prefix}: {status.inner_text()}"
    expect(page.get_by_text(f"partition: {WORLD.partition_key}", exact=True).first).to_be_visible(
        timeout=UI_TIMEOUT_MS
    )
    return prefix


def _read_metadata(page: Page, server: Server, run_prefix: str) -> tuple[int, int]:
    """``dagster/row_count`` and ``drift/sessions`` of the partition's latest materialization,
    as the asset's Events tab shows them."""
    partition = urllib.parse.quote(WORLD.partition_key, safe="")
    page.goto(f"{server.url}/assets/transcripts?view=events&partition={partition}")
    expect(
        page.get_by_text(f"Partition {WORLD.partition_key} materialized in run {run_prefix}").first
    ).to_be_visible(timeout=UI_TIMEOUT_MS)

    def value(key: str) -> int:
        row = page.get_by_role("row").filter(has=page.get_by_text(key, exact=True)).first
        expect(row).to_be_visible(timeout=UI_TIMEOUT_MS)
        return int(row.get_by_role("cell").nth(1).inner_text().strip().replace(",", ""))

    return value("dagster/row_count"), value("drift/sessions")


DIRECT_ARMS = ("fact_store", "sentence_log")


def _direct_run(server: Server) -> None:
    """``drift run`` (direct) of the served scenario into the served data and instance."""
    folder = server.data.parent
    env = {**os.environ, "DAGSTER_HOME": str(folder / "home"), "DRIFT_DAGSTER_RECORD": "1"}
    argv = [str(Path(sys.executable).with_name("drift")), "run", str(folder / "scenarios")]
    argv += ["--out", str(server.data)]
    argv += [arg for arm in DIRECT_ARMS for arg in ("--backend", arm)]
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # Its own line ("not recorded in the Dagster instance: …" would be a failure).
    assert re.search(r"^recorded in the Dagster instance: \d+ asset events$", done.stdout, re.M), (
        done.stdout
    )


def _check_direct_run(page: Page, server: Server, shots: Path) -> None:
    """The UI shows what the direct run wrote: no dialog, leaderboard and cell materialised."""
    page.goto(f"{server.url}/assets/leaderboard")
    expect(page.get_by_text("Latest materialization").first).to_be_visible(timeout=UI_TIMEOUT_MS)
    # No dialog over the page (the community sign-up is off in dagster.yaml), and the board
    # is not flagged unsynced by the partitions of arms the run did not run.
    expect(page.get_by_role("dialog")).to_have_count(0, timeout=UI_TIMEOUT_MS)
    expect(page.get_by_text("Unsynced")).to_have_count(0)
    page.screenshot(path=str(shots / "leaderboard-asset.png"), full_page=True)
    page.goto(f"{server.url}/assets/leaderboard?view=events")
    expect(page.get_by_text("drift/best_drift_c", exact=True).first).to_be_visible(
        timeout=UI_TIMEOUT_MS
    )
    for key in ("plot_cost_curve", "plot_session_reads", "budget"):
        expect(page.get_by_text(key, exact=True).first).to_be_visible(timeout=UI_TIMEOUT_MS)
    partition = urllib.parse.quote(f"fact_store@hard|{WORLD.partition_key}", safe="")
    page.goto(f"{server.url}/assets/cell_metrics?view=events&partition={partition}")
    expect(page.get_by_text("drift/drift_c", exact=True).first).to_be_visible(timeout=UI_TIMEOUT_MS)
    page.screenshot(path=str(shots / "cell-metrics-asset.png"), full_page=True)
