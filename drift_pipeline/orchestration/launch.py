"""The launcher: runs of the project's jobs against a Dagster instance.

* :func:`run_via_dagster` (``drift run --via dagster``): the benchmark as Dagster runs in this
  process, returning the same :class:`~drift_pipeline.pipeline.RunResult` as ``drift run``;
* :func:`run_selection` (``drift backfill``): a selection of worlds × arms, run by run, now;
* :func:`launch_backfill` (``drift backfill --launch``): one asset backfill record that the
  daemon of ``dagster dev`` executes in the asset graph's order.

Runs in process follow :func:`.plan.plan_cells`, read off the asset graph; every run is recorded
on the instance, so the UI shows each materialization, its metadata and its checks.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa

from drift_pipeline.evaluation import ArmData
from drift_pipeline.memory import Arm, BackendStartError, LoopConfig, check_isolation
from drift_pipeline.pipeline import (
    REFERENCE_ARM,
    RUN_MANIFEST,
    ArmChecks,
    CellResult,
    RunOptions,
    RunResult,
    amnesiac_answers,
    check_arms,
    load_arm,
    reuse_evaluations,
    run_manifest,
    select_horizons,
    stored_result,
    world_is_current,
)
from drift_pipeline.scenario import HorizonName, scenario_files
from drift_pipeline.sources import (
    ScenarioSource,
    WorldSource,
    names_imported_data,
    open_source,
)
from drift_pipeline.storage import RootLike, StorageRoot, exclusive_root, staged

from .partitions import CellKey, WorldKey, register_partitions, repository_partitions
from .plan import CELL_LEVEL, WORLD_LEVEL, Stage, Step, plan_cells, stages
from .project import project_assets, project_jobs
from .resources import DriftStorage, MemoryLoop, ScenarioCatalog, default_catalog, default_storage
from .selection import Selection, select, title
from .sqlite_hold import hold_open

QUIET_CONSOLE: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
"""Every event is in the instance (and the UI); the terminal gets warnings only."""


class InstanceUnavailable(RuntimeError):
    """The Dagster instance's database went away (or was never reachable) during a run.

    The message is one line: the database, the reason, and that a rerun resumes. Every cell
    already written stays (each is committed whole), so the same command completes the run.
    """


class InstanceMisconfigured(ValueError):
    """The ``DAGSTER_HOME`` instance cannot be loaded (no such folder, a bad ``dagster.yaml``).

    The message is one line: where the instance is and Dagster's first line on why. Nothing
    was run.
    """


def load_instance() -> dg.DagsterInstance:
    """The ``DAGSTER_HOME`` instance, or one line saying why it cannot be loaded.

    Raises:
        InstanceMisconfigured: Dagster refused the folder or its configuration.
    """
    import yaml

    try:
        return dg.DagsterInstance.get()
    except (dg.DagsterError, yaml.YAMLError) as error:
        home = os.environ.get("DAGSTER_HOME", "")
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        mark = getattr(error, "problem_mark", None)
        if isinstance(error, yaml.MarkedYAMLError) and mark is not None:
            reason = f"{mark.name}:{mark.line + 1}:{mark.column + 1}: {error.problem}"
        raise InstanceMisconfigured(
            f"the Dagster instance at DAGSTER_HOME={home} cannot be loaded: {reason}"
        ) from None


_ADDRESS = re.compile(r'at "([^"]+)", port (\d+)')


def instance_database_error(
    error: BaseException, address: str | None = None
) -> InstanceUnavailable | None:
    """The one-line error for ``error`` if a database of the instance caused it, else ``None``.

    Looks through the chain of causes: Dagster wraps the driver's error (and its own
    give-up after retrying) in errors of its own, each with a long traceback.

    Args:
        error: What the run raised.
        address: ``host:port`` of the instance's database, for errors that do not name it
            (a connection the server closed mid-statement says only that).
    """
    import sqlalchemy.exc

    seen: set[int] = set()
    found: BaseException | None = None
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlalchemy.exc.DBAPIError) or (
            type(current).__name__ == "DagsterPostgresException"
        ):
            found = current  # the innermost such error carries the driver's own words
        current = current.__cause__ or current.__context__
    if found is None:
        return None
    text = str(getattr(found, "orig", None) or found).strip()
    first = text.splitlines()[0] if text else type(found).__name__
    named = _ADDRESS.search(first)
    if named is not None:
        address = f"{named[1]}:{named[2]}"
    where = f"PostgreSQL at {address}" if address else "its database"
    reason = first.split(" failed: ", 1)[-1]
    return InstanceUnavailable(
        f"the Dagster instance's database is unreachable ({where}): {reason}; the tables "
        "written so far are kept: once it is back, rerun the same command to resume"
    )


def _database_address(instance: dg.DagsterInstance) -> str | None:
    """``host:port`` of a PostgreSQL instance's run storage (``None`` for other storages)."""
    import sqlalchemy.engine

    storage: object = instance.run_storage
    url = getattr(storage, "postgres_url", None) or getattr(
        getattr(storage, "_run_storage", None), "postgres_url", None
    )
    if not isinstance(url, str):
        return None
    parsed = sqlalchemy.engine.make_url(url)
    return f"{parsed.host}:{parsed.port or 5432}" if parsed.host else None


