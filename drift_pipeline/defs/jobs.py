"""Asset jobs, one per stage: each run materializes one partition of one stage.

A cell needs its world, the reference compressor's memory run and the world's baselines first,
and those live in other partitions definitions, so a whole benchmark is a sequence of runs
(see :mod:`._steps`), or one asset backfill that Dagster orders itself.
"""

from __future__ import annotations

import dagster as dg

from .assets import (
    cell_evaluation,
    cost_curves,
    leaderboard,
    memory_tables,
    world_baselines,
    world_tables,
)

world_job = dg.define_asset_job(
    "world_job",
    selection=dg.AssetSelection.assets(world_tables),
    description="Generate one world's five tables and audit its probes.",
)
memory_job = dg.define_asset_job(
    "memory_job",
    selection=dg.AssetSelection.assets(memory_tables),
    description="Run one arm's memory loop over one world.",
)
baselines_job = dg.define_asset_job(
    "baselines_job",
    selection=dg.AssetSelection.assets(world_baselines),
    description="Score the reference compressor's cell on one world.",
)
evaluation_job = dg.define_asset_job(
    "evaluation_job",
    selection=dg.AssetSelection.assets(cell_evaluation),
    description="Judge and score one cell from its stored memory run.",
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

ALL_JOBS = [world_job, memory_job, baselines_job, evaluation_job, cell_job, leaderboard_job]
