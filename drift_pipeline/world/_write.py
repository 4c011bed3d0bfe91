"""Generating worlds to storage: every horizon of a scenario, staged and committed atomically."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version as package_version

import pyarrow as pa

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
from ._generate import WorldReplicate, check_supported, generate_replicate, world_tables
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
        "drift_pipeline": package_version("drift-pipeline"),
        # An LLM synthesizer's pin (model, prompt version; never a key or an endpoint).
        **({"synthesizer_pin": pin()} if (pin := getattr(synthesizer, "pin", None)) else {}),
    }


def generate_horizon(
    loaded: LoadedScenario,
    horizon: HorizonName,
    writer: StagedWrite,
    synthesizer: Synthesizer | None = None,
    progress: ProgressHook | None = None,
) -> WorldSummary:
    """Generate every replicate of one horizon and stage its five tables and manifest."""
    spec = loaded.spec
    synthesizer = synthesizer or TemplateSynthesizer()
    started = time.perf_counter()
    replicates: list[WorldReplicate] = []
    for replicate in range(spec.replicates):
        replicates.append(generate_replicate(spec, horizon, replicate, synthesizer))
        if progress:
            progress(getattr(spec.horizon, horizon).sessions)
    tables = world_tables(spec, horizon, replicates)
    keys = {"scenario": spec.id, "horizon": horizon}
    files = [writer.put(table, keys, tables[table.name]) for table in WORLD_TABLES]
    if writes_fallbacks(synthesizer):
        fallbacks = fallback_table(spec.id, horizon, synthesizer, replicates)
        files.append(writer.put(SYNTHESIS_FALLBACKS, keys, fallbacks))
    files.append(
        writer.put_text(
            world_manifest_path(spec.id, horizon),
            json.dumps(world_manifest(loaded, horizon, synthesizer), indent=2, sort_keys=True)
            + "\n",
        )
    )
    return _summary(loaded, horizon, tables, time.perf_counter() - started, files)


def _summary(
    loaded: LoadedScenario,
    horizon: HorizonName,
    tables: dict[str, pa.Table],
    seconds: float,
    files: list[Location],
) -> WorldSummary:
    schedule = tables["event_schedules"]
    transcripts = tables["transcripts"].column("content").to_pylist()
    probes = tables["probes"].column("checkpoint").to_pylist()
    return WorldSummary(
        scenario=loaded.spec.id,
        horizon=horizon,
        replicates=loaded.spec.replicates,
        sessions=schedule.num_rows,
        tiers=dict(Counter(schedule.column("tier").to_pylist())),
        turns=len(transcripts),
        distinct_turn_share=len(set(transcripts)) / max(1, len(transcripts)),
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
) -> list[WorldSummary]:
    """Generate the chosen horizons (default: all declared) of every scenario under ``root``.

    ``root`` is a folder or an ``s3://bucket/prefix`` URL (see :class:`StorageRoot`).

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
                summaries.append(generate_horizon(loaded, name, writer, synthesizer, progress))
    return summaries
