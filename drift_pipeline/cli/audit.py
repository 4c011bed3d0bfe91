"""``drift audit``: audits of generated worlds (``drift audit diversity``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import click

from .common import json_option
from .errors import CommandError


@click.group("audit")
def command() -> None:
    """Audits of generated worlds."""


@command.command("diversity")
@click.argument("worlds", nargs=-1, required=True)
@click.option(
    "--against",
    "against",
    multiple=True,
    metavar="WORLDS",
    help="Another world root (repeatable): report the share of skeletons it already has.",
)
@json_option("Also write the figures as JSON to this file.")
def diversity(worlds: tuple[str, ...], against: tuple[str, ...], json_path: Path | None) -> None:
    """Phrasing diversity of the worlds under WORLDS (storage roots written by drift generate).

    Counts distinct sentence skeletons (values, names, dates and numbers masked) per event type
    and decoy kind, the share a world set given with --against already has, and how much of the
    signal the regex baseline fitted to the public phrasing split keeps.
    """
    diversity_exec(worlds, against, json_path)


def diversity_exec(worlds: Sequence[str], against: Sequence[str], json_path: Path | None) -> None:
    """Print the diversity report of ``worlds`` (against ``against``); optionally as JSON too.

    Raises:
        CommandError: A world root holds no generated worlds (exit 2).
    """
    from drift_pipeline.world.diversity import diversity_report, read_worlds, render

    try:
        measured = read_worlds(worlds)
        other = read_worlds(against) if against else None
    except FileNotFoundError as error:
        raise CommandError(str(error)) from error
    report = diversity_report(measured, other)
    click.echo(render(report))
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
