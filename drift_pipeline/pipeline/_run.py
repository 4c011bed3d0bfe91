"""A whole benchmark run without Dagster: worlds → memory loop → evaluation → tables.

``drift run`` and the Dagster assets call the same functions, so both paths write the same
tables and the same figures.
"""

from __future__ import annotations

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

from drift_pipeline.evaluation import ArmData, ContextEvaluator, Evaluator, measured_ttft
from drift_pipeline.memory import Arm, BackendInstance, LoopConfig, run_cell
from drift_pipeline.memory.backends import backend_needs, resolve_backend_options
from drift_pipeline.scenario import HorizonName, LoadedScenario, root_seed
from drift_pipeline.storage import RootLike, StorageRoot, staged
from drift_pipeline.world.synthesis import Synthesizer

from ._cells import (
    CellResult,
    amnesiac_answers,
    evaluate_cell,
    world_profiles,
    world_session_marks,
)
from ._evaluators import (
    LLM_CACHE,
    EvaluationOptions,
    build_evaluator,
    close_evaluator,
    llm_usage,
)
from ._worlds import ensure_worlds

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

    @property
    def faults(self) -> list[str]:
        """Every fault recorded against a backend call, across cells."""
        return [fault for cell in self.cells for fault in cell.faults]


def backend_options_for(
    arm: Arm, loaded: LoadedScenario, backend_options: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Constructor options of an arm's backend on one scenario (shared by both run paths).

    The configured options, completed by the backend's registration: its defaults for this
    scenario and, for a backend that calls a model, the endpoint and model from the environment
    (never the key: that reaches its worker through the environment only).

    Raises:
        ValueError: One line, e.g. naming the variable when a model-calling backend has no
            endpoint, or the package to install when one it needs is missing.
    """
    return resolve_backend_options(arm.backend, loaded, backend_options.get(arm.backend, {}))


def run_benchmark(
    scenarios: Sequence[LoadedScenario],
    options: RunOptions,
    progress: ProgressFactory | None = None,
) -> RunResult:
    """Run every arm on every world of ``scenarios``; each cell's tables land atomically."""
    root = StorageRoot.from_url(options.out)
    worlds, generated = ensure_worlds(root, scenarios, options.horizons, options.synthesizer)
    # Only local folders can be hidden from a sandboxed backend; an S3 root needs no cover
    # (the worker's environment is scrubbed, so it holds no credentials to reach it).
    protect = tuple({*options.loop.protect, *root.protect_paths()})
    loop = replace(options.loop, protect=protect)
    evaluator = build_evaluator(options.evaluation, root)
    try:
        cells = _run_worlds(root, worlds, options, loop, evaluator, progress)
        manifest = run_manifest(scenarios, options, cells, evaluator)
        usage = llm_usage(evaluator)
    finally:
        close_evaluator(evaluator)
    with staged(root) as writer:
        writer.put_text(
            "_manifests/run.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        )
    return RunResult(
        cells=[c for c in cells if c.reported],
        generated_worlds=len(generated),
        manifest=manifest,
        llm_usage=usage,
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
    worlds: Sequence[tuple[LoadedScenario, HorizonName]],
    options: RunOptions,
    loop: LoopConfig,
    evaluator: Evaluator,
    progress: ProgressFactory | None,
) -> list[CellResult]:
    cells: list[CellResult] = []
    # An LLM evaluator holds one client (its concurrency limit, cache and usage counters) in
    # this process, so its worlds run here, one after another.
    jobs = 1 if options.evaluation.uses_llm else min(max(1, options.jobs), len(worlds))
    if jobs == 1:
        for loaded, horizon in worlds:
            cells += run_world(root, loaded, horizon, options, loop, progress, evaluator)
        return cells
    # Worlds are independent (own seeds, own partitions): run them in separate processes and
    # collect their cells in world order, so tables and manifest do not depend on which
    # finished first. "spawn": forking a process that runs threads is unsafe.
    context = multiprocessing.get_context("spawn")
    # A fresh root per process: an open S3 filesystem does not cross a process boundary.
    portable = StorageRoot.from_url(root.url, dict(root.storage_options))
    # Worlds exist by now; the synthesizer (which may hold a model client) stays here.
    worker_options = replace(options, synthesizer=None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [
            pool.submit(run_world, portable, loaded, horizon, worker_options, loop, None)
            for loaded, horizon in worlds
        ]
        for future in futures:
            cells += future.result()
    return cells


def run_world(
    root: RootLike,
    loaded: LoadedScenario,
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
        loaded: The scenario.
        horizon: The world's horizon.
        options: The run's options (arms, backend options).
        loop: Memory-loop settings, with the paths to protect already resolved.
        progress: Progress bars per cell, or ``None``.
        evaluator: Reader and judge; ``None``: the context judge.
    """
    root = StorageRoot.from_url(root)
    evaluator = evaluator if evaluator is not None else ContextEvaluator()
    spec = loaded.spec
    sessions = getattr(spec.horizon, horizon).sessions
    profiles = world_profiles(root, spec.id, horizon, evaluator)
    probes, amnesiac = amnesiac_answers(root, spec.id, horizon, evaluator, profiles)
    marks = world_session_marks(root, spec.id, horizon)
    reference: ArmData | None = None
    cells: list[CellResult] = []
    for arm in [REFERENCE_ARM, *[a for a in options.arms if a != REFERENCE_ARM]]:
        hook = (
            progress(f"{spec.id}/{horizon} {arm.key}", sessions * spec.replicates)
            if progress
            else None
        )
        instance = options.backend_instances.get(arm.backend)
        arm_options = (
            instance.worker_options()
            if instance is not None
            else backend_options_for(arm, loaded, options.backend_options)
        )
        run = run_cell(
            root,
            spec.id,
            horizon,
            spec.replicates,
            arm,
            arm_options,
            _arm_loop(arm, arm_options, loop, root),
            hook,
        )
        cell = evaluate_cell(
            loaded, horizon, run, probes, amnesiac, reference, evaluator, profiles, marks
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
                writer.put(
                    table_def,
                    {"scenario": spec.id, "horizon": horizon, "arm": arm.key},
                    table,
                )
        if arm != REFERENCE_ARM:
            cell.release()
        cells.append(cell)
    for cell in cells:
        if cell.arm == REFERENCE_ARM:
            cell.release()
    return cells


def run_manifest(
    scenarios: Sequence[LoadedScenario],
    options: RunOptions,
    cells: Sequence[CellResult],
    evaluator: Evaluator | None = None,
) -> dict[str, Any]:
    """What produced a run's tables: code, inputs, seeds, backends, isolation, reader, judge.

    Deliberately free of wall-clock time and absolute paths, so reruns are comparable. The
    reader and judge are pinned: name and version, or for a model its name, endpoint host and
    prompt sha256 (never a key).
    """
    pins = (evaluator or ContextEvaluator()).pins()
    return {
        "drift_pipeline": package_version("drift-pipeline"),
        "scenarios": [
            {
                "id": s.spec.id,
                "version": s.spec.version,
                "sha256": s.sha256,
                # The seed actually used: declared, or derived from the id when absent.
                "seed": root_seed(s.spec),
                "seed_declared": s.spec.seed is not None,
                "replicates": s.spec.replicates,
            }
            for s in scenarios
        ],
        "arms": sorted({c.arm.key for c in cells}),
        "backends": {c.arm.backend: c.backend_version for c in cells},
        "isolation": sorted({c.isolation for c in cells}),
        "reader": pins["reader"],
        "judge": pins["judge"],
        "call_timeout_s": options.loop.call_timeout,
        "machine": {
            "python": platform.python_version(),
            "system": platform.system(),
            "machine": platform.machine(),
            "cpus": _cpus(),
        },
    }


def _cpus() -> int:
    return os.cpu_count() or 0
