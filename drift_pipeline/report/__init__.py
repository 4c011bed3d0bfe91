"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._leaderboard import HEADLINE, ArmStanding, render_leaderboard, standings, summary_json
from ._world_summary import render_world_summaries

__all__ = [
    "HEADLINE",
    "ArmStanding",
    "render_leaderboard",
    "render_world_summaries",
    "standings",
    "summary_json",
]
