"""``drift check-backend``: the conformance and health check of one backend, on its own."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import CALL_TIMEOUT_OPTION, REAL_CLOCK_OPTION, json_option
from .errors import EXIT_BACKEND_START, EXIT_INVALID_ARM, EXIT_ISOLATION, CommandError
from .run_inputs import backend_config

if TYPE_CHECKING:
    from drift_pipeline.memory import ConformanceReport


@click.command("check-backend")
@click.argument("backend", metavar="NAME|module:Class")
@click.option(
    "--backend-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="YAML mapping backend name → constructor options (as drift run takes it).",
)
@CALL_TIMEOUT_OPTION
@REAL_CLOCK_OPTION
@click.option(
    "--allow-leak",
    is_flag=True,
    help="Accept a backend that keeps entities' memories together: the leak is reported "
    "instead of failing the check (as drift run --allow-leak NAME).",
)
@json_option("Write the report as JSON to this file.")
@click.option(
    "--no-isolation",
    is_flag=True,
    hidden=True,
    help="Debugging only: run the backend without the sandbox.",
)
def command(
    backend: str,
    backend_config: Path | None,
    call_timeout: float,
    real_clock: bool,
    allow_leak: bool,
    json_path: Path | None,
    no_isolation: bool,
) -> None:
    """Check that a memory backend can be scored, in the sandbox a run uses.

    A fact a user tells one agent must come back to it once the backend reports it queryable,
    and never to another agent (unless --allow-leak); empty, very long and non-ASCII messages
    must be stored without a fault; its declared capabilities (entity-scoped store,
    asynchronous ingestion, snapshot, its own storage count, token counters) are read and
    tried. Prints time-to-queryable and read latency p50/p95. `drift run` runs the same check
    first for every arm that is not a built-in.

    Exit 0 when it passes; 5 with one line saying why it does not (the status of an arm that is
    not scored); 4 when the backend cannot be built (import, attribute or constructor error,
    such as a misspelt class or an option its constructor refuses: as in drift run); 2 for an
    unknown backend name or an unreadable config; 3 when the sandbox cannot start here.
    """
    report = check_backend_exec(
        backend,
        backend_config,
        call_timeout,
        not no_isolation,
        simulated_clock=not real_clock,
        allow_leak=allow_leak,
    )
    for line in report.lines():
        click.echo(line)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    if not report.passed:
        raise CommandError.reported(
            EXIT_BACKEND_START if report.start_error is not None else EXIT_INVALID_ARM
        )


def check_backend_exec(
    backend: str,
    config_file: Path | None,
    call_timeout: float,
    isolate: bool,
    *,
    simulated_clock: bool = True,
    allow_leak: bool = False,
) -> ConformanceReport:
    """Resolve the backend's options as a run would (without a world), then check it.

    Raises:
        CommandError: Unknown backend, a missing package or model variable, bad options (2);
            no sandbox here (3).
    """
    from drift_pipeline.memory import IsolationError, check_backend, check_isolation
    from drift_pipeline.memory.backends import backend_needs, backend_registration

    from .common import parse_arms

    arm = parse_arms([backend], [])[0]  # the same one-line errors as drift run --backend
    options = backend_config(config_file, [arm.backend]).get(arm.backend, {})
    try:
        if ":" not in backend:
            needs = backend_registration(backend).needs_for(options)
            needs.check(backend)
            if needs.llm is not None:
                options = needs.llm.fill(backend, options)
        env = backend_needs(backend, options).worker_env
    except ValueError as error:
        raise CommandError(str(error)) from error
    if isolate:
        try:
            asyncio.run(check_isolation([]))
        except IsolationError as error:
            raise CommandError(str(error), EXIT_ISOLATION) from error
    return check_backend(
        backend,
        options,
        call_timeout=call_timeout,
        isolate=isolate,
        env={name: os.environ[name] for name in env if name in os.environ},
        simulated_clock=simulated_clock,
        allow_leak=allow_leak,
    )
