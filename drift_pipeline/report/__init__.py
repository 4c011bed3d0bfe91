"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._compare import comparison_lines
from ._leaderboard import (
    NOT_APPLICABLE,
    RANK_METRIC,
    ArmStanding,
    render_leaderboard,
    render_subtype_recall,
    standings,
    summary_json,
)
from ._world_summary import render_world_summaries

__all__ = [
    "NOT_APPLICABLE",
    "RANK_METRIC",
    "ArmStanding",
    "comparison_lines",
    "render_leaderboard",
    "render_subtype_recall",
    "render_world_summaries",
    "standings",
    "summary_json",
]