def build_definitions(
    storage: DriftStorage, scenarios: ScenarioCatalog, loop: MemoryLoop
) -> dg.Definitions:
    """The project's assets and jobs bound to these resources (for in-process runs)."""
    return dg.Definitions(
        assets=project_assets(),
        jobs=project_jobs(),
        resources={"storage": storage, "scenarios": scenarios, "loop": loop},
    )


def graph_stages(defs: dg.Definitions) -> list[Stage]:
    """The project's jobs in the asset graph's order (:func:`.plan.stages`)."""
    return stages(defs, project_jobs())


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
    jobs = {name: defs.resolve_job_def(name) for name in {s.job for s in steps}}
    runs = _with_reports_folded(defs, steps, jobs)
    with hold_open(instance) as held:
        for index, (label, step, job, selection) in enumerate(runs, 1):
            where = step.partition or "all cells"
            if label != f"{step.job} {step.partition or ''}".rstrip():  # the reports rode along
                where = f"{where} (with the reports)"
            if log:
                log(f"[{index}/{len(runs)}] {label}")
            try:
                with held.run() as run_id:
                    result = job.execute_in_process(
                        instance=instance,
                        partition_key=step.partition,
                        asset_selection=selection,
                        raise_on_error=True,
                        run_config=QUIET_CONSOLE,
                        run_id=run_id,
                    )
            except Exception as error:
                raise RuntimeError(f"{step.job} failed for {where}: {error}") from error
            if not result.success:
                raise RuntimeError(f"{step.job} failed for {where}")


def _with_reports_folded(
    defs: dg.Definitions, steps: Sequence[Step], jobs: Mapping[str, dg.JobDefinition]
) -> list[tuple[str, Step, dg.JobDefinition, list[dg.AssetKey] | None]]:
    """Each run to make: its label, step, job and asset selection (``None``: the whole job).

    Every run has a fixed cost in Dagster's storage (the run record, its own event database,
    its start and success events, compute-log capture): a seventh of a six-arm world's plan.
    Dagster lets one run hold one partition's assets together with unpartitioned ones, so the
    unpartitioned reports that end a plan ride in the run before them (the last cell's), in the
    project's implicit asset job, which holds both; inside that run the asset graph still puts
    the reports after the cell they depend on. Otherwise the runs are the plan's steps.
    """
    runs: list[tuple[str, Step, dg.JobDefinition, list[dg.AssetKey] | None]] = []
    for step in steps:
        job = jobs[step.job]
        selection = [dg.AssetKey(k) for k in step.assets] or None
        label = f"{step.job} {step.partition or ''}".rstrip()
        if runs and step.partition is None and runs[-1][1].partition is not None:
            before, previous, previous_job, previous_selection = runs[-1]
            keys = list(previous_selection or _asset_keys(previous_job))
            keys += [k for k in selection or _asset_keys(job) if k not in keys]
            implicit = defs.resolve_implicit_global_asset_job_def()
            runs[-1] = (f"{before} + {label}", previous, implicit, keys)
            continue
        runs.append((label, step, job, selection))
    return runs


def _asset_keys(job: dg.JobDefinition) -> list[dg.AssetKey]:
    return sorted(job.asset_layer.selected_asset_keys)


