"""Sensors: register new worlds and arms; keep every registered cell current.

``partition_registry`` (running by default) adds a ``world`` partition for every horizon of
every scenario file and an ``arm`` partition for every registered backend under the hard gate
and every arm of ``scenarios/ablations.yaml``.

``stale_cells`` (stopped by default: turning it on runs the whole benchmark) is Dagster's
automation-condition sensor over every asset: it requests what is missing or older than one of
its inputs, in the asset graph's order (:mod:`drift_pipeline.orchestration.automation`).
``changed_scenarios`` (stopped by default) requests a world's regeneration when its scenario
file changed since the world was generated, or its stored tables are gone; ``stale_cells`` then
reruns what depends on it.
"""

import dagster as dg

from drift_pipeline.orchestration.freshness import changed_worlds
from drift_pipeline.orchestration.partitions import (
    arms_partitions,
    missing_partitions,
    repository_partitions,
    worlds_partitions,
)
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog

from .jobs import world_job

REFRESH_INTERVAL_SECONDS = 300


@dg.sensor(
    name="partition_registry",
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds world partitions for new scenario files and arm partitions for new "
    "backends and ablation arms.",
)
def partition_registry(
    context: dg.SensorEvaluationContext, scenarios: ScenarioCatalog
) -> dg.SensorResult | dg.SkipReason:
    """Register the worlds and arms of the repository that the instance does not know yet."""
    worlds, arms = repository_partitions(scenarios)
    new_worlds, new_arms = missing_partitions(context.instance, worlds, arms)
    if not new_worlds and not new_arms:
        return dg.SkipReason(f"all {len(worlds)} worlds and {len(arms)} arms are registered")
    return dg.SensorResult(
        dynamic_partitions_requests=[
            request
            for request, keys in (
                (worlds_partitions.build_add_request(new_worlds), new_worlds),
                (arms_partitions.build_add_request(new_arms), new_arms),
            )
            if keys
        ]
    )


stale_cells = dg.AutomationConditionSensorDefinition(
    "stale_cells",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.STOPPED,
    minimum_interval_seconds=REFRESH_INTERVAL_SECONDS,
    description="Requests what is missing or older than one of its inputs, in the asset "
    "graph's order: worlds, their baselines, the cells on them, the reports.",
)
"""Evaluates every asset's automation condition (``orchestration.automation.REFRESH``)."""


@dg.sensor(
    name="changed_scenarios",
    job=world_job,
    minimum_interval_seconds=REFRESH_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Regenerates a world whose scenario file changed (or whose tables are gone).",
)
def changed_scenarios(
    context: dg.SensorEvaluationContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> list[dg.RunRequest] | dg.SkipReason:
    """Worlds whose scenario file changed since they were generated."""
    requests = changed_worlds(context.instance, storage, scenarios)
    return requests or dg.SkipReason("every generated world matches its scenario file")
