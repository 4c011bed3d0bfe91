"""Runs in the asset graph's order: which job runs on which partitions, read off the graph.

The asset graph states every dependency (a cell's evaluation on its world's baselines, those on
the reference compressor's memory run, that on the world's tables) and each job covers one
partitions definition (:mod:`.jobs`). A plan is therefore the jobs in the order their
partitions definitions depend on each other in the graph, each on every partition asked for;
inside a run Dagster orders the assets itself. Nothing here knows what an asset does: an asset
added to a job is planned with it.

This is for runs in process (``drift run --via dagster``, ``drift backfill``). The daemon needs
no plan: the ``stale_cells`` automation sensor and asset backfills read the same graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import dagster as dg

from drift_pipeline.memory import Arm

from .partitions import CellKey, WorldKey, cells_partitions, worlds_partitions

WORLD_LEVEL = "world"
"""Assets partitioned by world."""
CELL_LEVEL = "cell"
"""Assets partitioned by world × arm."""
REPORT_LEVEL = "report"
"""Unpartitioned assets (over every stored cell)."""


@dataclass(frozen=True)
class Step:
    """One run: a job on one partition (``None`` for the unpartitioned reports).

    Attributes:
        job: The job's name.
        partition: The world or cell partition key.
        assets: Only these assets of the job (empty: all of them).
    """

    job: str
    partition: str | None
    assets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stage:
    """A job and the assets it covers, all of one partitions definition.

    Attributes:
        job: The job's name.
        level: :data:`WORLD_LEVEL`, :data:`CELL_LEVEL` or :data:`REPORT_LEVEL`.
        assets: The job's assets.
        sources: Those with no upstream asset (a world's generated tables): left out of a run
            when they are current.
    """

    job: str
    level: str
    assets: frozenset[dg.AssetKey]
    sources: frozenset[dg.AssetKey]


def _level(partitions_def: dg.PartitionsDefinition | None, key: dg.AssetKey) -> str:
    if partitions_def is None:
        return REPORT_LEVEL
    if partitions_def == worlds_partitions:
        return WORLD_LEVEL
    if partitions_def == cells_partitions:
        return CELL_LEVEL
    raise ValueError(f"asset {key.to_user_string()}: partitioned by neither world nor cell")


def stages(defs: dg.Definitions, jobs: Sequence[dg.UnresolvedAssetJobDefinition]) -> list[Stage]:
    """The jobs in dependency order of their partitions definitions.

    Args:
        defs: The definitions (their asset graph).
        jobs: Asset jobs, each selecting assets of one partitions definition, together every
            materializable asset once.

    Raises:
        ValueError: If a job mixes partitions definitions, an asset is in no job or in two, or
            the partitions definitions depend on each other in a cycle.
    """
    graph = defs.resolve_asset_graph()
    levels = {
        key: _level(graph.get(key).partitions_def, key) for key in graph.materializable_asset_keys
    }
    by_level: dict[str, Stage] = {}
    covered: set[dg.AssetKey] = set()
    for job in jobs:
        keys = frozenset(job.selection.resolve(graph))
        found = {levels[key] for key in keys}
        if len(found) != 1:
            raise ValueError(f"job {job.name}: its assets are partitioned differently: {found}")
        level = found.pop()
        if level in by_level or keys & covered:
            raise ValueError(f"job {job.name}: another job covers {level} assets already")
        covered |= keys
        sources = frozenset(k for k in keys if not graph.get(k).parent_keys)
        by_level[level] = Stage(job.name, level, keys, sources)
    if uncovered := set(levels) - covered:
        raise ValueError(f"assets in no job: {sorted(k.to_user_string() for k in uncovered)}")
    before: dict[str, set[str]] = {level: set() for level in by_level}
    for key, level in levels.items():
        before[level] |= {
            levels[p] for p in graph.get(key).parent_keys if levels.get(p, level) != level
        }
    ordered: list[Stage] = []
    while before:
        ready = sorted(level for level, needs in before.items() if not needs)
        if not ready:
            raise ValueError(f"partitions definitions depend on each other in a cycle: {before}")
        for level in ready:
            ordered.append(by_level[level])
            del before[level]
        for needs in before.values():
            needs.difference_update(ready)
    return ordered


def plan_cells(
    stages_in_order: Sequence[Stage],
    worlds: Sequence[WorldKey],
    arms: Sequence[Arm],
    regenerate: Callable[[WorldKey], bool],
    reports: bool = True,
) -> list[Step]:
    """Every run that (re)computes the cells ``worlds × arms`` and what they depend on.

    Args:
        stages_in_order: From :func:`stages`.
        worlds: Worlds to run (every world-level asset on each: tables, baselines).
        arms: Arms to run on each world (cell partitions).
        regenerate: Whether a world's generated tables must be (re)written; when not, its
            world-level run leaves them out and computes only what depends on them.
        reports: End with the unpartitioned reports.
    """
    steps: list[Step] = []
    for stage in stages_in_order:
        if stage.level == WORLD_LEVEL:
            for world in worlds:
                keys = stage.assets if regenerate(world) else stage.assets - stage.sources
                subset = (
                    () if keys == stage.assets else tuple(sorted(k.to_user_string() for k in keys))
                )
                if keys:
                    steps.append(Step(stage.job, world.partition_key, subset))
        elif stage.level == CELL_LEVEL:
            steps += [
                Step(stage.job, CellKey(w, a.key).partition_key) for w in worlds for a in arms
            ]
        elif reports:
            steps.append(Step(stage.job, None))
    return steps
