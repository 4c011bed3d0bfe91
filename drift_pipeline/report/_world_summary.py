"""One-screen summaries of generated worlds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from drift_pipeline.world import WorldSummary


def render_world_summaries(
    summaries: Sequence[WorldSummary], seconds: float, out: Path | str
) -> str:
    """A fixed-width table, one row per (scenario, horizon), then totals and throughput."""
    header = (
        f"{'scenario':<34} {'horizon':<7} {'reps':>4} {'sessions':>8} {'noise':>6} "
        f"{'signal':>6} {'soft':>6} {'turns':>7} {'distinct':>8} {'probes':>6} {'checkpoints':>11}"
    )
    lines = [header, "-" * len(header)]
    for s in summaries:
        n = max(1, s.sessions)
        lines.append(
            f"{s.scenario:<34} {s.horizon:<7} {s.replicates:>4} {s.sessions:>8} "
            f"{s.tiers.get('noise', 0) / n:>6.2f} {s.tiers.get('signal', 0) / n:>6.2f} "
            f"{s.tiers.get('soft', 0) / n:>6.2f} {s.turns:>7} {s.distinct_turn_share:>8.2f} "
            f"{s.probes:>6} {len(s.checkpoints):>11}"
        )
    sessions = sum(s.sessions for s in summaries)
    rate = sessions / seconds if seconds > 0 else float("inf")
    lines.append("-" * len(header))
    lines.append(
        f"{len(summaries)} worlds, {sessions} sessions, {sum(s.turns for s in summaries)} turns, "
        f"{sum(s.probes for s in summaries)} probes in {seconds:.2f} s ({rate:,.0f} sessions/s) "
        f"→ {out}"
    )
    return "\n".join(lines)
