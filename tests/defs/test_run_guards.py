"""Through Dagster, failures stay failures: invalid cells are never ranked, and a run takes the
same output-folder lock and isolation check as the direct ``drift run``.

The faulting backend is written at test time outside the repository and imported from there,
as a user's own module would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from helpers import unchecked
from memory.plugins import _support

from drift_pipeline.memory import Arm, IsolationError
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.launch import run_via_dagster
from drift_pipeline.pipeline import connect, stored_cells
from drift_pipeline.storage import RootBusy, StorageRoot, exclusive_root

from .conftest import TINY_ID, sqlite_home, write_tiny

DRIFT = str(Path(sys.executable).with_name("drift"))
EXIT_ISOLATION = 3
EXIT_BACKEND_START = 4
EXIT_INVALID_ARM = 5
EXIT_ROOT_BUSY = 6

FLAKY = """\
from drift_pipeline.memory import TokenCounts


class OneInFive:
    def __init__(self):
        self.calls = 0

    async def store(self, session_id, messages):
        self.calls += 1
        if self.calls % 5 == 0:
            raise RuntimeError("one call in five fails")

    async def retrieve(self, session_id, entity_id, query):
        return "nothing kept"

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""
"""
FLAKY_ARM = Arm.parse("flaky_store:OneInFive@hard")
BM25 = Arm.parse("bm25@hard")


def _modules(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "flaky_store.py").write_text(FLAKY, encoding="utf-8")
    return folder


def _metadata(instance: dg.DagsterInstance, asset: str, partition: str | None) -> dict[str, Any]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=dg.AssetKey(asset),
            asset_partitions=[partition] if partition is not None else None,
        ),
        limit=1,
    ).records
    assert records, (asset, partition)
    materialization = records[0].asset_materialization
    assert materialization is not None
    return {key: value.value for key, value in materialization.metadata.items()}


@pytest.fixture(scope="module")
def flaky_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("guards")
    scenario = write_tiny(folder / "scenarios")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.syspath_prepend(str(_modules(folder / "modules")))
        sqlite_home(folder / "home", monkeypatch)
        # Off for this run only: the module's other tests run checked.
        with pytest.MonkeyPatch.context() as for_this_run:
            unchecked(
                FLAKY_ARM.backend,
                "fails one store in five and keeps nothing; how Dagster marks and ranks its "
                "invalid cell is tested",
                for_this_run,
            )
            result = run_via_dagster([scenario], [BM25, FLAKY_ARM], out=folder / "data")
        with dg.DagsterInstance.get() as instance:
            yield {"result": result, "instance": instance, "out": folder / "data"}


@pytest.mark.slow
def test_an_invalid_cell_says_so_in_its_metadata_and_is_never_ranked(
    flaky_run: dict[str, Any],
) -> None:
    instance: dg.DagsterInstance = flaky_run["instance"]
    cells = {cell.arm: cell for cell in flaky_run["result"].cells}
    assert cells[BM25].valid and not cells[FLAKY_ARM].valid
    assert cells[FLAKY_ARM].fault_rate > 0.05
    for arm, valid in ((BM25, 1), (FLAKY_ARM, 0)):
        partition = f"{arm.key}|{TINY_ID}/short"
        for asset in ("memory_snapshots", "cell_metrics"):
            metadata = _metadata(instance, asset, partition)
            assert metadata[md.VALID] == valid, (asset, arm)
            assert metadata[md.FAULT_RATE] == pytest.approx(cells[arm].fault_rate), (asset, arm)
    # The leaderboard asset applies the direct run's rule: listed with its rate, not ranked.
    board = _metadata(instance, "leaderboard", None)
    assert board[md.INVALID_CELLS] == 1
    lines = [line for line in board["leaderboard"].splitlines() if line.startswith("| ")]
    arms = [line.split("|")[1].strip() for line in lines[1:]]
    assert BM25.key in arms and "reference_compressor@hard" in arms  # ranked, by figures
    assert arms[-1].startswith(f"{FLAKY_ARM.key} (not ranked: ")
    assert board[md.BEST_DRIFT_C] is not None


@pytest.mark.slow
def test_cells_read_back_from_storage_keep_their_validity(flaky_run: dict[str, Any]) -> None:
    with connect(StorageRoot.from_url(flaky_run["out"])) as con:
        cells, skipped = stored_cells(con, StorageRoot.from_url(flaky_run["out"]))
    assert not skipped
    stored = {cell.arm: cell for cell in cells}
    for cell in flaky_run["result"].cells:
        assert stored[cell.arm].valid == cell.valid
        assert stored[cell.arm].fault_rate == cell.fault_rate


def test_a_held_output_folder_refuses_a_run_before_any_dagster_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = write_tiny(tmp_path / "scenarios")
    home = sqlite_home(tmp_path / "home", monkeypatch)
    out = tmp_path / "data"
    with exclusive_root(out), pytest.raises(RootBusy) as raised:
        run_via_dagster([scenario], [BM25], out=out)
    assert str(raised.value) == (
        f"{out} is in use by drift run (pid {os.getpid()}); wait for it to finish or give "
        "another --out"
    )
    assert not (home / "history").exists() or not _runs(home)
    assert sorted(p.name for p in out.iterdir()) == [".drift-run.lock"]


def test_drift_run_via_dagster_exits_6_with_one_line_when_the_folder_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = write_tiny(tmp_path / "scenarios")
    home = sqlite_home(tmp_path / "home", monkeypatch)
    out = tmp_path / "data"
    # Another process holds the folder, as a concurrent `drift run` would.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from drift_pipeline.storage import exclusive_root\n"
            f"with exclusive_root({str(out)!r}):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        done = subprocess.run(
            [DRIFT, "run", str(scenario), "--backend", "bm25", "--out", str(out),
             "--via", "dagster"],
            capture_output=True,
            text=True,
            env={**os.environ, "DAGSTER_HOME": str(home)},
            timeout=300,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == EXIT_ROOT_BUSY, done.stderr
    assert done.stderr.strip() == (
        f"{out} is in use by drift run (pid {holder.pid}); wait for it to finish or give "
        "another --out"
    )
    assert not _runs(home)


def test_isolation_is_checked_before_any_dagster_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[list[Path]] = []

    async def refuse(protect: list[Path], isolate: bool = True) -> str:
        # A machine where no sandboxed worker can start (the real failure needs one).
        checked.append(protect)
        raise IsolationError("isolation could not start: mount /root: Operation not permitted")

    monkeypatch.setattr("drift_pipeline.orchestration.launch.check_isolation", refuse)
    scenario = write_tiny(tmp_path / "scenarios")
    home = sqlite_home(tmp_path / "home", monkeypatch)
    out = tmp_path / "data"
    with pytest.raises(IsolationError):
        run_via_dagster([scenario], [BM25], out=out)
    assert checked == [[out.resolve()]]  # the output folder is what the backends must not see
    assert not list(out.rglob("*.parquet"))
    assert not _runs(home)

    from click.testing import CliRunner

    from drift_pipeline import cli

    result = CliRunner().invoke(
        cli.main,
        ["run", str(scenario), "--backend", "bm25", "--out", str(out), "--via", "dagster"],
    )
    assert result.exit_code == EXIT_ISOLATION == cli.EXIT_ISOLATION
    assert result.output.strip().splitlines() == [
        "isolation could not start: mount /root: Operation not permitted"
    ]


def _runs(home: Path) -> list[Any]:
    """The runs recorded on the instance at ``home``."""
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return list(instance.get_runs())


@pytest.mark.slow
def test_a_backend_that_cannot_start_is_one_line_and_exit_4_through_dagster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "broken_syntax.py").write_text("class Broken:\n    def store(self\n")
    scenario = write_tiny(tmp_path / "scenarios")
    home = sqlite_home(tmp_path / "home", monkeypatch)
    done = subprocess.run(
        [DRIFT, "run", str(scenario), "--backend", "broken_syntax:Broken", "--out",
         str(tmp_path / "data"), "--via", "dagster"],
        capture_output=True,
        text=True,
        env={**os.environ, "DAGSTER_HOME": str(home), "PYTHONPATH": str(modules)},
        timeout=300,
    )  # fmt: skip
    assert done.returncode == EXIT_BACKEND_START, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("[")]
    assert lines == [
        "backend broken_syntax:Broken@hard could not start: RegistryError: backend "
        "'broken_syntax:Broken': cannot import module 'broken_syntax' (SyntaxError: '(' was "
        f"never closed (broken_syntax.py, line 2)) at {modules}/broken_syntax.py:2 "
        "(no rows written for it)"
    ], done.stderr
    # Found by the conformance check before any Dagster run: nothing was written.
    assert not list((tmp_path / "data").glob("memory_snapshots/*/*/arm=*"))


def test_a_run_whose_every_arm_fails_the_check_makes_no_dagster_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(_support.PLUGINS_ROOT))
    scenario = write_tiny(tmp_path / "scenarios")
    home = sqlite_home(tmp_path / "home", monkeypatch)
    out = tmp_path / "data"
    forgetful = Arm.parse("plugins.conformance:Forgetful@hard")
    result = run_via_dagster([scenario], [forgetful], out=out)
    assert result.cells == [] and result.generated_worlds == 0
    assert [line.split(": not scored: ")[0] for line in result.check_failures] == [forgetful.key]
    # No world, no cell, no manifest, no Dagster run: only the run's lock.
    assert sorted(p.name for p in out.iterdir()) == [".drift-run.lock"]
    assert not (home / "history").exists() or not _runs(home)
