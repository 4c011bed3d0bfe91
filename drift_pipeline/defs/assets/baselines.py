"""The world's baselines, once per world: the reference compressor's scored cell and the amnesiac.

MVOT and TES of every arm are relative to these (spec §7.1, §7.7). The reference compressor's
memory run is an ordinary cell (``reference_compressor@hard``) of ``memory_snapshots`` /
``retrievals``; this asset scores it once and writes its evaluation tables, which every other
cell on the world then reads. The amnesiac's answers are the judge on empty contexts, a pure
function of the probes, recomputed where needed and summarised here.
"""

import dagster as dg

from drift_pipeline.pipeline import REFERENCE_ARM
from drift_pipeline.storage import MEMORY_SNAPSHOTS, PROBES, RETRIEVALS, staged

from .. import metadata as md
from .._stored import evaluate_stored, stage_evaluation
from ..partitions import CellKey, WorldKey, cell_to_world, worlds_partitions
from ..resources import DriftStorage, ScenarioCatalog

GROUP = "evaluation"


@dg.asset(
    partitions_def=worlds_partitions,
    deps=[
        dg.AssetDep(PROBES.name),
        # Maps a world to all of its cells; only the reference arm's cell is read.
        dg.AssetDep(MEMORY_SNAPSHOTS.name, partition_mapping=cell_to_world),
        dg.AssetDep(RETRIEVALS.name, partition_mapping=cell_to_world),
    ],
    group_name=GROUP,
    kinds={"python", "parquet"},
    metadata={"drift/reference_arm": REFERENCE_ARM.key},
)
def world_baselines(
    context: dg.AssetExecutionContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """The reference compressor's scored cell and the amnesiac's error rate on one world."""
    world = WorldKey.parse(context.partition_key)
    source = scenarios.load(world.source_id)
    root = storage.path()
    result = evaluate_stored(root, source, world.horizon, REFERENCE_ARM, None)
    with staged(root) as writer:
        stage_evaluation(writer, CellKey(world, REFERENCE_ARM.key), result)
    metrics = result.metrics
    return dg.MaterializeResult(
        metadata=md.numeric(
            {
                md.PROBES: result.answers.num_rows,
                md.AMNESIAC_ERROR_RATE: metrics.get("error_rate_amnesiac").value,
                md.REFERENCE_STORAGE_PER_SESSION: metrics.get("storage_per_session").value,
                md.MVOT: metrics.get("mvot").value,
                md.DRIFT_C: metrics.get("drift_c").value,
                md.FAULTS: len(result.faults),
            },
            md.WORLD_BASELINES_KEYS,
        )
    )
