"""``drift run --via dagster``: the same run as Dagster runs on the ``DAGSTER_HOME`` instance.

Dagster is imported only here, when asked for.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

import click

from .errors import EXIT_FAILURE, CommandError
from .places import check_dagster_home

if TYPE_CHECKING:
    from drift_pipeline.pipeline import RunOptions, RunResult


def run_via_dagster(files: tuple[str, ...], options: RunOptions) -> RunResult:
    """``drift run --via dagster`` on scenario paths or imported data (``PREFIX:PATH``).

    Raises:
        CommandError: No ``DAGSTER_HOME`` folder, or an instance that cannot be loaded
            (exit 2), or the instance's database going away (exit 1, one line; a rerun
            resumes).
    """
    check_dagster_home("--via dagster")
    from drift_pipeline.memory import BackendStartError, IsolationError
    from drift_pipeline.orchestration.launch import InstanceMisconfigured, InstanceUnavailable
    from drift_pipeline.orchestration.launch import run_via_dagster as launch
    from drift_pipeline.storage import RootBusy, RootUnusable

    retries = _DatabaseRetries()
    logging.getLogger().addFilter(retries)
    result: RunResult | None = None
    failure: BaseException | None = None
    try:
        with _held_stderr() as (terminal, held):
            try:
                result = launch(
                    list(files),
                    options.arms,
                    options.horizons,
                    options.out,
                    loop=options.loop,
                    backend_options=options.backend_options,
                    log=lambda line: click.echo(line, file=terminal),
                    allow_leaks=options.allow_leaks,
                )
            except BaseException as error:  # reported or raised again below, once restored
                failure = error
    finally:
        logging.getLogger().removeFilter(retries)
    if isinstance(failure, InstanceUnavailable):
        raise CommandError(str(failure), EXIT_FAILURE) from failure
    if isinstance(failure, InstanceMisconfigured):
        raise CommandError(f"--via dagster: {failure}") from failure
    # Each of these is one line, printed by the caller; Dagster's account would repeat it.
    if not isinstance(failure, BackendStartError | IsolationError | RootBusy | RootUnusable):
        sys.stderr.write(held.getvalue())
    if failure is not None:
        raise failure
    assert result is not None
    return result


@contextlib.contextmanager
def _held_stderr() -> Iterator[tuple[TextIO, io.StringIO]]:
    """Hold back what is written to stderr, by Python code or by native code (fd 2).

    Yields a stream to the real stderr (for this command's own progress lines) and the buffer
    that receives the rest, complete once the block ends. When the Dagster instance's database
    goes away, Dagster and the PostgreSQL client library write a retry warning per attempt, a
    traceback per failed write and the server's notices; the one line the caller prints says
    it all. Otherwise the caller writes the buffer out as it is.
    """
    held = io.StringIO()
    original = sys.stderr
    original.flush()
    try:
        on_fd2 = original.fileno() == 2
    except (AttributeError, OSError, ValueError):
        on_fd2 = False  # a stream of the caller's (a test runner's capture): write to it as is
    saved = os.dup(2)
    with tempfile.TemporaryFile() as native:
        os.dup2(native.fileno(), 2)
        terminal: TextIO = (
            os.fdopen(os.dup(saved), "w", buffering=1, encoding="utf-8", errors="replace")
            if on_fd2
            else original
        )
        try:
            with contextlib.redirect_stderr(held):
                yield terminal, held
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if on_fd2:
                terminal.close()
            native.seek(0)
            held.write(native.read().decode("utf-8", "replace"))


class _DatabaseRetries:
    """Drops dagster-postgres's warning per connection retry (the outcome is reported)."""

    def filter(self, record: object) -> bool:
        """Keep every record but a retry warning."""
        message = getattr(record, "msg", "")
        return not (isinstance(message, str) and message.startswith("Retrying failed database"))
