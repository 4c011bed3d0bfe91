"""Which runs bring a set of cells up to date, in an order that respects their dependencies.

A cell's evaluation needs the world's baselines, which need the reference compressor's memory
run, which needs the world: four partitions definitions, so four kinds of run. Two planners
share the order: :func:`plan_cells` (run everything asked for: ``run_via_dagster``, backfills)
and :func:`plan_refresh` (only what is missing or older than its inputs: the nightly schedule
and the ``stale_cells`` sensor). :func:`execute` runs a plan in process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import dagster as dg

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM

from .partitions import CellKey, WorldKey


class Stage(Enum):
    """A kind of run, named by the job that performs it."""

    WORLD = "world_job"
    MEMORY = "memory_job"
    BASELINES = "baselines_job"
    EVALUATION = "evaluation_job"
    CELL = "cell_job"
    LEADERBOARD = "leaderboard_job"


@dataclass(frozen=True)
class Step:
    """One run: a stage on one partition (``None`` for the unpartitioned leaderboard).

    Attributes:
        stage: What runs.
        partition: The world or cell partition key.
        basis: What the decision rests on (the upstream version); with ``stage`` and
            ``partition`` it makes the run key, so the same step is requested once per basis.
    """

    stage: Stage
    partition: str | None
    basis: str = ""

    @property
    def run_key(self) -> str:
        """Unique per stage, partition and upstream version."""
        return f"{self.stage.value}:{self.partition or '-'}:{self.basis}"


def _world_steps(world: WorldKey, arms: Sequence[Arm], regenerate: bool) -> list[Step]:
    reference = CellKey(world, REFERENCE_ARM.key).partition_key
    steps = [Step(Stage.WORLD, world.partition_key)] if regenerate else []
    # The reference cell's own partition reports what the baselines scored, so the grid of
    # cells is complete whether or not the reference compressor was asked for.
    steps += [
        Step(Stage.MEMORY, reference),
        Step(Stage.BASELINES, world.partition_key),
        Step(Stage.EVALUATION, reference),
    ]
    steps += [
        Step(Stage.CELL, CellKey(world, arm.key).partition_key)
        for arm in arms
        if arm != REFERENCE_ARM
    ]
    return steps


def plan_cells(
    worlds: Sequence[WorldKey],
    arms: Sequence[Arm],
    regenerate: Callable[[WorldKey], bool],
    leaderboard: bool = True,
) -> list[Step]:
    """Every run that (re)computes the cells ``worlds × arms``, in dependency order.

    The reference compressor's cell and the world's baselines are always included (every arm's
    MVOT and TES need them), as in ``drift run``.

    Args:
        worlds: Worlds to run.
        arms: Arms to run on each.
        regenerate: Whether a world must be generated first.
        leaderboard: End with a leaderboard and cost-curve rebuild.
    """
    steps = [s for w in worlds for s in _world_steps(w, arms, regenerate(w))]
    if leaderboard:
        steps.append(Step(Stage.LEADERBOARD, None))
    return steps


@dataclass(frozen=True)
class Ledger:
    """Latest materialization (event storage id) per partition, for the stages' lead assets.

    Storage ids grow with every event, so "older than its input" is a comparison of ids.
    """

    worlds: Mapping[str, int]
    """``probes`` by world key."""
    memory: Mapping[str, int]
    """``memory_snapshots`` by cell key."""
    baselines: Mapping[str, int]
    """``world_baselines`` by world key."""
    evaluations: Mapping[str, int]
    """``cell_metrics`` by cell key."""
    leaderboard: int | None
    """``leaderboard``."""


def plan_refresh(
    worlds: Sequence[WorldKey],
    arms: Sequence[Arm],
    ledger: Ledger,
    stale_world: Callable[[WorldKey], str | None],
) -> list[Step]:
    """The runs that are ready now to bring missing or stale cells up to date.

    Only steps whose inputs are current are planned; a later tick plans the next stage once
    these have run. A world is stale when its scenario file changed since generation; anything
    materialized before one of its inputs was is stale too.

    Args:
        worlds: Registered worlds whose scenario files are known.
        arms: Registered arms.
        ledger: What is materialized, and when.
        stale_world: Why a materialized world must be regenerated (its scenario file changed,
            its tables are gone), or ``None`` when its stored tables are current.

    Returns:
        Ready steps, then a leaderboard rebuild if no cell step is pending and some cell is
        newer than the leaderboard.
    """
    steps: list[Step] = []
    for world in worlds:
        world_id = ledger.worlds.get(world.partition_key)
        if world_id is None:
            steps.append(Step(Stage.WORLD, world.partition_key, "missing"))
            continue
        reason = stale_world(world)
        if reason is not None:
            steps.append(Step(Stage.WORLD, world.partition_key, f"{reason}@{world_id}"))
            continue
        reference = CellKey(world, REFERENCE_ARM.key).partition_key
        reference_id = ledger.memory.get(reference, -1)
        if reference_id < world_id:
            steps.append(Step(Stage.MEMORY, reference, str(world_id)))
            continue
        baselines_id = ledger.baselines.get(world.partition_key, -1)
        if baselines_id < reference_id:
            steps.append(Step(Stage.BASELINES, world.partition_key, str(reference_id)))
            continue
        for arm in arms:
            cell = CellKey(world, arm.key).partition_key
            memory_id = ledger.memory.get(cell, -1)
            evaluation_id = ledger.evaluations.get(cell, -1)
            if arm != REFERENCE_ARM and memory_id < world_id:
                steps.append(Step(Stage.CELL, cell, str(world_id)))
            elif evaluation_id < max(memory_id, baselines_id):
                basis = str(max(memory_id, baselines_id))
                steps.append(Step(Stage.EVALUATION, cell, basis))
    newest = max(ledger.evaluations.values(), default=None)
    if not steps and newest is not None and (ledger.leaderboard or -1) < newest:
        steps.append(Step(Stage.LEADERBOARD, None, str(newest)))
    return steps


QUIET_CONSOLE: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def execute(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    steps: Sequence[Step],
    log: Callable[[str], None] | None = None,
) -> None:
    """Run ``steps`` in order, in process, against ``instance``.

    Raises:
        RuntimeError: Naming the failed step (the step's own error is chained).
    """
    jobs = {stage: defs.resolve_job_def(stage.value) for stage in {s.stage for s in steps}}
    for index, step in enumerate(steps, 1):
        if log:
            log(f"[{index}/{len(steps)}] {step.stage.value} {step.partition or ''}".rstrip())
        try:
            result = jobs[step.stage].execute_in_process(
                instance=instance,
                partition_key=step.partition,
                raise_on_error=True,
                # Every event is in the instance (and the UI); the terminal gets warnings only.
                run_config=QUIET_CONSOLE,
            )
        except Exception as error:
            raise RuntimeError(
                f"{step.stage.value} failed for {step.partition or 'all cells'}: {error}"
            ) from error
        if not result.success:
            raise RuntimeError(f"{step.stage.value} failed for {step.partition or 'all cells'}")
