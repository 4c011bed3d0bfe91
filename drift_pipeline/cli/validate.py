"""``drift validate``: check scenario files, one line per problem."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from .errors import CommandError


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def command(files: tuple[Path, ...]) -> None:
    """Validate scenario FILES (or folders of them); print one line per problem."""
    validate_exec(files)


def validate_exec(paths: Sequence[Path]) -> None:
    """Print ``FILE: ok (ID vVERSION)`` per valid scenario file and every problem of the others.

    Raises:
        CommandError: No scenario file was found, or some were invalid (exit 2; the problems
            were printed as they were found).
    """
    from drift_pipeline.scenario import ScenarioError, load_scenario, scenario_files

    found = scenario_files(list(paths))
    if not found:
        raise CommandError(f"no scenario files found in {', '.join(map(str, paths))}")
    bad = 0
    for path in found:
        try:
            loaded = load_scenario(path)
        except ScenarioError as error:
            bad += 1
            for line in error.lines():
                click.echo(line, err=True)
            continue
        click.echo(f"{path}: ok ({loaded.spec.id} v{loaded.spec.version})")
    if bad:
        raise CommandError.reported()
