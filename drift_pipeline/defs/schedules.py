"""The nightly refresh: stale or missing cells, then the leaderboard.

A schedule runs one job, and a cell needs runs of four jobs in order (world, reference memory
run, baselines, cell), so the refresh is split in two pieces that share one planner
(:func:`._steps.plan_refresh`):

* ``nightly_leaderboard`` (this schedule, 03:00 UTC) rebuilds ``leaderboard`` and
  ``cost_curves`` from every stored cell when any cell is newer than the leaderboard, and logs
  the cell steps still pending;
* the ``stale_cells`` sensor (:mod:`.sensors`) requests those cell steps as they become ready
  and a final leaderboard rebuild once none is left.

Turn both on in the UI (Automation) for an unattended benchmark. Both are stopped by default,
because starting them on a fresh instance runs every registered cell.
"""

import dagster as dg

from ._steps import Stage
from .jobs import leaderboard_job
from .resources import DriftStorage, ScenarioCatalog
from .sensors import ledger, refresh_plan

NIGHTLY_CRON = "0 3 * * *"


@dg.schedule(
    name="nightly_leaderboard",
    job=leaderboard_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Nightly: rebuild the leaderboard and cost curves from every stored cell "
    "(the stale_cells sensor refreshes the cells themselves).",
)
def nightly_leaderboard(
    context: dg.ScheduleEvaluationContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> dg.RunRequest | dg.SkipReason:
    """Request a leaderboard rebuild when any cell is newer than the leaderboard."""
    pending = [
        s
        for s in refresh_plan(context.instance, storage, scenarios)
        if s.stage is not Stage.LEADERBOARD
    ]
    if pending:
        context.log.info(f"{len(pending)} cell steps pending; the stale_cells sensor runs them")
    state = ledger(context.instance)
    newest = max(state.evaluations.values(), default=None)
    if newest is None:
        return dg.SkipReason("no evaluated cells yet")
    if state.leaderboard is not None and state.leaderboard > newest:
        return dg.SkipReason("the leaderboard is newer than every cell")
    tick = context.scheduled_execution_time
    stamp = tick.strftime("%Y-%m-%d") if tick else "manual"
    return dg.RunRequest(
        run_key=f"nightly:{stamp}:{newest}", tags={"drift/pending_cell_steps": str(len(pending))}
    )
