"""Backfills: one horizon across every scenario and arm; one ablation's arms across every world.

Selections, their runs in order, an asset backfill for the daemon, and ``drift backfill``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main as drift
from drift_pipeline.memory import Arm
from drift_pipeline.orchestration import launch, selection
from drift_pipeline.orchestration.partitions import (
    WorldKey,
    register_partitions,
    repository_arms,
    scenario_worlds,
)
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import REFERENCE_ARM

from .conftest import REPO_SCENARIOS, TINY_ID, sqlite_home, write_tiny


@pytest.fixture
def catalog() -> ScenarioCatalog:
    return ScenarioCatalog(paths=[str(REPO_SCENARIOS)])


@pytest.fixture
def instance(catalog: ScenarioCatalog) -> dg.DagsterInstance:
    instance = dg.DagsterInstance.ephemeral()
    register_partitions(
        instance, scenario_worlds(catalog.scenarios()), repository_arms(catalog.ablations())
    )
    return instance


def test_select_one_horizon_across_scenarios_and_arms(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog
) -> None:
    chosen = selection.select(instance, catalog, horizon="long")
    long_worlds = {
        w.partition_key for w in scenario_worlds(catalog.scenarios()) if w.horizon == "long"
    }
    assert {w.partition_key for w in chosen.worlds} == long_worlds
    assert len(long_worlds) >= 5
    assert set(chosen.arms) == {Arm.parse(k) for k in instance.get_dynamic_partitions("arm")}
    assert REFERENCE_ARM not in chosen.arms  # a world baseline, not an arm
    assert len(chosen.cells) == len(long_worlds) * len(chosen.arms)


def test_select_one_ablation(instance: dg.DagsterInstance, catalog: ScenarioCatalog) -> None:
    chosen = selection.select(instance, catalog, ablation="soft-gates")
    assert {a.key for a in chosen.arms} == {
        "bm25@soft:3",
        "fact_store@soft:1",
        "temporal_graph@soft:1",
    }
    assert len(chosen.worlds) == len(instance.get_dynamic_partitions("world"))
    narrowed = selection.select(
        instance, catalog, horizon="short", ablation="soft-gates", arms=["bm25@soft:3"]
    )
    assert [a.key for a in narrowed.arms] == ["bm25@soft:3"]
    assert all(w.horizon == "short" for w in narrowed.worlds)


def test_select_explains_unknown_names(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog
) -> None:
    with pytest.raises(ValueError, match=r"'leaky' is not in ablations\.yaml"):
        selection.select(instance, catalog, ablation="leaky")
    with pytest.raises(ValueError, match="not registered"):
        selection.select(instance, catalog, arms=["bm25@soft:9"])
    with pytest.raises(ValueError, match="horizon 'forever'"):
        selection.select(instance, catalog, horizon="forever")


def test_plan_generates_missing_worlds_and_scores_in_order(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog, tmp_path: Path
) -> None:
    world = WorldKey("ua-baseline-001", "long")
    chosen = selection.Selection((world,), (Arm.parse("bm25@soft:3"),))
    steps = launch.plan_selection(instance, chosen, catalog, DriftStorage(root=str(tmp_path)))
    # One run per world (tables, reference compressor, baselines), per cell, then the reports.
    assert [(s.job, s.partition, s.assets) for s in steps] == [
        ("world_job", world.partition_key, ()),
        ("cell_job", "bm25@soft:3|ua-baseline-001/long", ()),
        ("leaderboard_job", None, ()),
    ]


def test_launch_creates_an_asset_backfill_of_the_selection(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog
) -> None:
    chosen = selection.select(instance, catalog, horizon="long", ablation="summary-gates")
    backfill_id = launch.launch_backfill(instance, chosen, "long × summary-gates")
    record = instance.get_backfill(backfill_id)
    assert record is not None and record.is_asset_backfill
    target = record.asset_backfill_data.target_subset  # type: ignore[union-attr]
    by_asset = {
        key.to_user_string(): set(subset.get_partition_keys())
        for key, subset in target.partitions_subsets_by_asset_key.items()
    }
    worlds = {w.partition_key for w in chosen.worlds}
    cells = {c.partition_key for c in chosen.cells}
    assert by_asset["probes"] == by_asset["transcripts"] == worlds
    assert by_asset["reference_memory"] == by_asset["world_baselines"] == worlds
    assert by_asset["memory_snapshots"] == cells
    assert by_asset["cell_metrics"] == by_asset["probe_answers"] == cells
    assert {k.to_user_string() for k in target.non_partitioned_asset_keys} == {
        "leaderboard",
        "cost_curves",
    }


def test_drift_backfill_dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = tmp_path / "scenarios"
    shutil.copytree(REPO_SCENARIOS, scenarios)
    sqlite_home(tmp_path / "home", monkeypatch)
    monkeypatch.setenv("DRIFT_SCENARIOS", str(scenarios))
    monkeypatch.setenv("DRIFT_DATA_ROOT", str(tmp_path / "data"))
    runner = CliRunner()
    done = runner.invoke(
        drift, ["backfill", "--horizon", "long", "--ablation", "soft-gates", "--dry-run"]
    )
    assert done.exit_code == 0, done.output
    out = done.output.splitlines()
    worlds = sum(
        1
        for w in scenario_worlds(ScenarioCatalog(paths=[str(scenarios)]).scenarios())
        if w.horizon == "long"
    )
    assert out[0] == f"{worlds} worlds × 3 arms = {worlds * 3} cells"
    assert sum(line.startswith("world_job ") for line in out) == worlds
    assert sum(line.startswith("cell_job bm25@soft:3|") for line in out) == worlds
    assert out[-1] == "leaderboard_job"
    unknown = runner.invoke(drift, ["backfill", "--ablation", "leaky", "--dry-run"])
    assert unknown.exit_code == 2
    assert "ablation 'leaky' is not in ablations.yaml" in unknown.output


def test_drift_backfill_needs_dagster_home() -> None:
    done = CliRunner().invoke(drift, ["backfill", "--dry-run"])
    assert done.exit_code == 2
    assert "DAGSTER_HOME" in done.output


@pytest.mark.slow
def test_drift_backfill_runs_a_selection_on_the_stock_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = tmp_path / "scenarios"
    write_tiny(scenarios)
    home = sqlite_home(tmp_path / "home", monkeypatch)
    monkeypatch.setenv("DRIFT_SCENARIOS", str(scenarios))
    monkeypatch.setenv("DRIFT_DATA_ROOT", str(tmp_path / "data"))
    done = CliRunner().invoke(drift, ["backfill", "--arm", "bm25@hard"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0] == "1 worlds × 1 arms = 1 cells"
    with dg.DagsterInstance.from_config(str(home)) as instance:
        cells = instance.get_materialized_partitions(dg.AssetKey("cell_metrics"))
        assert cells == {f"bm25@hard|{TINY_ID}/short"}
        assert instance.get_materialized_partitions(dg.AssetKey("world_baselines")) == {
            f"{TINY_ID}/short"
        }
        assert instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records
    assert (home / "history" / "runs.db").is_file()  # Dagster's own SQLite, under DAGSTER_HOME
    board = (tmp_path / "data" / "_reports" / "leaderboard.md").read_text()
    assert "bm25@hard" in board and REFERENCE_ARM.key in board
