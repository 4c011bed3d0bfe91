"""Worlds for a run: reuse the generated tables when the same scenario version made them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from drift_pipeline.scenario import HorizonName, LoadedScenario
from drift_pipeline.storage import WORLD_TABLES, RootLike, StorageRoot, staged
from drift_pipeline.world import (
    WorldSummary,
    close_workers,
    generate_horizon,
    world_manifest,
    world_manifest_path,
)
from drift_pipeline.world.synthesis import Synthesizer, TemplateSynthesizer


def world_is_current(
    root: RootLike,
    loaded: LoadedScenario,
    horizon: str,
    synthesizer: Synthesizer | None = None,
) -> bool:
    """Whether ``root`` holds all five tables of this world, made from this very scenario file.

    ``synthesizer`` (default: the template one) must be the one that wrote it, with the same
    pin (an LLM synthesizer's model and prompt version).
    """
    storage = StorageRoot.from_url(root)
    try:
        recorded = json.loads(storage.read_text(world_manifest_path(loaded.spec.id, horizon)))
    except (FileNotFoundError, ValueError):
        return False
    if recorded != world_manifest(loaded, horizon, synthesizer or TemplateSynthesizer()):
        return False
    keys = {"scenario": loaded.spec.id, "horizon": horizon}
    return all(storage.partition_exists(table, keys) for table in WORLD_TABLES)


def ensure_worlds(
    root: RootLike,
    scenarios: Sequence[LoadedScenario],
    horizons: Sequence[HorizonName],
    synthesizer: Synthesizer | None = None,
) -> tuple[list[tuple[LoadedScenario, HorizonName]], list[WorldSummary]]:
    """Generate the worlds that are missing or stale; return every world of the run.

    Worlds are written by ``synthesizer`` (default: the template one); a world another
    synthesizer wrote counts as stale.

    Returns:
        The (scenario, horizon) worlds to run, and summaries of those generated now.
    """
    worlds: list[tuple[LoadedScenario, HorizonName]] = []
    missing: list[tuple[LoadedScenario, HorizonName]] = []
    for loaded in scenarios:
        for name, _ in loaded.spec.horizon.items():
            if horizons and name not in horizons:
                continue
            worlds.append((loaded, name))
            if not world_is_current(root, loaded, name, synthesizer):
                missing.append((loaded, name))
    generated: list[WorldSummary] = []
    if missing:
        try:
            with staged(root) as writer:
                for loaded, name in missing:
                    generated.append(generate_horizon(loaded, name, writer, synthesizer))
        finally:
            # The kept generation workers served every world above; the run's cells come next
            # and have no use for them (nor for their memory).
            close_workers()
    return worlds, generated
