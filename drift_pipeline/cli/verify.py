"""``drift verify``: check a leaderboard record against its signature and digests."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import EXIT_FAILURE, CommandError


@click.command("verify")
@click.argument("record", type=click.Path(path_type=Path, dir_okay=False))
def command(record: Path) -> None:
    """Check a run record: each row's digest, the body's digest and the Ed25519 signature.

    Exit 0 when the record is as it was signed; 1 with one line saying what differs; 2 when
    the file is not a record.
    """
    verify_exec(record)


def verify_exec(record: Path) -> None:
    """Print ``verified: RECORD (…)`` or raise with what differs.

    Raises:
        CommandError: Not a readable record (exit 2), or one that differs from what was
            signed (exit 1, the first difference; the rest counted).
    """
    from drift_pipeline.report import RecordError, load_record, record_problems

    try:
        loaded = load_record(record)
    except RecordError as error:
        raise CommandError(str(error)) from error
    problems = record_problems(loaded)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CommandError(f"{record}: {problems[0]}{more}", EXIT_FAILURE)
    key = loaded["signature"]["public_key"]
    click.echo(
        f"verified: {record} (created {loaded.get('created')}, "
        f"{len(loaded['leaderboard'])} rows, key {key[:16]}…)"
    )
