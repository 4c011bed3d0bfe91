"""``drift bench``: the harness's own speed and memory against its performance targets."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import json_option
from .errors import EXIT_FAILURE, CommandError


@click.command("bench")
@json_option("Also write the figures as JSON to this file.")
@click.option(
    "--only",
    default=None,
    metavar="KEY[,KEY]",
    help="Measure only these keys (the others are null / 'not measured').",
)
@click.option(
    "--scenarios",
    "suite",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("scenarios"),
    show_default=True,
    help="The canonical suite folder (holds ua-baseline-001.yaml).",
)
def command(json_path: Path | None, only: str | None, suite: Path) -> None:
    """Measure the harness's speed and memory against its performance targets; print a table.

    Exits 0 even when figures fall short (it is a measurement); the short ones are listed.
    """
    bench_exec(json_path, only, suite)


def bench_exec(json_path: Path | None, only: str | None, suite: Path) -> None:
    """Measure, print the table and the keys short of target; optionally write the JSON.

    Raises:
        CommandError: Unknown keys in ``only`` or no canonical scenario in ``suite`` (exit 2),
            or a measured command failing (exit 1).
    """
    from drift_pipeline.bench import MeasuredFailure, parse_only, run_bench
    from drift_pipeline.bench._worlds import CANONICAL_FILE

    try:
        keys = parse_only(only)
    except ValueError as error:
        raise CommandError(str(error)) from error
    if not (suite / CANONICAL_FILE).is_file():
        raise CommandError(f"--scenarios {suite}: no {CANONICAL_FILE} there")
    try:
        report = run_bench(suite, keys, log=lambda line: click.echo(line, err=True))
    except MeasuredFailure as error:
        raise CommandError(f"bench: a measured command failed: {error}", EXIT_FAILURE) from error
    click.echo(report.table())
    short = report.short()
    click.echo(
        f"\nshort of target: {', '.join(short)}"
        if short
        else "\nevery measured key is within its target"
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report.json(), indent=2) + "\n", encoding="utf-8")
