"""Backfills as selections of partitions: a horizon, a scenario, an ablation's arms.

For example every ``long`` world with every arm, or one ablation's arms on every world.

Two ways to execute a selection:

* in process, now (``python -m drift_pipeline.defs.backfill --horizon long``): the runs of
  :func:`._steps.plan_cells`, one after another, against the ``DAGSTER_HOME`` instance;
* as a Dagster asset backfill (``… --launch``): one backfill record on the instance, which the
  daemon of ``dagster dev`` executes in dependency order and the UI shows under Backfills.

Examples::

    python -m drift_pipeline.defs.backfill --horizon long               # every long world
    python -m drift_pipeline.defs.backfill --ablation soft-gates        # rerun one ablation
    python -m drift_pipeline.defs.backfill --horizon long --launch      # hand it to the daemon
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM, world_is_current
from drift_pipeline.scenario import HORIZON_NAMES

from ._steps import Step, execute, plan_cells
from .assets import (
    cell_evaluation,
    cost_curves,
    leaderboard,
    memory_tables,
    world_baselines,
    world_tables,
)
from .partitions import (
    ARM,
    WORLD,
    CellKey,
    WorldKey,
    register_partitions,
    repository_partitions,
)
from .resources import DriftStorage, MemoryLoop, ScenarioCatalog, default_catalog, default_storage
from .run import build_definitions


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
    registered = [Arm.parse(key) for key in instance.get_dynamic_partitions(ARM)]
    chosen = registered
    if ablation is not None:
        found = {a.name: a for a in catalog.ablations()}
        if ablation not in found:
            raise ValueError(
                f"ablation {ablation!r} is not in ablations.yaml ({', '.join(found) or 'none'})"
            )
        chosen = list(found[ablation].arms)
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


def plan(
    instance: dg.DagsterInstance,
    selection: Selection,
    catalog: ScenarioCatalog,
    storage: DriftStorage,
) -> list[Step]:
    """The runs of the selection in order; worlds missing or stale are generated first."""
    recorded = instance.get_materialized_partitions(dg.AssetKey("probes"))
    known = {source.id: source for source in catalog.scenarios()}
    root = storage.path()

    def regenerate(world: WorldKey) -> bool:
        source = known.get(world.source_id)
        if source is None:
            raise ValueError(f"world {world}: no scenario file with that id in the catalog")
        return world.partition_key not in recorded or not world_is_current(
            root, source, world.horizon
        )

    return plan_cells(selection.worlds, selection.arms, regenerate)


def run_in_process(
    instance: dg.DagsterInstance,
    selection: Selection,
    storage: DriftStorage,
    catalog: ScenarioCatalog,
    loop: MemoryLoop | None = None,
) -> list[Step]:
    """Execute the selection now, run by run; returns the steps run."""
    steps = plan(instance, selection, catalog, storage)
    defs = build_definitions(storage, catalog, loop or MemoryLoop())
    execute(defs, instance, steps, log=lambda line: print(line, flush=True))
    return steps


def launch_backfill(instance: dg.DagsterInstance, selection: Selection, title: str) -> str:
    """Create an asset backfill of the selection for the daemon; returns its id.

    Targets the world tables of the selected worlds, every selected cell plus the reference
    compressor's cell on each world, the worlds' baselines, and the reports. Dagster orders the
    runs by the asset graph's partition mappings.

    Uses Dagster's backfill records directly (``PartitionBackfill``), which the UI's "Launch
    backfill" also creates; it is not a public API and may move between Dagster releases.
    """
    from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    graph = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop()).resolve_asset_graph()
    world_keys = [w.partition_key for w in selection.worlds]
    reference = [CellKey(w, REFERENCE_ARM.key).partition_key for w in selection.worlds]
    cells = [c.partition_key for c in selection.cells]
    by_assets = {
        world_tables: world_keys,
        memory_tables: list(dict.fromkeys([*reference, *cells])),
        world_baselines: world_keys,
        cell_evaluation: list(dict.fromkeys([*reference, *cells])),
    }
    subsets = {}
    for assets_def, keys in by_assets.items():
        for key in assets_def.keys:
            partitions_def = graph.get(key).partitions_def
            assert partitions_def is not None
            subsets[key] = partitions_def.subset_with_partition_keys(keys)
    target = AssetGraphSubset(  # type: ignore[call-arg]
        partitions_subsets_by_asset_key=subsets,
        non_partitioned_asset_keys={k for a in (leaderboard, cost_curves) for k in a.keys},
    )
    backfill_id = make_new_backfill_id()
    instance.add_backfill(
        PartitionBackfill.from_asset_graph_subset(
            backfill_id=backfill_id,
            backfill_timestamp=time.time(),
            tags={"drift/selection": title[:63]},
            dynamic_partitions_store=instance,
            asset_graph_subset=target,
            title=title,
            description=f"{len(selection.worlds)} worlds × {len(selection.arms)} arms",
            run_config=None,
        )
    )
    return backfill_id


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: select partitions, then run them now or launch a backfill."""
    parser = argparse.ArgumentParser(
        prog="python -m drift_pipeline.defs.backfill", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--horizon", choices=HORIZON_NAMES, help="only worlds of this horizon")
    parser.add_argument(
        "--scenario", action="append", default=[], help="only this scenario id (repeatable)"
    )
    parser.add_argument("--ablation", help="only this ablation's arms (ablations.yaml)")
    parser.add_argument("--arm", action="append", default=[], help="only this arm key (repeatable)")
    parser.add_argument(
        "--launch",
        action="store_true",
        help="create a backfill for the daemon instead of running now",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the selection and the runs only"
    )
    args = parser.parse_args(argv)
    if not os.environ.get("DAGSTER_HOME"):
        print(
            'DAGSTER_HOME is not set; from the project root: export DAGSTER_HOME="$PWD"',
            file=sys.stderr,
        )
        return 2
    storage, catalog = default_storage(), default_catalog()
    with dg.DagsterInstance.get() as instance:
        register_partitions(instance, *repository_partitions(catalog))
        try:
            selection = select(
                instance, catalog, args.horizon, args.scenario, args.ablation, args.arm
            )
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
        worlds, arms = len(selection.worlds), len(selection.arms)
        print(f"{worlds} worlds × {arms} arms = {len(selection.cells)} cells")
        if args.dry_run:
            for step in plan(instance, selection, catalog, storage):
                print(f"{step.stage.value} {step.partition or ''}".rstrip())
            return 0
        if args.launch:
            backfill_id = launch_backfill(instance, selection, _title(args))
            print(
                f"backfill {backfill_id} created; `dagster dev` runs it (UI: Overview → Backfills)"
            )
            return 0
        run_in_process(instance, selection, storage, catalog)
    return 0


def _title(args: argparse.Namespace) -> str:
    parts = [
        f"horizon={args.horizon}" if args.horizon else "",
        f"ablation={args.ablation}" if args.ablation else "",
    ]
    parts += [f"scenario={s}" for s in args.scenario] + [f"arm={a}" for a in args.arm]
    return "drift " + (" ".join(p for p in parts if p) or "all cells")


if __name__ == "__main__":
    raise SystemExit(main())
