"""Generating worlds to storage: every horizon of a scenario, staged and committed atomically."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version as package_version

import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.entities import entity_types
from drift_pipeline.keys import WorldKey
from drift_pipeline.scenario import HorizonName, LoadedScenario, checkpoints_for, root_seed
from drift_pipeline.storage import (
    SYNTHESIS_FALLBACKS,
    WORLD_TABLES,
    Location,
    RootLike,
    StagedWrite,
    staged,
)

from ._fallbacks import fallback_table, writes_fallbacks
from ._generate import check_supported, concat_tables, generate_replicate, replicate_tables
from ._paradigms import paradigm_names
from ._pool import worker_pool
from .synthesis import Synthesizer, TemplateSynthesizer

ProgressHook = Callable[[int], None]


@dataclass
class WorldSummary:
    """What one (scenario, horizon) generation produced, for the command's summary."""

    scenario: str
    horizon: str
    replicates: int
    sessions: int
    tiers: dict[str, int]
    turns: int
    distinct_turn_share: float
    facts: int
    probes: int
    checkpoints: list[int]
    probes_per_checkpoint: dict[int, int]
    seconds: float
    files: list[Location] = field(default_factory=list)


def world_manifest_path(scenario: str, horizon: str) -> str:
    """Relative path of a world's manifest (what generated it), beside the tables."""
    return f"_manifests/worlds/scenario={scenario}/horizon={horizon}.json"


@lru_cache(maxsize=1)
def _package_version() -> str:
    # Reading the installed metadata parses files: once per process is enough.
    return package_version("drift-pipeline")


def world_manifest(
    loaded: LoadedScenario, horizon: str, synthesizer: Synthesizer
) -> dict[str, object]:
    """Identity of a generated world: a rerun with equal identity can reuse the tables."""
    return {
        "scenario": loaded.spec.id,
        "scenario_version": loaded.spec.version,
        "scenario_sha256": loaded.sha256,
        "horizon": horizon,
        "seed": root_seed(loaded.spec),
        "replicates": loaded.spec.replicates,
        "synthesizer": f"{synthesizer.name}@{synthesizer.version}",
        "drift_pipeline": _package_version(),
        # An LLM synthesizer's pin (model, prompt version; never a key or an endpoint).
        **({"synthesizer_pin": pin()} if (pin := getattr(synthesizer, "pin", None)) else {}),
    }


PARALLEL_MIN_SESSIONS = 2000
"""Below this many sessions in a horizon (all replicates), starting processes costs more than
it saves, so generation stays in the calling process."""


def default_workers(replicates: int, sessions: int, synthesizer: Synthesizer | None = None) -> int:
    """How many processes generate one horizon's replicates when the caller does not say.

    This process included: one per replicate up to the CPUs this process may use, for the
    template synthesizer on horizons of at least :data:`PARALLEL_MIN_SESSIONS` sessions (all
    replicates together), where ``fork`` exists. Other synthesizers (an LLM client, with its
    own connections and limits) run in-process.
    """
    if synthesizer is not None and not isinstance(synthesizer, TemplateSynthesizer):
        return 1
    if replicates * sessions < PARALLEL_MIN_SESSIONS:
        return 1
    if not hasattr(os, "fork"):
        return 1  # workers are os.fork children; spawning would re-import everything: slower
    if multiprocessing.current_process().daemon:
        return 1  # a `drift run --jobs` worker: the other worlds' processes use the other CPUs
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, replicates))


def generate_horizon(
    loaded: LoadedScenario,
    horizon: HorizonName,
    writer: StagedWrite,
    synthesizer: Synthesizer | None = None,
    progress: ProgressHook | None = None,
    *,
    workers: int | None = None,
) -> WorldSummary:
    """Generate every replicate of one horizon and stage its five tables and manifest.

    ``workers`` is how many processes, this one included, generate replicates side by side
    (None: :func:`default_workers`); the tables are byte-identical whatever the number. The
    other workers are forked once and kept (see ``_pool``; :func:`close_workers` stops them);
    each request sends them the scenario and the synthesizer, which must pickle.
    """
    spec = loaded.spec
    synthesizer = synthesizer or TemplateSynthesizer()
    started = time.perf_counter()
    sessions = getattr(spec.horizon, horizon).sessions
    if workers is None:
        workers = default_workers(spec.replicates, sessions, synthesizer)
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    parts: list[dict[str, pa.Table]] = []
    with _cyclic_gc_paused():
        for part in _replicate_parts(loaded, horizon, synthesizer, workers):
            parts.append(part)
            if progress:
                progress(sessions)
    tables = concat_tables(parts)
    world = WorldKey(spec.id, horizon)
    files = writer.put_many([(table, world, tables[table.name]) for table in WORLD_TABLES])
    if writes_fallbacks(synthesizer):
        fallbacks = pa.concat_tables(
            [part[SYNTHESIS_FALLBACKS.name] for part in parts]
        ).combine_chunks()
        files.append(writer.put(SYNTHESIS_FALLBACKS, world, fallbacks))
    files.append(
        writer.put_text(
            world_manifest_path(spec.id, horizon),
            json.dumps(world_manifest(loaded, horizon, synthesizer), indent=2, sort_keys=True)
            + "\n",
        )
    )
    return _summary(loaded, horizon, tables, time.perf_counter() - started, files)


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one horizon is generated.

    Generation allocates millions of small, short-lived, acyclic objects (turns, strings,
    tuples), which reference counting frees; the cyclic collector only rescans the growing heap
    (a third of a cold long-horizon generation here). Kept workers pause it the same way for
    each request (``_pool._serve``). Whatever cycles do form are collected once the collector
    runs again after the horizon.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replicate_part(
    loaded: LoadedScenario, horizon: HorizonName, replicate: int, synthesizer: Synthesizer
) -> dict[str, pa.Table]:
    """One replicate's tables: what a worker process sends back (Arrow buffers, not objects)."""
    world = generate_replicate(loaded.spec, horizon, replicate, synthesizer)
    tables = replicate_tables(loaded.spec, horizon, world)
    if writes_fallbacks(synthesizer):
        spec = loaded.spec
        tables[SYNTHESIS_FALLBACKS.name] = fallback_table(spec.id, horizon, synthesizer, [world])
    return tables


