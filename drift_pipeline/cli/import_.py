"""``drift import``: write the worlds a registered importer reads, without running anything."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from .common import OUT_OPTION, load_sources
from .errors import CommandError
from .places import make_out, writable_out

if TYPE_CHECKING:
    from drift_pipeline.storage import StorageRoot


@click.command("import")
@click.argument("kind", metavar="KIND")
@click.argument("path", metavar="PATH")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="An option of the importer (repeatable), e.g. midpoint=true for locomo.",
)
@OUT_OPTION
def command(kind: str, path: str, options: tuple[str, ...], out: StorageRoot) -> None:
    """Write the worlds the KIND importer reads from PATH, without running anything.

    KIND is any registered importer (locomo, longmemeval, or one an installed package
    registers); "drift run KIND:PATH" runs the same worlds.
    """
    import_exec(kind, path, options, out)


def import_exec(kind: str, path: str, options: Sequence[str], out: StorageRoot) -> None:
    """Write the worlds of ``KIND:PATH?options`` under ``out``; print one line per world.

    Raises:
        CommandError: An unknown importer, an option that is not ``NAME=VALUE``, data the
            importer cannot read, or an ``out`` that cannot be written in (exit 2).
    """
    from drift_pipeline.report import render_world_summaries
    from drift_pipeline.sources import source_prefixes, write_worlds

    importers = [p for p in source_prefixes() if p != "scenario"]
    if kind not in importers:
        raise CommandError(f"unknown importer {kind!r} (known: {', '.join(importers)})")
    for option in options:
        if "=" not in option or not option.partition("=")[0]:
            raise CommandError(f"--option {option!r} is not NAME=VALUE")
    query = "&".join(options)
    writable_out(out)
    opened = load_sources((f"{kind}:{path}" + (f"?{query}" if query else ""),))
    make_out(out)
    started = time.perf_counter()
    summaries = write_worlds(opened, out)
    click.echo(render_world_summaries(summaries, time.perf_counter() - started, str(out)))
