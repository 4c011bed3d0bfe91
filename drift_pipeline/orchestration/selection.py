"""Backfill selections: the registered worlds and arms matching a horizon, scenarios, an ablation.

For example every ``long`` world with every arm, or one ablation's arms on every world. The
registered partitions are read from the instance; :mod:`.launch` runs a selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM, ablation_arms
from drift_pipeline.scenario import HORIZON_NAMES

from .partitions import ARM, WORLD, CellKey, WorldKey
from .resources import ScenarioCatalog


@dataclass(frozen=True)
class Selection:
    """Worlds × arms to (re)compute."""

    worlds: tuple[WorldKey, ...]
    arms: tuple[Arm, ...]

    @property
    def cells(self) -> list[CellKey]:
        """Every cell of the selection."""
        return [CellKey(world, arm.key) for world in self.worlds for arm in self.arms]


def select(
    instance: dg.DagsterInstance,
    catalog: ScenarioCatalog,
    horizon: str | None = None,
    scenarios: Sequence[str] = (),
    ablation: str | None = None,
    arms: Sequence[str] = (),
) -> Selection:
    """Registered worlds and arms matching the filters (no filter: everything registered).

    Every selected world also gets its baselines (the reference compressor's run), which are
    world-level assets, not an arm.

    Args:
        instance: Where the partitions are registered.
        catalog: Scenario folders (for ablation names).
        horizon: Only worlds of this horizon (``long`` selects every ``…/long`` world).
        scenarios: Only these scenario ids.
        ablation: Only this ablation's arms (from ``ablations.yaml``).
        arms: Only these arm keys.

    Raises:
        ValueError: An unknown horizon, ablation or arm (the message lists the known ones).
    """
    if horizon is not None and horizon not in HORIZON_NAMES:
        raise ValueError(f"horizon {horizon!r} is not one of {', '.join(HORIZON_NAMES)}")
    worlds = [
        world
        for world in map(WorldKey.parse, instance.get_dynamic_partitions(WORLD))
        if (horizon is None or world.horizon == horizon)
        and (not scenarios or world.source_id in scenarios)
    ]
    # An instance from before the reference compressor became a world baseline may still
    # list it as an arm; it is not a cell.
    registered = [
        arm for arm in map(Arm.parse, instance.get_dynamic_partitions(ARM)) if arm != REFERENCE_ARM
    ]
    chosen = registered
    if ablation is not None:
        chosen = ablation_arms(catalog.ablations(), [ablation])
        unregistered = [a.key for a in chosen if a not in registered]
        if unregistered:
            raise ValueError(f"ablation {ablation!r}: arms {unregistered} are not registered yet")
    if arms:
        wanted = [Arm.parse(key) for key in arms]
        unknown = [a.key for a in wanted if a not in registered]
        if unknown:
            raise ValueError(f"arms {unknown} are not registered partitions")
        chosen = [a for a in chosen if a in wanted]
    return Selection(tuple(worlds), tuple(chosen))


def title(
    horizon: str | None, scenarios: Sequence[str], ablation: str | None, arms: Sequence[str]
) -> str:
    """A backfill's title naming its filters (``drift horizon=long ablation=soft-gates``)."""
    parts = [
        f"horizon={horizon}" if horizon else "",
        f"ablation={ablation}" if ablation else "",
    ]
    parts += [f"scenario={s}" for s in scenarios] + [f"arm={a}" for a in arms]
    return "drift " + (" ".join(p for p in parts if p) or "all cells")
