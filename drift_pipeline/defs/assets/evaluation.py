"""Phase 03 as assets: one cell's answers, metrics and token-cost curve.

Reads the cell's ``memory_snapshots`` and ``retrievals``, the world's ``probes`` (latent ground
truth), the reference compressor's run (``reference_memory``, scored by ``world_baselines``);
never ``transcripts``.
"""

from collections.abc import Iterator

import dagster as dg

from drift_pipeline.memory import Arm
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.asset_names import (
    CELL_COST_CURVE,
    REFERENCE_MEMORY,
    WORLD_BASELINES,
)
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.partitions import CellKey, cell_to_world, cells_partitions
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import (
    REFERENCE_ARM,
    evaluate_stored,
    metric_values,
    stage_evaluation,
    stored_reference,
)
from drift_pipeline.storage import (
    CELL_METRICS,
    COST_CURVES,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    staged,
)

GROUP = "evaluation"

_KINDS = {"python", "parquet"}
_WORLD = [
    dg.AssetDep(PROBES.name, partition_mapping=cell_to_world),
    dg.AssetDep(REFERENCE_MEMORY, partition_mapping=cell_to_world),
    dg.AssetDep(WORLD_BASELINES, partition_mapping=cell_to_world),
]
_MEMORY = [dg.AssetDep(MEMORY_SNAPSHOTS.name), dg.AssetDep(RETRIEVALS.name)]


@dg.multi_asset(
    name="cell_evaluation",
    specs=[
        dg.AssetSpec(
            PROBE_ANSWERS.name,
            deps=[dg.AssetDep(RETRIEVALS.name), *_WORLD],
            group_name=GROUP,
            kinds=_KINDS,
            description=PROBE_ANSWERS.description,
            metadata={"drift/table": PROBE_ANSWERS.name},
            automation_condition=REFRESH,
        ),
        dg.AssetSpec(
            CELL_METRICS.name,
            deps=[dg.AssetDep(PROBE_ANSWERS.name), *_MEMORY, *_WORLD],
            group_name=GROUP,
            kinds=_KINDS,
            description=CELL_METRICS.description,
            metadata={"drift/table": CELL_METRICS.name},
            automation_condition=REFRESH,
        ),
        dg.AssetSpec(
            CELL_COST_CURVE,
            deps=[dg.AssetDep(CELL_METRICS.name), *_MEMORY],
            group_name=GROUP,
            kinds=_KINDS,
            description="One cell's token-cost curve: cumulative tokens and MVOT so far at "
            "each checkpoint (its rows of the cost_curves table).",
            metadata={"drift/table": COST_CURVES.name},
            automation_condition=REFRESH,
        ),
    ],
    partitions_def=cells_partitions,
)
def cell_evaluation(
    context: dg.AssetExecutionContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> Iterator[dg.MaterializeResult]:  # type: ignore[type-arg]
    """Judge one cell's retrievals and score it against the world's baselines."""
    cell = CellKey.parse(context.partition_key)
    world = cell.world
    root = storage.path()
    if cell.arm_key == REFERENCE_ARM.key:
        raise ValueError(
            f"cell {cell}: the reference compressor is scored once per world by "
            f"{WORLD_BASELINES}, not as a cell"
        )
    source = scenarios.load(world.source_id)
    reference = stored_reference(root, world)
    result = evaluate_stored(root, source, world.horizon, Arm.parse(cell.arm_key), reference)
    with staged(root) as writer:
        tables = stage_evaluation(writer, cell, result)
    answers, metrics, curve = tables[PROBE_ANSWERS], tables[CELL_METRICS], tables[COST_CURVES]
    correct = answers.column("correct").to_pylist()
    scores = answers.column("score").to_pylist()
    yield dg.MaterializeResult(
        asset_key=PROBE_ANSWERS.name,
        metadata=md.numeric(
            {
                md.ROWS: answers.num_rows,
                md.PROBES: len(set(answers.column("probe_id").to_pylist())),
                md.ACCURACY: sum(correct) / len(correct) if correct else None,
                md.MEAN_SCORE: sum(scores) / len(scores) if scores else None,
            },
            md.PROBE_ANSWERS_KEYS,
        ),
    )
    values = metric_values(metrics, list(md.HEADLINE_METRICS))
    yield dg.MaterializeResult(
        asset_key=CELL_METRICS.name,
        metadata=md.numeric(
            {
                md.ROWS: metrics.num_rows,
                # Shown beside the figures: an invalid cell's are reported, never ranked.
                md.VALID: result.valid,
                md.FAULT_RATE: result.fault_rate,
                **{md.HEADLINE_METRICS[k]: v for k, v in values.items()},
            },
            md.CELL_METRICS_KEYS,
        )
        | md.cost_metadata(result.metrics),
    )
    cumulative = curve.column("cumulative_tokens").to_pylist()
    mvot = curve.column("mvot_so_far").to_pylist()
    yield dg.MaterializeResult(
        asset_key=CELL_COST_CURVE,
        metadata=md.numeric(
            {
                md.ROWS: curve.num_rows,
                md.CHECKPOINTS: curve.num_rows,
                md.FINAL_CUMULATIVE_TOKENS: cumulative[-1] if cumulative else None,
                md.FINAL_MVOT: mvot[-1] if mvot else None,
            },
            md.CELL_COST_CURVE_KEYS,
        ),
    )
