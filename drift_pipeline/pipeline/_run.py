"""A whole benchmark run without Dagster: worlds → memory loop → evaluation → tables.

``drift run`` and the Dagster assets call the same functions, so both paths write the same
tables and the same figures.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import platform
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from drift_pipeline.evaluation import (
    ArmData,
    ContextEvaluator,
    Evaluator,
    LLMEvaluator,
    measured_ttft,
)
from drift_pipeline.keys import CellKey
from drift_pipeline.memory import (
    Arm,
    BackendInstance,
    BackendStartError,
    FirstToken,
    LoopConfig,
    check_isolation,
    run_cell,
)
from drift_pipeline.memory.backends import backend_needs, resolve_backend_options
from drift_pipeline.scenario import HorizonName
from drift_pipeline.sources import ScenarioSource, SourceWorld, WorldSource
from drift_pipeline.storage import RootLike, StorageRoot, exclusive_root, staged
from drift_pipeline.world.synthesis import Synthesizer

from ._cells import (
    CellResult,
    amnesiac_answers,
    evaluate_cell,
    world_profiles,
    world_session_marks,
)
from ._checks import ArmChecks, check_arms
from ._evaluators import (
    LLM_CACHE,
    EvaluationOptions,
    build_evaluator,
    close_evaluator,
    llm_usage,
)
from ._manifest import RUN_MANIFEST, arm_options
from ._worlds import ensure_worlds, select_horizons

REFERENCE_ARM = Arm.parse("reference_compressor@hard")
"""Run on every world whether asked for or not: MVOT's and TES's reference (spec §7.1, §7.7)."""

ProgressFactory = Callable[[str, int], Callable[[int], None]]


@dataclass
class RunOptions:
    """Everything ``drift run`` can be told.

    Attributes:
        arms: Backend × gate pairs to run.
        horizons: Only these horizons (empty: all declared).
        out: Storage root: a folder or an ``s3://bucket/prefix`` URL.
        loop: Memory-loop settings (timeout, isolation, concurrency).
        backend_options: Constructor options per backend name.
        evaluation: Reader and judge (``--reader``, ``--judge``); harness-side, so no backend
            option can change them.
        synthesizer: Writes missing worlds (``--synthesizer``; ``None``: the template one).
        jobs: Worlds run at once, each in its own process (1: all in this process). Latency
            figures are then measured under that many worlds' load.
        backend_instances: Backends given as objects, packed, by arm backend name; their
            workers rebuild them instead of constructing a backend from ``backend_options``.
        keep_going: An arm whose backend cannot start is skipped (no rows) and listed in
            ``RunResult.start_failures`` while the other arms run; otherwise the run stops
            with :class:`~drift_pipeline.memory.BackendStartError`.
        allow_leaks: Backends the conformance check lets keep entities' memories together
            (scored, the leak recorded in the manifest; see :mod:`._checks`). Any other backend
            that leaks across entities is not scored.
    """

    arms: list[Arm]
    horizons: Sequence[HorizonName] = ()
    out: RootLike = Path("data")
    loop: LoopConfig = field(default_factory=LoopConfig)
    backend_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    evaluation: EvaluationOptions = field(default_factory=EvaluationOptions)
    synthesizer: Synthesizer | None = None
    jobs: int = 1
    backend_instances: dict[str, BackendInstance] = field(default_factory=dict)
    keep_going: bool = False
    allow_leaks: tuple[str, ...] = ()


@dataclass
class RunResult:
    """What a run produced, for the summary, the JSON file and the manifest.

    ``llm_usage`` counts the reader's and judge's model calls of this run (requests, cache
    hits, tokens, cost); it is not in the manifest, which must not change on a cached rerun.
    """

    cells: list[CellResult]
    generated_worlds: int
    manifest: dict[str, Any]
    llm_usage: dict[str, Any] = field(default_factory=dict)
    start_failures: list[str] = field(default_factory=list)
    """With ``keep_going``: one line per arm whose backend could not start (it has no rows)."""
    checks: ArmChecks = field(default_factory=ArmChecks)
    """The conformance check of each backend that is not a built-in (see :mod:`._checks`)."""
    requested: list[Arm] = field(default_factory=list)
    """The arms the run was asked for (those that failed the check included)."""

    @property
    def check_failures(self) -> list[str]:
        """One line per requested arm not scored because its backend failed the check."""
        return self.checks.failure_lines(self.requested)

    def conformance_summary(self) -> dict[str, Any]:
        """Each checked backend's check report, as the JSON summary holds it (figures in ms)."""
        return {name: report.to_json() for name, report in sorted(self.checks.reports.items())}

    @property
    def faults(self) -> list[str]:
        """Every fault recorded against a backend call, across cells."""
        return [fault for cell in self.cells for fault in cell.faults]