def _replicate_parts(
    loaded: LoadedScenario, horizon: HorizonName, synthesizer: Synthesizer, workers: int
) -> Iterator[dict[str, pa.Table]]:
    """Every replicate's tables, in replicate order."""
    replicates = range(loaded.spec.replicates)
    workers = min(workers, len(replicates))
    if workers <= 1:
        for replicate in replicates:
            yield _replicate_part(loaded, horizon, replicate, synthesizer)
        return
    # Worker k takes replicates k, k + workers, …; this process is worker 0. The others are kept
    # forked processes (see _pool): each is sent its share and sends its tables back once, when
    # all are done; no helper threads here, which would have to win the GIL from the generation.
    with _WORKERS.lease(workers - 1) as helpers:
        for k, helper in enumerate(helpers, 1):
            helper.request((loaded, horizon, synthesizer), replicates[k::workers])
        parts = {r: _replicate_part(loaded, horizon, r, synthesizer) for r in replicates[::workers]}
        for helper in helpers:
            parts.update(helper.reply())
    for replicate in replicates:
        yield parts.pop(replicate)


def _generate_parts(
    payload: tuple[LoadedScenario, HorizonName, Synthesizer], replicates: Sequence[int]
) -> dict[int, dict[str, pa.Table]]:
    """A kept worker's share: the tables of ``replicates``.

    ``_replicate_part`` is looked up when called, so a replacement (a test's) reaches workers
    forked after it.
    """
    loaded, horizon, synthesizer = payload
    return {r: _replicate_part(loaded, horizon, r, synthesizer) for r in replicates}


def _registrations() -> tuple[str, ...]:
    # A kept worker knows the entity types and paradigms registered when it was forked; more
    # mean new workers.
    return (
        *(definition.name for definition in entity_types()),
        *(f"paradigm:{name}" for name in paradigm_names()),
    )


_WORKERS = worker_pool(_generate_parts, "drift-world", _registrations)


def _summary(
    loaded: LoadedScenario,
    horizon: HorizonName,
    tables: dict[str, pa.Table],
    seconds: float,
    files: list[Location],
) -> WorldSummary:
    schedule = tables["event_schedules"]
    contents = tables["transcripts"].column("content")
    probes = tables["probes"].column("checkpoint").to_pylist()
    return WorldSummary(
        scenario=loaded.spec.id,
        horizon=horizon,
        replicates=loaded.spec.replicates,
        sessions=schedule.num_rows,
        tiers=dict(Counter(schedule.column("tier").to_pylist())),
        turns=len(contents),
        distinct_turn_share=pc.count_distinct(contents).as_py() / max(1, len(contents)),
        facts=int(tables["ground_truth"].num_rows),
        probes=len(probes),
        checkpoints=[c.after_session for c in checkpoints_for(loaded.spec, horizon)],
        probes_per_checkpoint=dict(sorted(Counter(probes).items())),
        seconds=seconds,
        files=files,
    )


def generate_worlds(
    scenarios: Sequence[LoadedScenario],
    root: RootLike,
    horizons: Sequence[HorizonName] = (),
    synthesizer: Synthesizer | None = None,
    progress: ProgressHook | None = None,
    *,
    workers: int | None = None,
) -> list[WorldSummary]:
    """Generate the chosen horizons (default: all declared) of every scenario under ``root``.

    ``root`` is a folder or an ``s3://bucket/prefix`` URL (see :class:`StorageRoot`).
    ``workers`` is passed to :func:`generate_horizon` (None: its default).

    Everything is staged and moved into place only when all worlds generated, so a failure
    leaves the destination as it was.
    """
    for loaded in scenarios:
        check_supported(loaded.spec)
    summaries: list[WorldSummary] = []
    with staged(root) as writer:
        for loaded in scenarios:
            for name, _ in loaded.spec.horizon.items():
                if horizons and name not in horizons:
                    continue
                summaries.append(
                    generate_horizon(loaded, name, writer, synthesizer, progress, workers=workers)
                )
    return summaries
