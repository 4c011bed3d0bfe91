"""Reports: summaries, leaderboards and cost curves rendered for people."""

from ._world_summary import render_world_summaries

__all__ = ["render_world_summaries"]