def plan_selection(
    instance: dg.DagsterInstance,
    selection: Selection,
    catalog: ScenarioCatalog,
    storage: DriftStorage,
) -> list[Step]:
    """The runs of the selection in order; worlds missing or stale are generated first.

    Raises:
        ValueError: A selected world has no scenario file in the catalog.
    """
    recorded = instance.get_materialized_partitions(dg.AssetKey("probes"))
    known = {source.id: source for source in catalog.scenarios()}
    root = storage.path()

    def regenerate(world: WorldKey) -> bool:
        source = known.get(world.source_id)
        if source is None:
            raise ValueError(f"world {world}: no scenario file with that id in the catalog")
        return world.partition_key not in recorded or not world_is_current(
            root, source, world.horizon
        )

    defs = build_definitions(storage, catalog, MemoryLoop())
    return plan_cells(graph_stages(defs), selection.worlds, selection.arms, regenerate)


def run_selection(
    instance: dg.DagsterInstance,
    selection: Selection,
    storage: DriftStorage,
    catalog: ScenarioCatalog,
    loop: MemoryLoop | None = None,
    log: Callable[[str], None] | None = None,
) -> list[Step]:
    """Execute the selection now, run by run; returns the steps run."""
    steps = plan_selection(instance, selection, catalog, storage)
    execute(build_definitions(storage, catalog, loop or MemoryLoop()), instance, steps, log)
    return steps


def launch_backfill(instance: dg.DagsterInstance, selection: Selection, title: str) -> str:
    """Create an asset backfill of the selection for the daemon; returns its id.

    Targets every world-level asset of the selected worlds (tables, the reference compressor's
    run, baselines), every cell-level asset of the selected cells and the reports. Dagster
    orders the runs by the asset graph's partition mappings.

    Uses Dagster's backfill records directly (``PartitionBackfill``), which the UI's "Launch
    backfill" also creates; it is not a public API and may move between Dagster releases
    (``tests/defs/test_backfill.py`` launches one).
    """
    from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    defs = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())
    graph = defs.resolve_asset_graph()
    keys_by_level = {
        WORLD_LEVEL: [w.partition_key for w in selection.worlds],
        CELL_LEVEL: [c.partition_key for c in selection.cells],
    }
    subsets = {}
    unpartitioned: set[dg.AssetKey] = set()
    for stage in graph_stages(defs):
        for key in stage.assets:
            partitions_def = graph.get(key).partitions_def
            if partitions_def is None:
                unpartitioned.add(key)
            else:
                keys = keys_by_level[stage.level]
                subsets[key] = partitions_def.subset_with_partition_keys(keys)
    target = AssetGraphSubset(  # type: ignore[call-arg]
        partitions_subsets_by_asset_key=subsets, non_partitioned_asset_keys=unpartitioned
    )
    backfill_id = make_new_backfill_id()
    instance.add_backfill(
        PartitionBackfill.from_asset_graph_subset(
            backfill_id=backfill_id,
            backfill_timestamp=time.time(),
            tags={"drift/selection": title[:63]},
            dynamic_partitions_store=instance,
            asset_graph_subset=target,
            title=title,
            description=f"{len(selection.worlds)} worlds × {len(selection.arms)} arms",
            run_config=None,
        )
    )
    return backfill_id


def _absolute(text: str) -> str:
    """``PREFIX:PATH[?options]`` with its path made absolute."""
    prefix, _, rest = text.partition(":")
    path, query = rest, ""
    if not Path(rest).exists() and "?" in rest:
        path, _, query = rest.rpartition("?")
    return f"{prefix}:{Path(path).resolve()}" + (f"?{query}" if query else "")


