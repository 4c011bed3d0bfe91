"""Partitions: worlds (scenario × horizon), arms (backend × gate) and cells (world × arm).

Partition keys are the typed keys of :mod:`drift_pipeline.keys`: :class:`WorldKey` for
``world`` keys (``ua-baseline-001/long``), :class:`drift_pipeline.memory.Arm` for ``arm`` keys
(``bm25@soft:3``) and :class:`CellKey` for the 2-D keys Dagster builds from both
(``bm25@soft:3|ua-baseline-001/long``: Dagster orders dimensions by name and joins them with
``|``, which is why a world key cannot use ``|`` itself).

Both dimensions are dynamic, so a scenario that is not in the repository (``drift run --via
dagster some/where.yaml``) and a plugin backend get partitions without a code reload. The
repository's own worlds and arms are registered when the definitions load
(:func:`register_at_load`), by the ``partition_registry`` sensor, and by every in-process run.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterable, Sequence

import dagster as dg

# Re-exported: the keys are defined once, below every phase; assets name them from here.
from drift_pipeline.keys import CellKey as CellKey
from drift_pipeline.keys import WorldKey as WorldKey
from drift_pipeline.memory import Arm, Gate
from drift_pipeline.memory.backends import default_backend_names
from drift_pipeline.pipeline import REFERENCE_ARM, Ablation
from drift_pipeline.sources import WorldSource
from drift_pipeline.world import GenerationUnsupported

from .resources import ScenarioCatalog

WORLD = "world"
"""Name of the world dimension (and of its dynamic partitions definition)."""
ARM = "arm"
"""Name of the arm dimension (and of its dynamic partitions definition)."""

_log = logging.getLogger(__name__)


def cell_partition_key(cell: CellKey) -> dg.MultiPartitionKey:
    """The 2-D partition key Dagster expects for ``cell`` (its string is ``cell.partition_key``)."""
    return dg.MultiPartitionKey({WORLD: cell.world.partition_key, ARM: cell.arm_key})


worlds_partitions = dg.DynamicPartitionsDefinition(name=WORLD)
"""World partitions (scenario × horizon)."""

arms_partitions = dg.DynamicPartitionsDefinition(name=ARM)
"""Arm partitions (backend × gate)."""

cells_partitions = dg.MultiPartitionsDefinition({WORLD: worlds_partitions, ARM: arms_partitions})
"""Cell partitions (world × arm)."""

with warnings.catch_warnings():
    # Beta in 1.13, and exactly the mapping needed: a cell reads its own world's tables.
    warnings.simplefilter("ignore", dg.BetaWarning)
    cell_to_world = dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name=WORLD)
    """Maps a cell to its world (and a world to every cell on it)."""


def scenario_worlds(sources: Iterable[WorldSource]) -> list[WorldKey]:
    """Every declared horizon of every source whose worlds can be written."""
    worlds: list[WorldKey] = []
    for source in sources:
        try:
            source.check()
        except GenerationUnsupported as error:
            _log.warning("not registering %s: %s", source.origin, error)
            continue
        worlds.extend(world.key for world in source.worlds())
    return worlds


def repository_arms(ablations: Iterable[Ablation]) -> list[Arm]:
    """Every default backend under the hard gate, then every ablation's arms.

    Default backends are those registered in code: an installed plugin's backend becomes an
    arm partition only when an ablation (or a run) names it.

    The reference compressor under the hard gate is not an arm partition: it runs once per
    world as ``reference_memory`` (a world baseline).
    """
    arms = [Arm(name, Gate("hard")) for name in default_backend_names()]
    arms = [arm for arm in arms if arm != REFERENCE_ARM]
    for ablation in ablations:
        arms.extend(arm for arm in ablation.arms if arm not in arms)
    return arms


def missing_partitions(
    instance: dg.DagsterInstance, worlds: Sequence[WorldKey], arms: Sequence[Arm]
) -> tuple[list[str], list[str]]:
    """World and arm keys not registered on ``instance`` yet, in the order given."""
    known_worlds = set(instance.get_dynamic_partitions(WORLD))
    known_arms = set(instance.get_dynamic_partitions(ARM))
    new_worlds = list(
        dict.fromkeys(w.partition_key for w in worlds if w.partition_key not in known_worlds)
    )
    new_arms = list(dict.fromkeys(a.key for a in arms if a.key not in known_arms))
    return new_worlds, new_arms


def register_partitions(
    instance: dg.DagsterInstance, worlds: Sequence[WorldKey], arms: Sequence[Arm]
) -> tuple[list[str], list[str]]:
    """Add the worlds and arms that ``instance`` does not know yet; returns the added keys."""
    new_worlds, new_arms = missing_partitions(instance, worlds, arms)
    if new_worlds:
        instance.add_dynamic_partitions(WORLD, new_worlds)
    if new_arms:
        instance.add_dynamic_partitions(ARM, new_arms)
    return new_worlds, new_arms


def repository_partitions(catalog: ScenarioCatalog) -> tuple[list[WorldKey], list[Arm]]:
    """The worlds of the catalog's scenario files and the arms of the registry and ablations.

    Raises:
        ScenarioError: If a scenario file is invalid.
        AblationError: If ``ablations.yaml`` is invalid.
    """
    return scenario_worlds(catalog.scenarios()), repository_arms(catalog.ablations())


def register_at_load(catalog: ScenarioCatalog) -> None:
    """Register the catalog's partitions on the ``DAGSTER_HOME`` instance, if there is one.

    Called while the code location loads, so ``dagster dev`` shows every world and arm at once.
    Without ``DAGSTER_HOME`` (tests, ephemeral runs) there is no instance to write to. A failure
    (an invalid scenario file, an unreachable database) only logs, so the code location still
    loads; the ``partition_registry`` sensor then reports the error on its ticks.
    """
    if not os.environ.get("DAGSTER_HOME"):
        return
    try:
        worlds, arms = repository_partitions(catalog)
        with dg.DagsterInstance.get() as instance:
            added_worlds, added_arms = register_partitions(instance, worlds, arms)
    except Exception as error:  # loading must not fail on registration
        _log.warning("could not register partitions at load time: %s", error)
        return
    if added_worlds or added_arms:
        _log.info("registered %d worlds and %d arms", len(added_worlds), len(added_arms))
