"""The world's baselines, once per world: the reference compressor's scored run and the amnesiac.

MVOT and TES of every arm are relative to these (spec §7.1, §7.7). ``reference_memory`` runs
the reference compressor on the world; this asset scores that run and writes its evaluation
tables under ``arm=reference_compressor@hard`` (so the leaderboard lists it like any arm), and
every cell's evaluation on the world depends on it. The amnesiac's answers are the judge on
empty contexts, a pure function of the probes, recomputed where needed and summarised here.
"""

import dagster as dg

from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.asset_names import REFERENCE_MEMORY, WORLD_BASELINES
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.partitions import CellKey, WorldKey, worlds_partitions
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import REFERENCE_ARM, evaluate_stored, stage_evaluation
from drift_pipeline.storage import PROBES, staged

GROUP = "evaluation"


@dg.asset(
    name=WORLD_BASELINES,
    partitions_def=worlds_partitions,
    deps=[dg.AssetDep(PROBES.name), dg.AssetDep(REFERENCE_MEMORY)],
    group_name=GROUP,
    kinds={"python", "parquet"},
    metadata={"drift/reference_arm": REFERENCE_ARM.key},
    automation_condition=REFRESH,
)
def world_baselines(
    context: dg.AssetExecutionContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """The reference compressor's scored run and the amnesiac's error rate on one world."""
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