def _backend_start_error(error: BaseException) -> BackendStartError | None:
    """The :class:`BackendStartError` a failed step carries in its chain of causes, if any."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, BackendStartError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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
    allow_leaks: Sequence[str] = (),
) -> RunResult:
    """Run the benchmark through Dagster; same tables and figures as ``run_benchmark``.

    Args:
        scenario_paths: Scenario files or folders, or ``PREFIX:PATH`` of imported data (as
            ``drift run`` takes them).
        arms: Arms to report; the reference compressor always runs, as each world's baseline
            (MVOT and TES need it), and is reported when it is one of ``arms``.
        horizons: Only these horizons (empty: every declared horizon).
        out: Storage root.
        loop: Memory-loop settings (timeout, isolation, concurrency); ``protect`` is ignored,
            the storage root is always protected.
        backend_options: Constructor options per backend name.
        instance: Dagster instance; default ``DagsterInstance.get()`` (``DAGSTER_HOME``).
        log: Called with one line per run started.
        allow_leaks: Backends the conformance check lets leak across entities (as
            ``RunOptions.allow_leaks``).

    Returns:
        The reported cells (recomputed from the stored tables, equal to what the assets wrote),
        the number of worlds generated (also worlds that were current on disk but unknown to
        the instance: they are regenerated, identically, so the instance records them), and
        the run manifest (also written to ``<out>/_manifests/run.json``). When every arm asked
        for fails the conformance check, no cell and nothing is written and no run is made.

    Raises:
        ScenarioError: A scenario file is invalid.
        GenerationUnsupported: A scenario's paradigm has no generator yet.
        ValueError: Two files declare the same scenario id.
        HorizonNotDeclared: No scenario declares a horizon of ``horizons``.
        RootUnusable: The output folder cannot be created or written in.
        InstanceMisconfigured: The ``DAGSTER_HOME`` instance cannot be loaded.
        RootBusy: Another run holds the output folder.
        IsolationError: Sandboxed workers cannot start here; no run was made.
        InstanceUnavailable: The instance's database could not be reached (one line); a rerun
            of the same call resumes.
        BackendStartError: A backend could not start (its run stopped there).
        RuntimeError: A run failed (naming the job and partition).
    """
    texts = [str(path) for path in scenario_paths]
    files = scenario_files([t for t in texts if not names_imported_data(t)])
    scenarios: list[WorldSource] = [ScenarioSource.load(path) for path in files]
    imported = [t for t in texts if names_imported_data(t)]
    for text in imported:
        scenarios.extend(open_source(text))
    ids = [source.id for source in scenarios]
    for source in scenarios:
        source.check()
        if ids.count(source.id) > 1:
            raise ValueError(f"scenario id {source.id!r} is used by more than one file")
    # As in the direct run: a scenario is never run at a horizon not asked for.
    scenarios = select_horizons(scenarios, horizons).sources
    settings = loop or LoopConfig()
    target = StorageRoot.from_url(out)
    # The same guards as the direct run: one run per output folder, and a machine where
    # sandboxed workers cannot start stops before any Dagster run is recorded.
    with exclusive_root(target, "drift run --via dagster"):
        if settings.isolate:
            asyncio.run(check_isolation(list(target.protect_paths())))
        # As in the direct run: an arm whose backend fails the conformance check is not run.
        protected = replace(settings, protect=tuple(target.protect_paths()))
        checks = check_arms(arms, scenarios, backend_options or {}, {}, protected, allow_leaks)
        unstarted = checks.start_failures(arms)
        if unstarted:  # as a Dagster run stops on a backend that cannot start
            raise unstarted[0]
        if arms and all(arm.backend in checks.failed for arm in arms):
            # Every arm asked for was refused: nothing is scored, so no Dagster run is made.
            options = RunOptions(arms=[], horizons=tuple(horizons), out=out, loop=settings)
            manifest = run_manifest(scenarios, options, [], checks=checks)
            return RunResult([], 0, manifest, checks=checks, requested=list(arms))
        try:
            result = _run_locked(
                scenarios,
                files,
                imported,
                [arm for arm in arms if arm.backend not in checks.failed],
                horizons,
                out,
                settings,
                backend_options,
                instance,
                log,
                checks,
            )
            result.requested = list(arms)
            return result
        except InstanceUnavailable:
            raise
        except Exception as error:
            unavailable = instance_database_error(error)
            if unavailable is not None:
                raise unavailable from error
            start_failure = _backend_start_error(error)
            if start_failure is not None:
                # As in the direct run: the arm's one line, not the step failure around it.
                raise start_failure from None
            raise


def _run_locked(
    scenarios: list[WorldSource],
    files: list[Path],
    imported: list[str],
    arms: Sequence[Arm],
    horizons: Sequence[HorizonName],
    out: RootLike,
    settings: LoopConfig,
    backend_options: dict[str, dict[str, Any]] | None,
    instance: dg.DagsterInstance | None,
    log: Callable[[str], None] | None,
    checks: ArmChecks,
) -> RunResult:
    """:func:`run_via_dagster` once the output folder is held and isolation checked."""
    storage = DriftStorage(root=StorageRoot.from_url(out).url)
    # Absolute paths: the catalog is read again by every asset run, whatever its folder.
    catalog = ScenarioCatalog(
        paths=[str(path.resolve()) for path in files] + [_absolute(t) for t in imported]
    )
    memory_loop = MemoryLoop(
        call_timeout=settings.call_timeout,
        isolate=settings.isolate,
        concurrency=settings.concurrency,
        backend_options=backend_options or {},
        max_consecutive_faults=settings.max_consecutive_faults,
        max_fault_rate=settings.max_fault_rate,
    )
    root = storage.path()
    worlds = [world for source in scenarios for world in source.worlds(horizons)]
    # The reference compressor is each world's baseline (a world-level asset), not a cell.
    cell_arms = [arm for arm in dict.fromkeys(arms) if arm != REFERENCE_ARM]
    owns_instance = instance is None
    active = instance or load_instance()
    cells: list[CellResult] = []
    defs = build_definitions(storage, catalog, memory_loop)
    # The runs execute in this process: the figures their assets computed are the ones returned.
    with reuse_evaluations():
        try:
            register_partitions(active, [world.key for world in worlds], cell_arms)
            recorded = active.get_materialized_partitions(dg.AssetKey("probes"))
            regenerate = {
                world.key
                for world in worlds
                if world.key.partition_key not in recorded
                or not world_is_current(root, world.source, world.horizon)
            }
            steps = plan_cells(
                graph_stages(defs),
                [world.key for world in worlds],
                cell_arms,
                regenerate.__contains__,
            )
            execute(defs, active, steps, log)
        except Exception as error:
            unavailable = instance_database_error(error, _database_address(active))
            if unavailable is not None:
                raise unavailable from error
            raise
        finally:
            if owns_instance:
                active.dispose()
        for world in worlds:
            amnesiac, reference = _amnesiac(root, world.key), _reference(root, world.key)
            for arm in [REFERENCE_ARM, *cell_arms]:
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
    manifest = run_manifest(scenarios, options, cells, checks=checks)
    with staged(root) as writer:
        writer.put_text(RUN_MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return RunResult(
        cells=[c for c in cells if c.reported],
        generated_worlds=len(regenerate),
        manifest=manifest,
        checks=checks,
    )


def _amnesiac(root: StorageRoot, world: WorldKey) -> Callable[[], pa.Table]:
    """The amnesiac's answers on ``world``, read when first asked for."""
    return cache(lambda: amnesiac_answers(root, world)[1])


