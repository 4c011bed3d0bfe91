"""Sensors: register new worlds and arms; keep every registered cell current.

``partition_registry`` (running by default) adds a ``world`` partition for every horizon of
every scenario file and an ``arm`` partition for every registered backend under the hard gate
and every arm of ``scenarios/ablations.yaml``.

``stale_cells`` (stopped by default: turning it on runs the whole benchmark) requests, every
few minutes, the runs that are ready to bring missing or stale cells up to date, one stage at a
time (world → reference memory run → baselines → cells), and the leaderboard once no cell is
pending. Each request carries a run key made of its inputs' versions, so a step runs once per
version of its inputs, and a failed step waits for a fix upstream (or a manual rerun).
"""

import dagster as dg
from dagster._core.events import DagsterEventType

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import world_is_current

from ._steps import Ledger, Stage, Step, plan_refresh
from .jobs import ALL_JOBS
from .partitions import (
    ARM,
    WORLD,
    WorldKey,
    arms_partitions,
    missing_partitions,
    repository_partitions,
    worlds_partitions,
)
from .resources import DriftStorage, ScenarioCatalog

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


def _latest(instance: dg.DagsterInstance, asset: str) -> dict[str, int]:
    return dict(
        instance.get_latest_storage_id_by_partition(
            dg.AssetKey(asset), DagsterEventType.ASSET_MATERIALIZATION
        )
    )


def ledger(instance: dg.DagsterInstance) -> Ledger:
    """What is materialized on ``instance``, by partition."""
    records = instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records
    return Ledger(
        worlds=_latest(instance, "probes"),
        memory=_latest(instance, "memory_snapshots"),
        baselines=_latest(instance, "world_baselines"),
        evaluations=_latest(instance, "cell_metrics"),
        leaderboard=records[0].storage_id if records else None,
    )


def refresh_plan(
    instance: dg.DagsterInstance, storage: DriftStorage, scenarios: ScenarioCatalog
) -> list[Step]:
    """The ready steps for every registered cell whose scenario file is in the catalog."""
    known = {source.id: source for source in scenarios.scenarios()}
    worlds = [
        world
        for world in map(WorldKey.parse, instance.get_dynamic_partitions(WORLD))
        if world.source_id in known
    ]
    arms = [Arm.parse(key) for key in instance.get_dynamic_partitions(ARM)]
    root = storage.path()

    def stale(world: WorldKey) -> str | None:
        source = known[world.source_id]
        if world_is_current(root, source, world.horizon):
            return None
        return f"scenario-{source.content_hash[:12]}"

    return plan_refresh(worlds, arms, ledger(instance), stale)


def run_requests(steps: list[Step]) -> list[dg.RunRequest]:
    """One run request per step, on the step's job, keyed by its inputs' versions."""
    return [
        dg.RunRequest(run_key=step.run_key, job_name=step.stage.value, partition_key=step.partition)
        for step in steps
    ]


@dg.sensor(
    name="stale_cells",
    jobs=ALL_JOBS,
    minimum_interval_seconds=REFRESH_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Requests the runs that bring missing or stale cells up to date, stage by "
    "stage, then the leaderboard.",
)
def stale_cells(
    context: dg.SensorEvaluationContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> list[dg.RunRequest] | dg.SkipReason:
    """Missing or stale cells, one stage per tick, then the leaderboard."""
    steps = refresh_plan(context.instance, storage, scenarios)
    if not steps:
        return dg.SkipReason("every registered cell and the leaderboard are current")
    counts = {stage: sum(step.stage is stage for step in steps) for stage in Stage}
    context.log.info(", ".join(f"{n} {stage.value}" for stage, n in counts.items() if n))
    return run_requests(steps)
