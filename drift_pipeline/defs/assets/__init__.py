"""Assets by phase: world tables, memory runs, baselines and evaluation, reports."""

import dagster as dg

from .baselines import WORLD_BASELINES, world_baselines
from .evaluation import CELL_COST_CURVE, cell_evaluation
from .memory import memory_tables, reference_memory
from .report import cost_curves, leaderboard
from .world import ANSWERABILITY, world_tables

ALL_ASSETS: list[dg.AssetsDefinition] = [
    world_tables,
    reference_memory,
    world_baselines,
    memory_tables,
    cell_evaluation,
    leaderboard,
    cost_curves,
]
"""Every asset definition of the project, in pipeline order."""

__all__ = [
    "ALL_ASSETS",
    "ANSWERABILITY",
    "CELL_COST_CURVE",
    "WORLD_BASELINES",
    "cell_evaluation",
    "cost_curves",
    "leaderboard",
    "memory_tables",
    "reference_memory",
    "world_baselines",
    "world_tables",
]
