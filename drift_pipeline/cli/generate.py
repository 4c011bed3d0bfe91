"""``drift generate``: write the worlds of scenario files or imported data as Parquet tables."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from .common import (
    HORIZON_OPTION,
    OUT_OPTION,
    SOURCES_ARGUMENT,
    SOURCES_HELP,
    SYNTHESIZER_OPTION,
    load_sources,
    sources_for_horizons,
    synthesizer_for,
)
from .errors import EXIT_FAILURE, CommandError
from .places import make_out, writable_out

if TYPE_CHECKING:
    from drift_pipeline.keys import HorizonName
    from drift_pipeline.storage import StorageRoot


@click.command("generate", epilog=SOURCES_HELP)
@SOURCES_ARGUMENT
@HORIZON_OPTION
@OUT_OPTION
@SYNTHESIZER_OPTION
def command(
    sources: tuple[str, ...],
    horizons: tuple[HorizonName, ...],
    out: StorageRoot,
    synthesizer: str,
) -> None:
    """Write the worlds of SOURCES as Parquet tables under --out."""
    generate_exec(sources, horizons, out, synthesizer)


def generate_exec(
    sources: Sequence[str], horizons: Sequence[HorizonName], out: StorageRoot, synthesizer: str
) -> None:
    """Write every world of ``sources`` under ``out`` and print one line per world.

    Raises:
        CommandError: Invalid sources or synthesizer settings, no source declaring a horizon
            asked for, or an ``out`` folder that cannot be written in (exit 2), or the LLM
            synthesizer failing mid-run (exit 1; replies so far stay cached, so the same
            command resumes).
    """
    from tqdm import tqdm

    from drift_pipeline.llm import LLMError
    from drift_pipeline.report import render_world_summaries
    from drift_pipeline.sources import write_worlds

    writable_out(out)
    opened = sources_for_horizons(load_sources(sources), horizons)
    writer = synthesizer_for(synthesizer, out)
    make_out(out)
    total = sum(
        world.source.sessions(world.horizon) * world.source.replicates
        for source in opened
        for world in source.worlds(tuple(horizons))
    )
    started = time.perf_counter()
    with tqdm(total=total, unit="session", desc="generate", disable=None, leave=False) as bar:

        def advance(n: int) -> None:
            bar.update(n)

        try:
            summaries = write_worlds(opened, out, tuple(horizons), writer, progress=advance)
        except LLMError as error:
            raise CommandError(f"--synthesizer llm: {error}", EXIT_FAILURE) from error
    elapsed = time.perf_counter() - started
    click.echo(render_world_summaries(summaries, elapsed, str(out)))
    if (describe := getattr(writer, "describe_usage", None)) is not None:
        click.echo(describe())
