"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._budget import BUDGET_TARGETS_MS, BudgetFigure, budget_json
from ._compare import comparison_lines
from ._leaderboard import (
    NOT_APPLICABLE,
    RANK_METRIC,
    ArmStanding,
    render_budget,
    render_leaderboard,
    render_subtype_recall,
    standings,
    summary_json,
)
from ._scoring import EXACT_PATH_LINE, cell_scoring, scoring_json, scoring_lines
from ._world_summary import render_world_summaries

__all__ = [
    "BUDGET_TARGETS_MS",
    "EXACT_PATH_LINE",
    "NOT_APPLICABLE",
    "RANK_METRIC",
    "ArmStanding",
    "BudgetFigure",
    "budget_json",
    "cell_scoring",
    "comparison_lines",
    "render_budget",
    "render_leaderboard",
    "render_subtype_recall",
    "render_world_summaries",
    "scoring_json",
    "scoring_lines",
    "standings",
    "summary_json",
]
