"""``drift report``: one self-contained HTML page of a run folder, with its plots."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import CommandError
from .places import writable_file


@click.command("report")
@click.argument("run_folder", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--record",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Report this record instead of the folder's latest.",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the page here (default: RUN_FOLDER/_reports/report.html); plots beside it.",
)
def command(run_folder: Path, record: Path | None, output: Path | None) -> None:
    """Write the HTML report of RUN_FOLDER (leaderboard, plots, drill-down) and print its path."""
    click.echo(report_exec(run_folder, record, output))


def report_exec(run_folder: Path, record: Path | None, output: Path | None) -> Path:
    """Write the page and return its path.

    Raises:
        CommandError: No such folder, no record in it, or an ``output`` that cannot be
            written (exit 2).
    """
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import RecordError, write_report

    if not run_folder.is_dir():
        raise CommandError(f"{run_folder}: no such run folder")
    if output is not None:
        writable_file(output, "--output")
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(
                f"--output {output}: cannot create {output.parent} ({error.strerror or error})"
            ) from error
    try:
        return write_report(run_folder, connect(run_folder), record, output)
    except RecordError as error:
        raise CommandError(str(error)) from error
