"""Writing sources' worlds to storage: every chosen horizon, staged and committed together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from drift_pipeline.storage import RootLike, staged

from ._base import ProgressHook, WorldSource

if TYPE_CHECKING:
    from drift_pipeline.scenario import HorizonName
    from drift_pipeline.world import WorldSummary
    from drift_pipeline.world.synthesis import Synthesizer

__all__ = ["write_worlds"]


def write_worlds(
    sources: Sequence[WorldSource],
    root: RootLike,
    horizons: Sequence[HorizonName] = (),
    synthesizer: Synthesizer | None = None,
    progress: ProgressHook | None = None,
    *,
    workers: int | None = None,
) -> list[WorldSummary]:
    """Write the chosen horizons (default: all declared) of every source under ``root``.

    Everything is staged and moved into place only when every world is written, so a failure
    leaves the destination as it was.

    Raises:
        ValueError: A source cannot be written (``GenerationUnsupported`` for a paradigm
            without a generator), before anything is staged.
    """
    for source in sources:
        source.check()
    summaries: list[WorldSummary] = []
    with staged(root) as writer:
        for source in sources:
            for world in source.worlds(horizons):
                summaries.append(
                    source.write(world.horizon, writer, synthesizer, progress, workers=workers)
                )
    return summaries
