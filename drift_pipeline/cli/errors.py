"""Exit statuses of the ``drift`` command and the one error every command raises to use them.

A command never prints an error and exits itself: it raises :class:`CommandError` with the
one-line message and its documented status, and click's entry point prints the message to
stderr and exits with that status (:meth:`click.Command.main`).
"""

from __future__ import annotations

from typing import IO, Any

import click

__all__ = [
    "EXIT_BACKEND_START",
    "EXIT_FAILURE",
    "EXIT_INVALID",
    "EXIT_INVALID_ARM",
    "EXIT_ISOLATION",
    "EXIT_NOT_RECORDED",
    "EXIT_ROOT_BUSY",
    "CommandError",
]

EXIT_FAILURE = 1
"""A failure while running (an LLM endpoint, a measured command, a Dagster run)."""
EXIT_INVALID = 2
"""Invalid input (scenario files, options); 1 is left for runtime failures."""
EXIT_ISOLATION = 3
"""``drift run``: sandboxed workers cannot start on this machine; nothing was run."""
EXIT_BACKEND_START = 4
"""``drift run``: a backend could not start (no rows for it; with --keep-going the rest ran)."""
EXIT_INVALID_ARM = 5
"""``drift run``: a requested arm faulted on more calls than --max-fault-rate allows somewhere
(it is listed, not ranked)."""
EXIT_ROOT_BUSY = 6
"""``drift run``: another run is writing to the same output folder; nothing was run."""
EXIT_NOT_RECORDED = 7
"""``drift run``: the run is complete (tables, record, leaderboard) but the Dagster instance did not
record it all; one line names the asset it refused and why."""


class CommandError(click.ClickException):
    """A command's failure: its message (one line per problem) and its exit status.

    Printed to stderr as it is, without click's ``Error:`` prefix, so every failure reads the
    same whichever command raised it.

    Args:
        message: What was wrong and where; several problems on several lines.
        exit_code: The documented status (:data:`EXIT_INVALID` unless given).
    """

    def __init__(self, message: str, exit_code: int = EXIT_INVALID) -> None:
        super().__init__(message)
        # click types the status as a class constant; each instance carries its own here.
        self.exit_code = exit_code  # type: ignore[misc]

    @classmethod
    def lines(cls, lines: list[str], exit_code: int = EXIT_INVALID) -> CommandError:
        """One error reporting every line of ``lines`` (an invalid file's problems)."""
        return cls("\n".join(lines), exit_code)

    @classmethod
    def reported(cls, exit_code: int = EXIT_INVALID) -> CommandError:
        """The status alone: the command has printed what went wrong, or results that say so."""
        return cls("", exit_code)

    def show(self, file: IO[Any] | None = None) -> None:
        """Print the message to ``file`` (stderr by default), nothing else."""
        if self.message:
            click.echo(self.message, file=file, err=file is None)
