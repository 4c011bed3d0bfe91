"""Worlds for a run: reuse the stored tables when the same source input wrote them."""

from __future__ import annotations

from collections.abc import Sequence

from drift_pipeline.scenario import HorizonName
from drift_pipeline.sources import SourceWorld, WorldSource
from drift_pipeline.storage import RootLike, staged
from drift_pipeline.world import WorldSummary, close_workers
from drift_pipeline.world.synthesis import Synthesizer


def world_is_current(
    root: RootLike,
    source: WorldSource,
    horizon: HorizonName,
    synthesizer: Synthesizer | None = None,
) -> bool:
    """Whether ``root`` holds all five tables of this world, written from this very input.

    For a generated source, ``synthesizer`` (default: the template one) must be the one that
    wrote it, with the same pin (an LLM synthesizer's model and prompt version).
    """
    return source.is_current(root, horizon, synthesizer)


def ensure_worlds(
    root: RootLike,
    sources: Sequence[WorldSource],
    horizons: Sequence[HorizonName],
    synthesizer: Synthesizer | None = None,
) -> tuple[list[SourceWorld], list[WorldSummary]]:
    """Write the worlds that are missing or stale; return every world of the run.

    Generated worlds are written by ``synthesizer`` (default: the template one); a world
    another synthesizer wrote counts as stale.

    Returns:
        The worlds to run (every declared horizon in ``horizons``, or all when empty), and
        summaries of those written now.
    """
    worlds = [world for source in sources for world in source.worlds(horizons)]
    missing = [w for w in worlds if not w.source.is_current(root, w.horizon, synthesizer)]
    generated: list[WorldSummary] = []
    if missing:
        try:
            with staged(root) as writer:
                for world in missing:
                    generated.append(world.source.write(world.horizon, writer, synthesizer))
        finally:
            # The kept generation workers served every world above; the run's cells come next
            # and have no use for them (nor for their memory).
            close_workers()
    return worlds, generated
