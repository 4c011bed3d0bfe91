"""Asset jobs, one per partitions definition: a run materializes one world, one cell or the reports.

A job's run covers one partition, and Dagster orders the assets inside it, so the world's tables,
its reference compressor and its baselines are one ``world_job`` run; a cell's memory loop and
evaluation one ``cell_job`` run. Across partitions definitions the order comes from the asset
graph (:mod:`drift_pipeline.orchestration.plan` for runs in process, the ``stale_cells``
automation sensor or an asset backfill for the daemon).
"""

from __future__ import annotations

import dagster as dg

from .assets.baselines import world_baselines
from .assets.evaluation import cell_evaluation
from .assets.memory import memory_tables, reference_memory
from .assets.report import cost_curves, leaderboard
from .assets.world import world_tables

world_job = dg.define_asset_job(
    "world_job",
    selection=dg.AssetSelection.assets(world_tables, reference_memory, world_baselines),
    description="Generate one world's five tables, audit its probes, run the reference "
    "compressor on it and score that run (the world's baselines).",
)
cell_job = dg.define_asset_job(
    "cell_job",
    selection=dg.AssetSelection.assets(memory_tables, cell_evaluation),
    description="Run and score one cell (memory loop, answers, metrics, cost curve).",
)
leaderboard_job = dg.define_asset_job(
    "leaderboard_job",
    selection=dg.AssetSelection.assets(leaderboard, cost_curves),
    description="Rebuild the leaderboard and the cost curves from every stored cell.",
)
