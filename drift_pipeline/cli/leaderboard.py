"""``drift leaderboard``: print a run folder's stored leaderboard again, from its record."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import CommandError


@click.command("leaderboard")
@click.argument("run_folder", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--record",
    "record",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="This record (a file, or a name under the folder's records) instead of the latest.",
)
@click.option("--list", "list_only", is_flag=True, help="List the folder's records instead.")
def command(run_folder: Path, record: Path | None, list_only: bool) -> None:
    """Print a stored leaderboard: the latest record of RUN_FOLDER (per horizon, then all)."""
    leaderboard_exec(run_folder, record, list_only)


def leaderboard_exec(run_folder: Path, record: Path | None, list_only: bool) -> None:
    """Print the chosen record's leaderboard, or the list of records.

    Raises:
        CommandError: No such folder or record, or a file that is not a record (exit 2).
    """
    from drift_pipeline.report import (
        RECORDS_FOLDER,
        RecordError,
        latest_record,
        list_records,
        load_record,
        render_record_board,
    )

    if not run_folder.is_dir():
        raise CommandError(f"{run_folder}: no such run folder")
    if list_only:
        for path in list_records(run_folder):
            click.echo(path.name)
        return
    try:
        if record is None:
            path = latest_record(run_folder)
        elif record.exists():
            path = record
        else:
            path = run_folder / RECORDS_FOLDER / record.name
            if not path.exists():
                raise CommandError(f"{record}: no such record (in {run_folder / RECORDS_FOLDER})")
        click.echo(f"record {path.name}")
        click.echo(render_record_board(load_record(path)))
    except RecordError as error:
        raise CommandError(str(error)) from error
