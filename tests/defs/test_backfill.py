"""Backfills: one horizon across every scenario and arm; one ablation's arms across every world."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from drift_pipeline.defs import backfill
from drift_pipeline.defs._steps import Stage
from drift_pipeline.defs.partitions import (
    WorldKey,
    register_partitions,
    repository_arms,
    scenario_worlds,
)
from drift_pipeline.defs.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM

from .conftest import REPO_SCENARIOS, sqlite_home


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
    selection = backfill.select(instance, catalog, horizon="long")
    long_worlds = {
        w.partition_key for w in scenario_worlds(catalog.scenarios()) if w.horizon == "long"
    }
    assert {w.partition_key for w in selection.worlds} == long_worlds
    assert len(long_worlds) >= 5
    assert set(selection.arms) == {Arm.parse(k) for k in instance.get_dynamic_partitions("arm")}
    assert len(selection.cells) == len(long_worlds) * len(selection.arms)


def test_select_one_ablation(instance: dg.DagsterInstance, catalog: ScenarioCatalog) -> None:
    selection = backfill.select(instance, catalog, ablation="soft-gates")
    assert {a.key for a in selection.arms} == {
        "bm25@soft:3",
        "fact_store@soft:1",
        "temporal_graph@soft:1",
    }
    assert len(selection.worlds) == len(instance.get_dynamic_partitions("world"))
    narrowed = backfill.select(
        instance, catalog, horizon="short", ablation="soft-gates", arms=["bm25@soft:3"]
    )
    assert [a.key for a in narrowed.arms] == ["bm25@soft:3"]
    assert all(w.horizon == "short" for w in narrowed.worlds)


def test_select_explains_unknown_names(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog
) -> None:
    with pytest.raises(ValueError, match=r"'leaky' is not in ablations\.yaml"):
        backfill.select(instance, catalog, ablation="leaky")
    with pytest.raises(ValueError, match="not registered"):
        backfill.select(instance, catalog, arms=["bm25@soft:9"])
    with pytest.raises(ValueError, match="horizon 'forever'"):
        backfill.select(instance, catalog, horizon="forever")


def test_plan_generates_missing_worlds_and_scores_in_order(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog, tmp_path: Path
) -> None:
    selection = backfill.Selection(
        (WorldKey("ua-baseline-001", "long"),), (Arm.parse("bm25@soft:3"),)
    )
    steps = backfill.plan(instance, selection, catalog, DriftStorage(root=str(tmp_path)))
    assert [s.stage for s in steps] == [
        Stage.WORLD,
        Stage.MEMORY,
        Stage.BASELINES,
        Stage.EVALUATION,
        Stage.CELL,
        Stage.LEADERBOARD,
    ]
    assert steps[1].partition == steps[3].partition == f"{REFERENCE_ARM.key}|ua-baseline-001/long"
    assert steps[4].partition == "bm25@soft:3|ua-baseline-001/long"


def test_launch_creates_an_asset_backfill_of_the_selection(
    instance: dg.DagsterInstance, catalog: ScenarioCatalog
) -> None:
    selection = backfill.select(instance, catalog, horizon="long", ablation="summary-gates")
    backfill_id = backfill.launch_backfill(instance, selection, "long × summary-gates")
    record = instance.get_backfill(backfill_id)
    assert record is not None and record.is_asset_backfill
    target = record.asset_backfill_data.target_subset  # type: ignore[union-attr]
    by_asset = {
        key.to_user_string(): set(subset.get_partition_keys())
        for key, subset in target.partitions_subsets_by_asset_key.items()
    }
    worlds = {w.partition_key for w in selection.worlds}
    cells = {c.partition_key for c in selection.cells}
    references = {f"{REFERENCE_ARM.key}|{w}" for w in worlds}
    assert by_asset["probes"] == by_asset["transcripts"] == worlds
    assert by_asset["world_baselines"] == worlds
    assert by_asset["memory_snapshots"] == cells | references
    assert by_asset["cell_metrics"] == by_asset["probe_answers"] == cells | references
    assert {k.to_user_string() for k in target.non_partitioned_asset_keys} == {
        "leaderboard",
        "cost_curves",
    }


def test_command_line_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios"
    shutil.copytree(REPO_SCENARIOS, scenarios)
    sqlite_home(tmp_path / "home", monkeypatch)
    monkeypatch.setenv("DRIFT_SCENARIOS", str(scenarios))
    monkeypatch.setenv("DRIFT_DATA_ROOT", str(tmp_path / "data"))
    code = backfill.main(["--horizon", "long", "--ablation", "soft-gates", "--dry-run"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    worlds = sum(
        1
        for w in scenario_worlds(ScenarioCatalog(paths=[str(scenarios)]).scenarios())
        if w.horizon == "long"
    )
    assert out[0] == f"{worlds} worlds × 3 arms = {worlds * 3} cells"
    assert sum(line.startswith("world_job ") for line in out) == worlds
    assert sum(line.startswith("cell_job bm25@soft:3|") for line in out) == worlds
    assert out[-1] == "leaderboard_job"
    assert backfill.main(["--ablation", "leaky", "--dry-run"]) == 2
