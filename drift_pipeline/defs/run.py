"""``drift run --via dagster``: the same benchmark, executed as Dagster runs.

:func:`run_via_dagster` registers the run's worlds and arms as partitions, executes the runs
that compute every cell in process against the instance at ``DAGSTER_HOME`` (so the UI shows
every materialization, its metadata and its checks), and returns a
:class:`~drift_pipeline.pipeline.RunResult` built exactly like ``drift run``'s: the same plain
functions with the same seeds, so every figure except measured latencies is identical.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa

from drift_pipeline.evaluation import ArmData
from drift_pipeline.memory import Arm, LoopConfig
from drift_pipeline.pipeline import (
    REFERENCE_ARM,
    CellResult,
    RunOptions,
    RunResult,
    amnesiac_answers,
    load_arm,
    run_manifest,
    world_is_current,
)
from drift_pipeline.scenario import HorizonName, scenario_files
from drift_pipeline.sources import ScenarioSource
from drift_pipeline.storage import RootLike, StorageRoot, staged

from ._steps import execute, plan_cells
from ._stored import reuse_evaluations, stored_result
from .assets import ALL_ASSETS
from .jobs import ALL_JOBS
from .partitions import CellKey, WorldKey, register_partitions
from .resources import DriftStorage, MemoryLoop, ScenarioCatalog


def build_definitions(
    storage: DriftStorage, scenarios: ScenarioCatalog, loop: MemoryLoop
) -> dg.Definitions:
    """The project's assets and jobs bound to these resources (for in-process runs)."""
    return dg.Definitions(
        assets=ALL_ASSETS,
        jobs=ALL_JOBS,
        resources={"storage": storage, "scenarios": scenarios, "loop": loop},
    )


def run_via_dagster(
    scenario_paths: Sequence[str | Path],
    arms: Sequence[Arm],
    horizons: Sequence[HorizonName] = (),
    out: RootLike = "data",
    *,
    loop: LoopConfig | None = None,
    backend_options: dict[str, dict[str, Any]] | None = None,
    instance: dg.DagsterInstance | None = None,
    log: Callable[[str], None] | None = None,
) -> RunResult:
    """Run the benchmark through Dagster; same tables and figures as ``run_benchmark``.

    Args:
        scenario_paths: Scenario files or folders (as ``drift run`` takes them).
        arms: Arms to report; the reference compressor always runs (MVOT and TES need it).
        horizons: Only these horizons (empty: every declared horizon).
        out: Storage root.
        loop: Memory-loop settings (timeout, isolation, concurrency); ``protect`` is ignored,
            the storage root is always protected.
        backend_options: Constructor options per backend name.
        instance: Dagster instance; default ``DagsterInstance.get()`` (``DAGSTER_HOME``).
        log: Called with one line per run started.

    Returns:
        The reported cells (recomputed from the stored tables, equal to what the assets wrote),
        the number of worlds generated (also worlds that were current on disk but unknown to
        the instance: they are regenerated, identically, so the instance records them), and
        the run manifest (also written to
        ``<out>/_manifests/run.json``).

    Raises:
        ScenarioError: A scenario file is invalid.
        GenerationUnsupported: A scenario's paradigm has no generator yet.
        ValueError: Two files declare the same scenario id.
        RuntimeError: A run failed (naming the job and partition).
    """
    files = scenario_files(list(scenario_paths))
    scenarios = [ScenarioSource.load(path) for path in files]
    ids = [source.id for source in scenarios]
    for source in scenarios:
        source.check()
        if ids.count(source.id) > 1:
            raise ValueError(f"scenario id {source.id!r} is used by more than one file")
    settings = loop or LoopConfig()
    storage = DriftStorage(root=StorageRoot.from_url(out).url)
    catalog = ScenarioCatalog(paths=[str(path.resolve()) for path in files])
    memory_loop = MemoryLoop(
        call_timeout=settings.call_timeout,
        isolate=settings.isolate,
        concurrency=settings.concurrency,
        backend_options=backend_options or {},
    )
    root = storage.path()
    worlds = [world for source in scenarios for world in source.worlds(horizons)]
    run_arms = [REFERENCE_ARM, *(arm for arm in dict.fromkeys(arms) if arm != REFERENCE_ARM)]
    owns_instance = instance is None
    active = instance or dg.DagsterInstance.get()
    cells: list[CellResult] = []
    # The runs execute in this process: the figures their assets computed are the ones returned.
    with reuse_evaluations():
        try:
            register_partitions(active, [world.key for world in worlds], run_arms)
            recorded = active.get_materialized_partitions(dg.AssetKey("probes"))
            regenerate = {
                world.key
                for world in worlds
                if world.key.partition_key not in recorded
                or not world_is_current(root, world.source, world.horizon)
            }
            steps = plan_cells(
                [world.key for world in worlds], list(dict.fromkeys(arms)), regenerate.__contains__
            )
            execute(build_definitions(storage, catalog, memory_loop), active, steps, log)
        finally:
            if owns_instance:
                active.dispose()
        for world in worlds:
            amnesiac, reference = _amnesiac(root, world.key), _reference(root, world.key)
            for arm in run_arms:
                cell = stored_result(
                    root,
                    world.source,
                    world.horizon,
                    arm,
                    amnesiac,
                    None if arm == REFERENCE_ARM else reference,
                )
                cell.reported = arm in arms
                cells.append(cell)
    options = RunOptions(
        arms=list(arms),
        horizons=tuple(horizons),
        out=out,
        loop=settings,
        backend_options=backend_options or {},
    )
    manifest = run_manifest(scenarios, options, cells)
    with staged(root) as writer:
        writer.put_text(
            "_manifests/run.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        )
    return RunResult(
        cells=[c for c in cells if c.reported], generated_worlds=len(regenerate), manifest=manifest
    )


def _amnesiac(root: StorageRoot, world: WorldKey) -> Callable[[], pa.Table]:
    """The amnesiac's answers on ``world``, read when first asked for."""
    return cache(lambda: amnesiac_answers(root, world)[1])


def _reference(root: StorageRoot, world: WorldKey) -> Callable[[], ArmData]:
    """The reference compressor's stored data on ``world``, read when first asked for."""
    return cache(lambda: load_arm(root, CellKey(world, REFERENCE_ARM.key)))
