"""``drift backfill``: recompute registered Dagster partitions, now or on the daemon."""

from __future__ import annotations

from collections.abc import Sequence

import click

from drift_pipeline.keys import HORIZON_NAMES

from .errors import EXIT_FAILURE, CommandError
from .places import check_dagster_home


@click.command("backfill")
@click.option("--horizon", type=click.Choice(HORIZON_NAMES), help="Only worlds of this horizon.")
@click.option(
    "--scenario",
    "scenario_ids",
    multiple=True,
    metavar="ID",
    help="Only this scenario id (repeatable).",
)
@click.option("--ablation", metavar="NAME", help="Only this ablation's arms (ablations.yaml).")
@click.option(
    "--arm", "arm_keys", multiple=True, metavar="BACKEND@GATE", help="Only this arm (repeatable)."
)
@click.option(
    "--launch", is_flag=True, help="Create a backfill for the dagster dev daemon instead."
)
@click.option("--dry-run", is_flag=True, help="Print the selection and the runs only.")
def command(
    horizon: str | None,
    scenario_ids: tuple[str, ...],
    ablation: str | None,
    arm_keys: tuple[str, ...],
    launch: bool,
    dry_run: bool,
) -> None:
    """Recompute registered Dagster partitions: a horizon, scenarios, an ablation's arms.

    Runs every selected world (tables if stale, baselines) and cell now, as Dagster runs
    against the instance at DAGSTER_HOME, then the reports; --launch hands the same selection
    to the daemon as one asset backfill. Scenario folders and the storage root come from
    DRIFT_SCENARIOS (default scenarios) and DRIFT_DATA_ROOT (default data), as for dagster dev.
    """
    backfill_exec(horizon, scenario_ids, ablation, arm_keys, launch=launch, dry_run=dry_run)


def backfill_exec(
    horizon: str | None,
    scenario_ids: Sequence[str],
    ablation: str | None,
    arm_keys: Sequence[str],
    *,
    launch: bool,
    dry_run: bool,
) -> None:
    """:func:`drift_pipeline.orchestration.launch.backfill`, its lines printed as they come.

    Dagster is imported only here.

    Raises:
        CommandError: No ``DAGSTER_HOME`` folder, or an unknown horizon, ablation or arm (exit 2); a
            failed run (exit 1).
    """
    check_dagster_home("drift backfill")
    from drift_pipeline.orchestration.launch import backfill

    try:
        backfill(
            horizon,
            scenario_ids,
            ablation,
            arm_keys,
            launch=launch,
            dry_run=dry_run,
            echo=click.echo,
        )
    except ValueError as error:
        raise CommandError(str(error)) from error
    except RuntimeError as error:
        raise CommandError(str(error), EXIT_FAILURE) from error
