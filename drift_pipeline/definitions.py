"""The Dagster code location: composes ``drift_pipeline.defs`` into one ``Definitions``."""

from __future__ import annotations

import dagster as dg

from drift_pipeline.defs.assets import ALL_ASSETS
from drift_pipeline.defs.jobs import ALL_JOBS
from drift_pipeline.defs.partitions import register_at_load
from drift_pipeline.defs.resources import MemoryLoop, default_catalog, default_storage
from drift_pipeline.defs.schedules import nightly_leaderboard
from drift_pipeline.defs.sensors import changed_scenarios, partition_registry, stale_cells


@dg.definitions
def defs() -> dg.Definitions:
    """Assets, jobs, schedules, sensors and resources; registers the repository's partitions."""
    scenarios = default_catalog()
    register_at_load(scenarios)
    return dg.Definitions(
        assets=ALL_ASSETS,
        jobs=ALL_JOBS,
        schedules=[nightly_leaderboard],
        sensors=[partition_registry, stale_cells, changed_scenarios],
        resources={"storage": default_storage(), "scenarios": scenarios, "loop": MemoryLoop()},
    )
