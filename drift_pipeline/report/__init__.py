"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._compare import comparison_lines
from ._leaderboard import RANK_METRIC, ArmStanding, render_leaderboard, standings, summary_json
from ._world_summary import render_world_summaries

__all__ = [
    "RANK_METRIC",
    "ArmStanding",
    "comparison_lines",
    "render_leaderboard",
    "render_world_summaries",
    "standings",
    "summary_json",
]
