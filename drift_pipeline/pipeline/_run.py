"""A whole benchmark run without Dagster: worlds → memory loop → evaluation → tables.

``drift run`` and the Dagster assets call the same functions, so both paths write the same
tables and the same figures.
"""

from __future__ import annotations

import json
import multiprocessing
import platform
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from drift_pipeline.evaluation import ArmData
from drift_pipeline.memory import Arm, LoopConfig, run_cell
from drift_pipeline.scenario import HorizonName, LoadedScenario, root_seed
from drift_pipeline.storage import RootLike, StorageRoot, staged

from ._cells import CellResult, amnesiac_answers, evaluate_cell
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
        jobs: Worlds run at once, each in its own process (1: all in this process). Latency
            figures are then measured under that many worlds' load.
    """

    arms: list[Arm]
    horizons: Sequence[HorizonName] = ()
    out: RootLike = Path("data")
    loop: LoopConfig = field(default_factory=LoopConfig)
    backend_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: int = 1


@dataclass
class RunResult:
    """What a run produced, for the summary, the JSON file and the manifest."""

    cells: list[CellResult]
    generated_worlds: int
    manifest: dict[str, Any]

    @property
    def faults(self) -> list[str]:
        """Every fault recorded against a backend call, across cells."""
        return [fault for cell in self.cells for fault in cell.faults]


def backend_options_for(
    arm: Arm, loaded: LoadedScenario, backend_options: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Constructor options of an arm's backend on one scenario (shared by both run paths)."""
    options = dict(backend_options.get(arm.backend, {}))
    if arm.backend == "full_context" and "budget_tokens" not in options:
        # B defaults to the asking agent's declared context window (DESIGN §5), so stuffing
        # the context visibly breaks once a trajectory outgrows it.
        windows = [
            e.capability_profile.context_window
            for e in loaded.spec.entities
            if e.type == "assistant_agent"
        ]
        if windows:
            options["budget_tokens"] = min(windows)
    return options


def run_benchmark(
    scenarios: Sequence[LoadedScenario],
    options: RunOptions,
    progress: ProgressFactory | None = None,
) -> RunResult:
    """Run every arm on every world of ``scenarios``; each cell's tables land atomically."""
    root = StorageRoot.from_url(options.out)
    worlds, generated = ensure_worlds(root, scenarios, options.horizons)
    # Only local folders can be hidden from a sandboxed backend; an S3 root needs no cover
    # (the worker's environment is scrubbed, so it holds no credentials to reach it).
    protect = tuple({*options.loop.protect, *root.protect_paths()})
    loop = LoopConfig(
        options.loop.call_timeout, options.loop.isolate, protect, options.loop.concurrency
    )
    cells: list[CellResult] = []
    jobs = min(max(1, options.jobs), len(worlds))
    if jobs == 1:
        for loaded, horizon in worlds:
            cells += run_world(root, loaded, horizon, options, loop, progress)
    else:
        # Worlds are independent (own seeds, own partitions): run them in separate processes
        # and collect their cells in world order, so tables and manifest do not depend on
        # which finished first. "spawn": forking a process that runs threads is unsafe.
        context = multiprocessing.get_context("spawn")
        # A fresh root per process: an open S3 filesystem does not cross a process boundary.
        portable = StorageRoot.from_url(root.url, dict(root.storage_options))
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = [
                pool.submit(run_world, portable, loaded, horizon, options, loop, None)
                for loaded, horizon in worlds
            ]
            for future in futures:
                cells += future.result()
    manifest = run_manifest(scenarios, options, cells)
    with staged(root) as writer:
        writer.put_text(
            "_manifests/run.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        )
    return RunResult(
        cells=[c for c in cells if c.reported], generated_worlds=len(generated), manifest=manifest
    )


def run_world(
    root: RootLike,
    loaded: LoadedScenario,
    horizon: HorizonName,
    options: RunOptions,
    loop: LoopConfig,
    progress: ProgressFactory | None = None,
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
    """
    root = StorageRoot.from_url(root)
    spec = loaded.spec
    sessions = getattr(spec.horizon, horizon).sessions
    probes, amnesiac = amnesiac_answers(root, spec.id, horizon)
    reference: ArmData | None = None
    cells: list[CellResult] = []
    for arm in [REFERENCE_ARM, *[a for a in options.arms if a != REFERENCE_ARM]]:
        hook = (
            progress(f"{spec.id}/{horizon} {arm.key}", sessions * spec.replicates)
            if progress
            else None
        )
        run = run_cell(
            root,
            spec.id,
            horizon,
            spec.replicates,
            arm,
            backend_options_for(arm, loaded, options.backend_options),
            loop,
            hook,
        )
        cell = evaluate_cell(loaded, horizon, run, probes, amnesiac, reference)
        if reference is None:
            reference = ArmData(cell.answers, run.snapshots, run.retrievals)
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
    scenarios: Sequence[LoadedScenario], options: RunOptions, cells: Sequence[CellResult]
) -> dict[str, Any]:
    """What produced a run's tables: code, inputs, seeds, backends, isolation, reader, judge.

    Deliberately free of wall-clock time and absolute paths, so reruns are comparable.
    """
    from drift_pipeline.evaluation import JUDGE_NAME, JUDGE_VERSION

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
        "reader": {"name": JUDGE_NAME, "version": JUDGE_VERSION},
        "judge": {"name": JUDGE_NAME, "version": JUDGE_VERSION},
        "call_timeout_s": options.loop.call_timeout,
        "machine": {
            "python": platform.python_version(),
            "system": platform.system(),
            "machine": platform.machine(),
            "cpus": _cpus(),
        },
    }


def _cpus() -> int:
    import os

    return os.cpu_count() or 0
