"""Planning runs in process: the jobs in the asset graph's order, on every partition asked for."""

from __future__ import annotations

import dagster as dg
import pytest

from drift_pipeline.defs.assets.baselines import world_baselines
from drift_pipeline.defs.assets.memory import reference_memory
from drift_pipeline.defs.assets.world import world_tables
from drift_pipeline.memory import Arm
from drift_pipeline.orchestration.launch import build_definitions, graph_stages
from drift_pipeline.orchestration.partitions import CellKey, WorldKey, worlds_partitions
from drift_pipeline.orchestration.plan import (
    CELL_LEVEL,
    REPORT_LEVEL,
    WORLD_LEVEL,
    plan_cells,
    stages,
)
from drift_pipeline.orchestration.project import project_assets, project_jobs
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog

WORLDS = [WorldKey("s", "short"), WorldKey("s", "long")]
BM25 = Arm.parse("bm25@hard")
SOFT = Arm.parse("bm25@soft:3")


@pytest.fixture(scope="module")
def defs() -> dg.Definitions:
    return build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())


def test_stages_follow_the_asset_graph(defs: dg.Definitions) -> None:
    ordered = graph_stages(defs)
    assert [(s.job, s.level) for s in ordered] == [
        ("world_job", WORLD_LEVEL),
        ("cell_job", CELL_LEVEL),
        ("leaderboard_job", REPORT_LEVEL),
    ]
    world = ordered[0]
    # The reference compressor's run and the baselines are world-level assets, after the
    # generated tables (the stage's sources) inside the same run.
    assert {"reference_memory", "world_baselines"} <= {k.to_user_string() for k in world.assets}
    assert {k.to_user_string() for k in world.sources} == {
        "latent_profiles",
        "event_schedules",
        "transcripts",
        "ground_truth",
        "probes",
    }


def test_plan_runs_every_world_then_every_cell_then_the_reports(defs: dg.Definitions) -> None:
    steps = plan_cells(graph_stages(defs), WORLDS, [BM25, SOFT], lambda w: w.horizon == "long")
    assert [(s.job, s.partition, s.assets) for s in steps] == [
        ("world_job", "s/short", ("reference_memory", "world_baselines")),
        ("world_job", "s/long", ()),
        *(("cell_job", CellKey(w, a.key).partition_key, ()) for w in WORLDS for a in (BM25, SOFT)),
        ("leaderboard_job", None, ()),
    ]
    quiet = plan_cells(graph_stages(defs), WORLDS[:1], [BM25], lambda w: True, reports=False)
    assert [s.job for s in quiet] == ["world_job", "cell_job"]


def test_stages_refuse_a_graph_they_cannot_order(defs: dg.Definitions) -> None:
    @dg.asset(partitions_def=worlds_partitions, deps=["cell_metrics"])
    def world_after_cells() -> None:
        """A world-level asset reading the cells: worlds and cells would depend on each other."""

    world_job = dg.define_asset_job(
        "world_job",
        selection=dg.AssetSelection.assets(
            world_tables, reference_memory, world_baselines, world_after_cells
        ),
    )
    jobs = [world_job, *(job for job in project_jobs() if job.name != "world_job")]
    looped = dg.Definitions(
        assets=[*project_assets(), world_after_cells], jobs=jobs, resources=defs.resources
    )
    with pytest.raises(ValueError, match="cycle"):
        stages(looped, jobs)
    with pytest.raises(ValueError, match=r"assets in no job: \['world_after_cells'\]"):
        stages(looped, project_jobs())
