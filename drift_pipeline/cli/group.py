"""The ``drift`` group: every command is one module of this package, added by one line below."""

from __future__ import annotations

import click

from drift_pipeline._lazy import resolve_target

COMMANDS: dict[str, str] = {
    "audit": "audit",
    "backfill": "backfill",
    "bench": "bench",
    "braincore": "braincore",
    "check-backend": "check_backend",
    "compare": "compare",
    "explain": "explain",
    "generate": "generate",
    "import": "import_",
    "judge-check": "judge_check",
    "leaderboard": "leaderboard",
    "query": "query",
    "report": "report",
    "run": "run",
    "schema": "schema",
    "validate": "validate",
    "verify": "verify",
}
"""Command name → the module of this package whose ``command`` it is (one line per command)."""


class CommandModules(click.Group):
    """A group whose commands are imported when one is asked for.

    ``drift run`` loads ``run``'s module only; ``drift --help`` loads each module to read its
    help, and the modules keep their heavy imports inside their functions.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted (click lists them in this order)."""
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command of that name, importing its module on first use."""
        module = COMMANDS.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        command = resolve_target(f"{__package__}.{module}:command", f"command {cmd_name!r}")
        if not isinstance(command, click.Command) or command.name != cmd_name:
            raise TypeError(f"{__package__}.{module}.command is not the {cmd_name!r} command")
        return command


@click.group(cls=CommandModules, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="drift-pipeline")
def main() -> None:
    """DRIFT: a budget-gated benchmark for agent memory systems."""
