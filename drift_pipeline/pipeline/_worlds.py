"""Worlds for a run: reuse the stored tables when the same source input wrote them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from drift_pipeline.scenario import HorizonName
from drift_pipeline.sources import SourceWorld, WorldSource
from drift_pipeline.storage import RootLike, staged
from drift_pipeline.world import WorldSummary, close_workers
from drift_pipeline.world.synthesis import Synthesizer


class HorizonNotDeclared(ValueError):
    """No source declares any of the horizons asked for: nothing would run.

    The message has one line per source, naming it, the horizons asked and those it declares.
    """

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


@dataclass(frozen=True)
class HorizonSelection:
    """The sources a run keeps for the horizons asked, and what it leaves out.

    Attributes:
        sources: Each source that declares at least one horizon asked for (all of them when
            none is asked), in the order given.
        notes: One line per source lacking a horizon asked for: left out entirely, or run at
            the horizons it does declare.
    """

    sources: list[WorldSource]
    notes: list[str] = field(default_factory=list)


def select_horizons(
    sources: Sequence[WorldSource], horizons: Sequence[HorizonName]
) -> HorizonSelection:
    """Keep the sources that declare a horizon of ``horizons`` (empty: every source).

    A source is never run at a horizon that was not asked for: one declaring none of them is
    left out, and one declaring some is run at those only; each is named in a note.

    Raises:
        HorizonNotDeclared: No source declares any horizon asked for (one line per source).
    """
    if not horizons:
        return HorizonSelection(list(sources))
    asked = tuple(dict.fromkeys(horizons))
    kept: list[WorldSource] = []
    notes: list[str] = []
    missing_lines: list[str] = []
    for source in sources:
        missing = [h for h in asked if h not in source.horizons]
        running = [h for h in source.horizons if h in asked]
        if not missing:
            kept.append(source)
            continue
        line = (
            f"{source.origin}: {source.id} declares no {' or '.join(missing)} horizon "
            f"(declared: {', '.join(source.horizons) or 'none'})"
        )
        missing_lines.append(line)
        if running:
            kept.append(source)
            notes.append(f"{line}; run at {', '.join(running)} only")
        else:
            notes.append(f"{line}; left out")
    if not kept:
        raise HorizonNotDeclared(missing_lines)
    return HorizonSelection(kept, notes)


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
