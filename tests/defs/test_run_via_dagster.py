"""``run_via_dagster`` against the ``DAGSTER_HOME`` instance equals ``run_benchmark``.

Both paths call the same plain functions with the same seeds on a scenario that is not in the
repository. Every figure is identical except measured latencies (the ``*_ms_*`` percentiles and
the two scores built on them, LPS and DRIFT-E), which no two runs share.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest

from drift_pipeline.defs.schedules import nightly_leaderboard
from drift_pipeline.evaluation import OFFLINE_SCORING, load_shipped_figures
from drift_pipeline.memory import Arm
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.launch import build_definitions, run_via_dagster
from drift_pipeline.orchestration.partitions import register_partitions
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog
from drift_pipeline.pipeline import CellResult, RunOptions, RunResult, run_benchmark, stored_cells
from drift_pipeline.report import (
    EXACT_PATH_LINE,
    latest_record,
    load_record,
    render_leaderboard,
    standings,
)
from drift_pipeline.sources import ScenarioSource
from drift_pipeline.storage import COST_CURVES, PROBE_ANSWERS, WORLD_TABLES, glob

from .conftest import TINY_ID, Ticks, sqlite_home, write_tiny

ARMS = [Arm.parse("bm25@hard"), Arm.parse("fact_store@soft:1")]
MEASURED = ("_ms_p50", "_ms_p95", "_ms_p99")
FROM_LATENCY = {"lps", "drift_e"}
EVERY_ASSET = {
    "latent_profiles",
    "event_schedules",
    "transcripts",
    "ground_truth",
    "probes",
    "memory_snapshots",
    "retrievals",
    "reference_memory",
    "world_baselines",
    "probe_answers",
    "cell_metrics",
    "cell_cost_curve",
    "leaderboard",
    "cost_curves",
}


def _deterministic(cell: CellResult) -> dict[tuple[str, int | None], tuple[Any, ...]]:
    return {
        (row.metric, row.checkpoint): (row.value, row.ci_low, row.ci_high, row.n)
        for row in cell.metrics.rows
        if not row.metric.endswith(MEASURED) and row.metric not in FROM_LATENCY
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("via-dagster")
    scenario = write_tiny(folder / "scenarios")
    started = time.perf_counter()
    direct = run_benchmark(
        [ScenarioSource.load(scenario)], RunOptions(arms=ARMS, out=folder / "direct")
    )
    direct_seconds = time.perf_counter() - started
    with pytest.MonkeyPatch.context() as monkeypatch:
        home = sqlite_home(folder / "home", monkeypatch)
        started = time.perf_counter()
        via = run_via_dagster([scenario], ARMS, out=folder / "dagster")
        via_seconds = time.perf_counter() - started
        print(f"\nrun_benchmark {direct_seconds:.1f} s, run_via_dagster {via_seconds:.1f} s")
        with dg.DagsterInstance.get() as instance:
            yield {
                "folder": folder,
                "scenario": scenario,
                "home": home,
                "direct": direct,
                "via": via,
                "instance": instance,
            }


@pytest.mark.slow
def test_same_cells_and_figures(runs: dict[str, Any]) -> None:
    direct: RunResult = runs["direct"]
    via: RunResult = runs["via"]
    assert [c.arm for c in via.cells] == [c.arm for c in direct.cells] == ARMS
    for a, b in zip(direct.cells, via.cells, strict=True):
        assert _deterministic(a) == _deterministic(b), a.arm.key
        for name in FROM_LATENCY:
            assert b.metrics.get(name).value is not None
        assert a.faults == b.faults == []
        assert (a.replicates, a.isolation, a.backend_version) == (
            b.replicates,
            b.isolation,
            b.backend_version,
        )
    assert via.generated_worlds == direct.generated_worlds == 1
    assert via.manifest == direct.manifest


@pytest.mark.slow
def test_same_tables(runs: dict[str, Any]) -> None:
    folder: Path = runs["folder"]
    for table in (*WORLD_TABLES, PROBE_ANSWERS, COST_CURVES):
        direct = sorted((folder / "direct").glob(f"{table.name}/**/*.parquet"))
        via = sorted((folder / "dagster").glob(f"{table.name}/**/*.parquet"))
        assert [p.relative_to(folder / "direct") for p in direct] == [
            p.relative_to(folder / "dagster") for p in via
        ]
        for a, b in zip(direct, via, strict=True):
            assert pq.read_table(a).equals(pq.read_table(b)), str(a)
    assert (folder / "dagster" / "_manifests" / "run.json").read_text() == (
        folder / "direct" / "_manifests" / "run.json"
    ).read_text()
    assert glob(folder / "dagster", PROBE_ANSWERS).endswith("probe_answers/**/*.parquet")


@pytest.mark.slow
def test_instance_has_every_asset_and_the_reports(runs: dict[str, Any]) -> None:
    instance: dg.DagsterInstance = runs["instance"]
    assert (runs["home"] / "history" / "runs.db").is_file()  # Dagster's SQLite, in DAGSTER_HOME
    materialized = {
        key.to_user_string()
        for key in instance.get_asset_keys()
        if instance.fetch_materializations(key, limit=1).records
    }
    assert materialized == EVERY_ASSET
    cells = instance.get_materialized_partitions(dg.AssetKey("cell_metrics"))
    assert cells == {f"{arm.key}|{TINY_ID}/short" for arm in ARMS}
    # The reference compressor ran once, as the world's baseline.
    for asset in ("reference_memory", "world_baselines"):
        assert instance.get_materialized_partitions(dg.AssetKey(asset)) == {f"{TINY_ID}/short"}
    board = instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records[0]
    metadata = board.asset_materialization.metadata  # type: ignore[union-attr]
    assert metadata[md.CELLS].value == 3  # the two arms and the reference compressor
    table = metadata["leaderboard"].value
    assert all(arm.key in str(table) for arm in ARMS)
    curves = instance.fetch_materializations(dg.AssetKey("cost_curves"), limit=1).records[0]
    curve_meta = curves.asset_materialization.metadata  # type: ignore[union-attr]
    assert "| short | bm25@hard |" in str(curve_meta["cost_curves"].value)
    plot = curve_meta["plot"].value
    assert isinstance(plot, dict) and plot["mark"]["type"] == "line"


@pytest.mark.slow
def test_the_reports_ride_in_the_last_cell_s_run_with_its_checks(runs: dict[str, Any]) -> None:
    instance: dg.DagsterInstance = runs["instance"]
    # One world run, one run per cell, the reports in the last of them (not a run of their own).
    records = sorted(instance.get_run_records(), key=lambda r: r.create_timestamp)
    assert len(records) == 1 + len(ARMS)
    last = records[-1].dagster_run.run_id
    materialized = {
        (e.asset_materialization.asset_key.to_user_string(), e.asset_materialization.partition)
        for e in instance.all_logs(last, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        if e.asset_materialization is not None
    }
    cell = f"{ARMS[-1].key}|{TINY_ID}/short"
    assert ("leaderboard", None) in materialized and ("cost_curves", None) in materialized
    assert ("cell_metrics", cell) in materialized
    checks = {
        e.dagster_event.event_specific_data.check_name  # type: ignore[union-attr]
        for e in instance.all_logs(last, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        if e.dagster_event is not None
    }
    # The cell's own checks, and the leaderboard's trust checks on the finished board.
    assert checks == {"gate_lineage", "rows_per_session", "sanity_arms", "fault_rate_validity"}


@pytest.mark.slow
def test_the_leaderboard_asset_names_its_reader_and_judge(runs: dict[str, Any]) -> None:
    instance: dg.DagsterInstance = runs["instance"]
    board = instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records[0]
    metadata = board.asset_materialization.metadata  # type: ignore[union-attr]
    assert metadata["reader"].value == OFFLINE_SCORING.reader
    assert metadata["judge"].value == "context@2"
    [scoring] = metadata["scoring"].value  # type: ignore[misc]
    assert scoring["reader"] == OFFLINE_SCORING.reader and scoring["note"] == EXACT_PATH_LINE
    shipped = load_shipped_figures()
    assert shipped is not None
    others = shipped.by_name("reader_check_others")
    assert others is not None
    assert metadata[md.READER_ACCURACY].value == pytest.approx(others.accuracy)
    assert metadata[md.READER_FALSE_ACCEPT_RATE].value == pytest.approx(others.false_accept_rate)
    held_out = shipped.by_name("held_out")
    assert held_out is not None and held_out.reader == OFFLINE_SCORING.reader
    assert metadata[md.READER_HELD_OUT_ACCURACY].value == pytest.approx(held_out.accuracy)
    rate = held_out.false_accept_rate
    assert metadata[md.READER_HELD_OUT_FALSE_ACCEPT_RATE].value == pytest.approx(rate)
    assert EXACT_PATH_LINE in str(metadata["leaderboard"].value)
    # The board's record: every row's verification rests on the worlds' answerability audit.
    record = load_record(latest_record(runs["folder"] / "dagster"))
    assert all(row["verification"]["checks"]["audit"] is True for row in record["leaderboard"])


@pytest.mark.slow
def test_leaderboard_equals_a_recomputation(runs: dict[str, Any]) -> None:
    # The run's leaderboard took the figures its evaluations computed; recomputed here (outside
    # reuse_evaluations) from the stored answers and costs alone, it must come out the same.
    storage = DriftStorage(root=str(runs["folder"] / "dagster"))
    with storage.connect() as con:
        cells, skipped = stored_cells(con, storage.path())
    assert skipped == [] and len(cells) == 3
    written = (runs["folder"] / "dagster" / "_reports" / "leaderboard.md").read_text()
    assert written == render_leaderboard(standings(cells), markdown=True) + "\n"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dagster.BetaWarning")
def test_automation_rests_then_picks_up_a_new_arm(runs: dict[str, Any]) -> None:
    instance: dg.DagsterInstance = runs["instance"]
    schedule = nightly_leaderboard(dg.build_schedule_context(instance=instance))
    assert isinstance(schedule, dg.SkipReason)  # the leaderboard is newer than every cell
    ticks = Ticks(instance)
    assert ticks.tick() == {}
    assert ticks.tick() == {}  # everything is current
    register_partitions(instance, [], [Arm.parse("amnesiac@hard")])
    new = f"amnesiac@hard|{TINY_ID}/short"
    cell_assets = {"memory_snapshots", "retrievals", "probe_answers", "cell_metrics"}
    assert ticks.tick() == {name: {new} for name in cell_assets | {"cell_cost_curve"}}


@pytest.mark.slow
def test_the_nightly_schedule_rebuilds_a_stale_leaderboard(runs: dict[str, Any]) -> None:
    # Last in this module: it leaves a cell newer than the leaderboard it then rebuilds.
    instance: dg.DagsterInstance = runs["instance"]
    storage = DriftStorage(root=str(runs["folder"] / "dagster"))
    cell = f"{ARMS[0].key}|{TINY_ID}/short"
    instance.report_runless_asset_event(dg.AssetMaterialization("cell_metrics", partition=cell))
    request = nightly_leaderboard(dg.build_schedule_context(instance=instance))
    assert isinstance(request, dg.RunRequest) and request.run_key
    defs = build_definitions(storage, ScenarioCatalog(paths=[str(runs["scenario"])]), MemoryLoop())
    job = defs.resolve_job_def(nightly_leaderboard.job_name)
    assert job.execute_in_process(instance=instance, tags=request.tags).success
    again = nightly_leaderboard(dg.build_schedule_context(instance=instance))
    assert isinstance(again, dg.SkipReason)


def test_a_report_step_folds_into_the_partitioned_run_before_it() -> None:
    from drift_pipeline.orchestration.launch import _with_reports_folded
    from drift_pipeline.orchestration.plan import Step

    defs = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())
    world, cell = f"{TINY_ID}/short", f"bm25@hard|{TINY_ID}/short"
    steps = [Step("world_job", world), Step("cell_job", cell), Step("leaderboard_job", None)]
    jobs = {name: defs.resolve_job_def(name) for name in {s.job for s in steps}}
    runs = _with_reports_folded(defs, steps, jobs)
    assert [label for label, *_ in runs] == [
        f"world_job {world}",
        f"cell_job {cell} + leaderboard_job",
    ]
    assert runs[0][2] is jobs["world_job"] and runs[0][3] is None
    _, step, job, keys = runs[1]
    assert step.partition == cell and job.name == "__ASSET_JOB"
    assert keys is not None
    chosen = {key.to_user_string() for key in keys}
    assert {"memory_snapshots", "cell_metrics", "leaderboard", "cost_curves"} <= chosen
    assert "world_baselines" not in chosen
    # Reports alone (nothing partitioned before them) keep their own run.
    alone = _with_reports_folded(defs, [Step("leaderboard_job", None)], jobs)
    assert [(label, keys) for label, _, _, keys in alone] == [("leaderboard_job", None)]