def _reference(root: StorageRoot, world: WorldKey) -> Callable[[], ArmData]:
    """The reference compressor's stored data on ``world``, read when first asked for."""
    return cache(lambda: load_arm(root, CellKey(world, REFERENCE_ARM.key)))


def backfill(
    horizon: str | None = None,
    scenarios: Sequence[str] = (),
    ablation: str | None = None,
    arms: Sequence[str] = (),
    *,
    launch: bool = False,
    dry_run: bool = False,
    echo: Callable[[str], None] = print,
) -> None:
    """``drift backfill``: select registered partitions, then run them now or launch a backfill.

    Registers the repository's worlds and arms on the ``DAGSTER_HOME`` instance first (as the
    code location does when it loads), reading the storage root and scenario folders from
    ``DRIFT_DATA_ROOT`` and ``DRIFT_SCENARIOS`` like ``dagster dev``.

    Args:
        horizon: Only worlds of this horizon.
        scenarios: Only these scenario ids.
        ablation: Only this ablation's arms.
        arms: Only these arm keys.
        launch: Create one asset backfill for the daemon instead of running now.
        dry_run: Print the selection and the runs only.
        echo: Where the lines go.

    Raises:
        ValueError: An unknown horizon, ablation or arm (one line naming it);
            :class:`InstanceMisconfigured` when the instance cannot be loaded.
        RuntimeError: A run failed (naming the job and partition).
    """
    storage, catalog = default_storage(), default_catalog()
    with load_instance() as instance:
        register_partitions(instance, *repository_partitions(catalog))
        selection = select(instance, catalog, horizon, scenarios, ablation, arms)
        worlds, arm_count = len(selection.worlds), len(selection.arms)
        echo(f"{worlds} worlds × {arm_count} arms = {len(selection.cells)} cells")
        if dry_run:
            for step in plan_selection(instance, selection, catalog, storage):
                assets = f" ({', '.join(step.assets)})" if step.assets else ""
                echo(f"{step.job} {step.partition or ''}".rstrip() + assets)
        elif launch:
            backfill_id = launch_backfill(
                instance, selection, title(horizon, scenarios, ablation, arms)
            )
            echo(
                f"backfill {backfill_id} created; `dagster dev` runs it (UI: Overview → Backfills)"
            )
        else:
            run_selection(instance, selection, storage, catalog, log=echo)
