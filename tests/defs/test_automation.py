"""Declarative automation: what the ``stale_cells`` sensor requests, tick by tick.

The conditions are evaluated as the sensor evaluates them (``evaluate_automation_conditions``,
with its cursor carried from tick to tick) on an in-memory instance; materializations are
reported without running anything, so only the conditions are under test.
"""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest

from drift_pipeline.defs.sensors import stale_cells
from drift_pipeline.memory import Arm
from drift_pipeline.orchestration.launch import build_definitions
from drift_pipeline.orchestration.partitions import CellKey, WorldKey, register_partitions
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog

from .conftest import Ticks

# Dagster's own tester selects with a beta parameter; nothing of the project's is beta here.
pytestmark = pytest.mark.filterwarnings("ignore::dagster.BetaWarning")

WORLD = WorldKey("s", "short")
BM25 = Arm.parse("bm25@hard")
CELL = CellKey(WORLD, BM25.key).partition_key
WORLD_TABLES = {"latent_profiles", "event_schedules", "transcripts", "ground_truth", "probes"}
WORLD_LEVEL = WORLD_TABLES | {"reference_memory", "world_baselines"}
CELL_LEVEL = {"memory_snapshots", "retrievals", "probe_answers", "cell_metrics", "cell_cost_curve"}


@pytest.fixture
def ticks() -> Iterator[Ticks]:
    with dg.DagsterInstance.ephemeral() as instance:
        register_partitions(instance, [WORLD], [BM25])
        yield Ticks(instance)


def test_the_sensor_evaluates_every_asset() -> None:
    assert isinstance(stale_cells, dg.AutomationConditionSensorDefinition)
    assert stale_cells.default_status is dg.DefaultSensorStatus.STOPPED
    defs = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())
    graph = defs.resolve_asset_graph()
    for key in graph.materializable_asset_keys:
        assert graph.get(key).automation_condition is not None, key.to_user_string()


def test_a_fresh_world_is_generated_with_its_baselines_and_nothing_waits_on_it_early(
    ticks: Ticks,
) -> None:
    assert ticks.tick() == {}  # the first tick only records what is there
    # The world's tables and, in the same run, what depends on them at world level.
    assert ticks.tick() == {name: {WORLD.partition_key} for name in WORLD_LEVEL}
    # Nothing is requested again while it has not run (no cell before its world exists).
    assert ticks.tick() == {}


def test_cells_follow_their_world_and_the_reports_follow_the_cells(ticks: Ticks) -> None:
    ticks.tick()
    ticks.materialize(WORLD_LEVEL, WORLD.partition_key)
    requested = ticks.tick()
    assert {name: keys for name, keys in requested.items() if name in CELL_LEVEL} == {
        name: {CELL} for name in CELL_LEVEL
    }
    assert "leaderboard" not in requested  # its inputs are still missing
    ticks.materialize(CELL_LEVEL, CELL)
    reports = ticks.tick()
    assert reports.get("leaderboard") == reports.get("cost_curves") == {None}


def test_a_new_arm_is_one_new_cell(ticks: Ticks) -> None:
    ticks.tick()
    ticks.materialize(WORLD_LEVEL, WORLD.partition_key)
    ticks.materialize(CELL_LEVEL, CELL)
    ticks.materialize({"leaderboard", "cost_curves"}, None)
    ticks.tick()
    ticks.tick()
    assert ticks.tick() == {}
    soft = Arm.parse("bm25@soft:3")
    register_partitions(ticks.instance, [], [soft])
    new = CellKey(WORLD, soft.key).partition_key
    assert ticks.tick() == {name: {new} for name in CELL_LEVEL}