def backend_options_for(
    arm: Arm, source: WorldSource, backend_options: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Constructor options of an arm's backend on one source (shared by both run paths).

    The configured options, completed by the backend's registration: its defaults for this
    scenario and, for a backend that calls a model, the endpoint and model from the environment
    (never the key: that reaches its worker through the environment only).

    Raises:
        ValueError: One line, e.g. naming the variable when a model-calling backend has no
            endpoint, or the package to install when one it needs is missing.
    """
    return resolve_backend_options(arm.backend, source, backend_options.get(arm.backend, {}))


def run_benchmark(
    sources: Sequence[WorldSource],
    options: RunOptions,
    progress: ProgressFactory | None = None,
) -> RunResult:
    """Run every arm on every world of ``sources``; each cell's tables land atomically.

    A source is run at the horizons of ``options.horizons`` it declares (every declared one
    when none is given); see :func:`select_horizons`.

    When every arm asked for is refused by the conformance check (or cannot even be built
    for it), the result has no cells and nothing is written: no world, cell or manifest. When
    none of them starts during the run (``keep_going``), the worlds and the reference arm's
    cells stay, but the manifest of the last run that scored an arm is kept.

    Raises:
        HorizonNotDeclared: No source declares a horizon asked for; nothing was written.
        RootUnusable: The output folder cannot be created or written in; nothing was written.
        RootBusy: Another run holds the output folder (a local root is locked for the run).
        IsolationError: Sandboxed workers cannot start here; nothing was run.
        BackendStartError: A backend could not start (without ``keep_going``).
    """
    select_horizons(sources, options.horizons)  # before the root is touched
    root = StorageRoot.from_url(options.out)
    with exclusive_root(root):
        return _run_benchmark(root, sources, options, progress)


def _run_benchmark(
    root: StorageRoot,
    sources: Sequence[WorldSource],
    options: RunOptions,
    progress: ProgressFactory | None,
) -> RunResult:
    # Only local folders can be hidden from a sandboxed backend; an S3 root needs no cover
    # (the worker's environment is scrubbed, so it holds no credentials to reach it).
    protect = tuple({*options.loop.protect, *root.protect_paths()})
    loop = replace(options.loop, protect=protect)
    if loop.isolate:
        # Before any world or cell: a machine where sandboxed workers cannot start stops here.
        asyncio.run(check_isolation(list(loop.protect)))
    # Before anything is scored: an arm whose backend fails the conformance check is not run.
    checks = check_arms(
        options.arms,
        sources,
        options.backend_options,
        options.backend_instances,
        loop,
        options.allow_leaks,
    )
    requested = list(options.arms)
    # A backend that could not even be built for the check is a backend that cannot start.
    unstarted = checks.start_failures(requested)
    if unstarted and not options.keep_going:
        raise unstarted[0]
    options = replace(options, arms=[a for a in options.arms if a.backend not in checks.failed])
    failures = [str(error) for error in unstarted]
    if requested and not options.arms:
        # Every arm asked for was refused: nothing is scored, so nothing is written, not even
        # the worlds (a run asked for no arm still runs each world's own reference arm).
        return RunResult(
            cells=[],
            generated_worlds=0,
            manifest=run_manifest(sources, options, [], checks=checks),
            start_failures=list(dict.fromkeys(failures)),
            checks=checks,
            requested=requested,
        )
    worlds, generated = ensure_worlds(root, sources, options.horizons, options.synthesizer)
    evaluator = build_evaluator(options.evaluation, root)
    try:
        cells = _run_worlds(root, worlds, options, loop, evaluator, progress, failures)
        manifest = run_manifest(sources, options, cells, evaluator, checks)
        usage = llm_usage(evaluator)
    finally:
        close_evaluator(evaluator)
    reported = [c for c in cells if c.reported]
    if reported or not requested:
        # A run that scored no arm asked for (each could not start) leaves the manifest of
        # the last run that did in place.
        with staged(root) as writer:
            writer.put_text(RUN_MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return RunResult(
        cells=reported,
        generated_worlds=len(generated),
        manifest=manifest,
        llm_usage=usage,
        start_failures=list(dict.fromkeys(failures)),
        checks=checks,
        requested=requested,
    )


def _arm_loop(arm: Arm, options: dict[str, Any], loop: LoopConfig, root: StorageRoot) -> LoopConfig:
    """The loop settings of one arm: a backend that needs a key or a cache gets them."""
    needs = backend_needs(arm.backend, options)
    if not needs.worker_env and not needs.cache:
        return loop
    worker_cache = loop.worker_cache
    if needs.cache:
        cache = root.location(f"{LLM_CACHE}/{arm.backend}")
        # Only a local data root can persist the worker's cache; on S3 it lives for the run only.
        worker_cache = cache if isinstance(cache, Path) else None
    return replace(
        loop,
        worker_env=tuple(dict.fromkeys((*loop.worker_env, *needs.worker_env))),
        worker_cache=worker_cache,
    )


def _run_worlds(
    root: StorageRoot,
    worlds: Sequence[SourceWorld],
    options: RunOptions,
    loop: LoopConfig,
    evaluator: Evaluator,
    progress: ProgressFactory | None,
    failures: list[str],
) -> list[CellResult]:
    cells: list[CellResult] = []
    # An LLM evaluator holds one client (its concurrency limit, cache and usage counters) in
    # this process, so its worlds run here, one after another.
    jobs = 1 if options.evaluation.uses_llm else max(1, min(options.jobs, len(worlds)))
    if jobs == 1:
        for world in worlds:
            cells += _collect(
                failures,
                run_world,
                root,
                world.source,
                world.horizon,
                options,
                loop,
                progress,
                evaluator,
            )
        return cells
    # Worlds are independent (own seeds, own partitions): run them in separate processes and
    # collect their cells in world order, so tables and manifest do not depend on which
    # finished first. "spawn": forking a process that runs threads is unsafe.
    context = multiprocessing.get_context("spawn")
    # A fresh root per process: an open S3 filesystem does not cross a process boundary.
    portable = StorageRoot.from_url(root.url, dict(root.storage_options))
    # Worlds exist by now; the synthesizer (which may hold a model client) stays here.
    worker_options = replace(options, synthesizer=None)
    # Largest worlds first (sessions × replicates): the pool then ends on small worlds, and
    # no process sits idle while the other finishes a long one.
    largest_first = sorted(
        range(len(worlds)),
        key=lambda i: -worlds[i].source.sessions(worlds[i].horizon) * worlds[i].source.replicates,
    )
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {
            i: pool.submit(
                run_world,
                portable,
                worlds[i].source,
                worlds[i].horizon,
                worker_options,
                loop,
                None,
            )
            for i in largest_first
        }
        for i in range(len(worlds)):
            cells += _collect(failures, futures[i].result)
    return cells


def _collect(
    failures: list[str], call: Callable[..., list[CellResult]], *args: Any
) -> list[CellResult]:
    """A world's cells; with ``keep_going``, those of the arms that started (the rest listed)."""
    try:
        return call(*args)
    except ArmsNotStarted as error:
        failures += error.failures
        return error.cells


class ArmsNotStarted(Exception):
    """A world whose cells completed except those of arms that could not start (``keep_going``).

    Carries the completed cells, so they cross a process boundary with the failures.
    """

    def __init__(self, failures: list[str], cells: list[CellResult]) -> None:
        super().__init__(failures, cells)
        self.failures = failures
        self.cells = cells


def run_world(
    root: RootLike,
    source: WorldSource,
    horizon: HorizonName,
    options: RunOptions,
    loop: LoopConfig,
    progress: ProgressFactory | None = None,
    evaluator: Evaluator | None = None,
) -> list[CellResult]:
    """Run every arm on one generated world; each cell's tables land atomically.

    The reference compressor runs first (every other arm's MVOT and TES need its figures).
    The returned cells hold their figures; their row-level tables are released once written.

    Args:
        root: Storage root holding the world (a folder or ``s3://`` URL).
        source: The world's source.
        horizon: The world's horizon.
        options: The run's options (arms, backend options).
        loop: Memory-loop settings, with the paths to protect already resolved.
        progress: Progress bars per cell, or ``None``.
        evaluator: Reader and judge; ``None``: the context judge.

    Raises:
        BackendStartError: An arm's backend could not start (without ``options.keep_going``,
            or for the reference arm); the cells before it are written, none after.
        ArmsNotStarted: With ``options.keep_going``, after every other arm: the arms that
            could not start and the cells of those that ran.
    """
    root = StorageRoot.from_url(root)
    evaluator = evaluator if evaluator is not None else ContextEvaluator()
    if isinstance(source, ScenarioSource):  # imported worlds read at session start
        loop = replace(loop, reads=source.loaded.spec.memory_reads)
    if isinstance(evaluator, LLMEvaluator):  # TTFRT measured at each session start
        reader = evaluator.reader
        loop = replace(loop, first_token=FirstToken(reader.client, reader.context_cap_tokens))
    world = source.world(horizon)
    sessions = source.sessions(horizon)
    profiles = world_profiles(root, world, evaluator)
    probes, amnesiac = amnesiac_answers(root, world, evaluator, profiles)
    marks = world_session_marks(root, world)
    reference: ArmData | None = None
    cells: list[CellResult] = []
    failures: list[str] = []
    for arm in [REFERENCE_ARM, *[a for a in options.arms if a != REFERENCE_ARM]]:
        hook = progress(f"{world} {arm.key}", sessions * source.replicates) if progress else None
        instance = options.backend_instances.get(arm.backend)
        arm_options = (
            instance.worker_options()
            if instance is not None
            else backend_options_for(arm, source, options.backend_options)
        )
        try:
            run = run_cell(
                root,
                source.id,
                horizon,
                source.replicates,
                arm,
                arm_options,
                _arm_loop(arm, arm_options, loop, root),
                hook,
            )
        except BackendStartError as error:
            # The reference arm is every other arm's yardstick: without it nothing is scored.
            if not options.keep_going or arm == REFERENCE_ARM:
                raise
            failures.append(str(error))
            continue
        cell = evaluate_cell(
            source, horizon, run, probes, amnesiac, reference, evaluator, profiles, marks
        )
        if reference is None:
            reference = ArmData(
                cell.answers,
                run.snapshots,
                run.retrievals,
                measured_ttft(cell.answers, run.retrievals),
            )
        cell.reported = arm in options.arms
        # One cell at a time: a later failure cannot take an earlier cell's rows with it,
        # and only one arm's contexts are ever held in memory.
        with staged(root) as writer:
            for table_def, table in cell.tables().items():
                writer.put(table_def, CellKey(world, arm.key), table)
        if arm != REFERENCE_ARM:
            cell.release()
        cells.append(cell)
    for cell in cells:
        if cell.arm == REFERENCE_ARM:
            cell.release()
    if failures:
        raise ArmsNotStarted(failures, cells)
    return cells


def run_manifest(
    sources: Sequence[WorldSource],
    options: RunOptions,
    cells: Sequence[CellResult],
    evaluator: Evaluator | None = None,
    checks: ArmChecks | None = None,
) -> dict[str, Any]:
    """What produced a run's tables: code, inputs, seeds, backends, isolation, reader, judge.

    Deliberately free of wall-clock time and absolute paths, so reruns are comparable. The
    reader and judge are pinned: name and version, or for a model its name, endpoint host and
    prompt sha256 (never a key). Backends that are not built-ins add their conformance verdict
    (``conformance``), and each arm the check kept from being scored is named with why
    (``not_scored``); adapters, the service and SDK they say they run against (``services``).
    """
    pins = (evaluator or ContextEvaluator()).pins()
    checked = checks is not None and (checks.reports or checks.unchecked)
    extra = {"conformance": checks.manifest()} if checks is not None and checked else {}
    refused = checks.not_scored() if checks is not None else {}
    if refused:
        extra["not_scored"] = refused
    return {
        **extra,
        "drift_pipeline": package_version("drift-pipeline"),
        "scenarios": [source.manifest_entry() for source in sources],
        "arms": sorted({c.arm.key for c in cells}),
        "backends": {c.arm.backend: c.backend_version for c in cells},
        # Each arm's --backend-config options (secrets masked): one backend, two experiments.
        "arm_options": arm_options((c.arm for c in cells), options.backend_options),
        # What adapters to services and libraries run against (DescribesService).
        "services": {c.arm.backend: c.run.service for c in cells if c.run.service},
        "isolation": sorted({c.isolation for c in cells}),
        "reader": pins["reader"],
        "judge": pins["judge"],
        "call_timeout_s": options.loop.call_timeout,
        "simulated_clock": options.loop.simulated_clock,
        "machine": {
            "python": platform.python_version(),
            "system": platform.system(),
            "machine": platform.machine(),
            "cpus": _cpus(),
        },
    }


def _cpus() -> int:
    return os.cpu_count() or 0
