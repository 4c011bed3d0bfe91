"""The nightly leaderboard: rebuilt at 03:00 UTC when any cell or baseline is newer than it.

The cells themselves are kept current by the ``stale_cells`` automation sensor (:mod:`.sensors`),
which also rebuilds the reports once no cell is missing or in progress; the schedule is the
nightly guarantee (a cell that keeps failing would otherwise hold the reports back). Stopped by
default, like the sensor: switch it on in the UI (Automation).
"""

import dagster as dg

from drift_pipeline.orchestration.freshness import latest_materializations

from .jobs import leaderboard_job

NIGHTLY_CRON = "0 3 * * *"
REPORT_INPUTS = ("cell_metrics", "world_baselines")
"""The assets whose newer materializations make the reports out of date."""


@dg.schedule(
    name="nightly_leaderboard",
    job=leaderboard_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Nightly: rebuild the leaderboard and cost curves from every stored cell "
    "when any is newer than them.",
)
def nightly_leaderboard(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    """Request a leaderboard rebuild when any cell or baseline is newer than the leaderboard."""
    instance = context.instance
    newest = max(
        (i for asset in REPORT_INPUTS for i in latest_materializations(instance, asset).values()),
        default=None,
    )
    if newest is None:
        return dg.SkipReason("no evaluated cells yet")
    records = instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records
    if records and records[0].storage_id > newest:
        return dg.SkipReason("the leaderboard is newer than every cell")
    # Keyed by the newest input: one rebuild per state of the cells, however often it ticks.
    return dg.RunRequest(run_key=f"nightly:{newest}")
