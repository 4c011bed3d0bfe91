"""``drift compare``: paired differences between two arms on the same probes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import (
    ALLOW_LEAK_OPTION,
    CALL_TIMEOUT_OPTION,
    HORIZON_OPTION,
    OUT_OPTION,
    load_sources,
    parse_arms,
    sources_for_horizons,
)
from .errors import EXIT_BACKEND_START, EXIT_INVALID_ARM, EXIT_ISOLATION, CommandError
from .places import unusable_out, writable_out

if TYPE_CHECKING:
    from collections.abc import Sequence

    from drift_pipeline.keys import HorizonName
    from drift_pipeline.storage import StorageRoot


@click.command("compare")
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--backend-a", required=True, metavar="NAME|module:Class")
@click.option("--backend-b", required=True, metavar="NAME|module:Class")
@click.option("--gate", default="hard", show_default=True, help="Gate of both arms.")
@click.option(
    "--backend-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="YAML mapping backend name → constructor options (an adapter's service or server), "
    "for the arms run here.",
)
@HORIZON_OPTION
@OUT_OPTION
@CALL_TIMEOUT_OPTION
@ALLOW_LEAK_OPTION
def command(
    scenario: Path,
    backend_a: str,
    backend_b: str,
    gate: str,
    backend_config: Path | None,
    horizons: tuple[HorizonName, ...],
    out: StorageRoot,
    call_timeout: float,
    allow_leaks: tuple[str, ...],
) -> None:
    """Paired differences A − B per metric, with 95% intervals, on the same probes.

    Shows every metric registered with a compare position, in that order. A and B are
    registered names (built-ins and adapters such as mcp, mem0) or package.module:Class.

    Reads the cells of a finished run under --out; arms not run yet are run first, each
    checked first as drift run checks it (exit 5 when one fails the conformance check).
    """
    from drift_pipeline.pipeline import REFERENCE_ARM

    from .run_inputs import backend_config as read_backend_config

    run = [backend_a, backend_b, REFERENCE_ARM.backend]
    compare_exec(
        scenario,
        backend_a,
        backend_b,
        gate,
        horizons,
        out,
        call_timeout,
        read_backend_config(backend_config, run),
        allow_leaks,
    )


def compare_exec(
    scenario: Path,
    backend_a: str,
    backend_b: str,
    gate: str,
    horizons: Sequence[HorizonName],
    out: StorageRoot,
    call_timeout: float,
    backend_options: dict[str, dict[str, Any]] | None = None,
    allow_leaks: Sequence[str] = (),
) -> None:
    """Run the arms missing under ``out``, then print A − B per world and metric.

    ``backend_options`` are the constructor options per backend name of the arms run here; an
    arm whose stored cells were run with other options is run again.

    Raises:
        CommandError: Invalid input (a horizon the scenario does not declare, an ``out``
            that cannot be a folder), the same arm twice, or cells that cannot be compared
            (read by the LLM reader) (exit 2); no sandbox here (3); a backend that could not
            start (4); an arm that failed the conformance check (5).
    """
    from drift_pipeline.keys import CellKey
    from drift_pipeline.memory import BackendStartError, IsolationError, LoopConfig
    from drift_pipeline.pipeline import (
        RunOptions,
        cell_exists,
        compare_stored,
        options_changed,
        run_benchmark,
        world_is_current,
    )
    from drift_pipeline.report import comparison_lines
    from drift_pipeline.storage import RootUnusable

    writable_out(out)
    opened = sources_for_horizons(load_sources((str(scenario),)), horizons)
    arms = [
        *parse_arms((backend_a,), (gate,), "--backend-a"),
        *parse_arms((backend_b,), (gate,), "--backend-b"),
    ]
    if arms[0] == arms[1]:
        raise CommandError("--backend-a and --backend-b name the same arm; nothing to compare")
    a, b = arms
    source = opened[0]
    worlds = [world.key for world in source.worlds(tuple(horizons))]
    wanted = [world.horizon for world in worlds]
    configured = dict(backend_options or {})
    # Cells run with other --backend-config options are another configuration: run again.
    stale = [arm for arm in (a, b) if options_changed(out, arm, configured.get(arm.backend, {}))]
    missing = [
        arm
        for arm in (a, b)
        for w in worlds
        if arm in stale or not cell_exists(out, CellKey(w, arm.key))
    ]
    if missing or not all(world_is_current(out, source, h) for h in wanted):
        options = RunOptions(
            arms=sorted(set(missing) or {a, b}, key=arms.index),
            horizons=tuple(wanted),
            out=out,
            loop=LoopConfig(call_timeout=call_timeout),
            backend_options=configured,
            allow_leaks=tuple(allow_leaks),
        )
        try:
            result = run_benchmark(opened, options)
        except IsolationError as error:
            raise CommandError(str(error), EXIT_ISOLATION) from error
        except BackendStartError as error:
            raise CommandError(str(error), EXIT_BACKEND_START) from error
        except RootUnusable as error:
            raise unusable_out(error) from error
        if result.check_failures:
            # Nothing to compare with an arm that was not scored: one line per such arm.
            raise CommandError("\n".join(result.check_failures), EXIT_INVALID_ARM)
    click.echo(f"{source.id}: {a.key} − {b.key} (paired, 95% bootstrap intervals)")
    for world in worlds:
        try:
            diff = compare_stored(out, world, a, b)
        except ValueError as error:  # e.g. cells read by the LLM reader
            raise CommandError(str(error)) from error
        click.echo(f"\n{world.horizon}:")
        for line in comparison_lines(diff):
            click.echo(line)
    click.echo("\n* the interval excludes 0")
