"""The ``drift`` command: quick local runs of the DRIFT pipeline without Dagster."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from drift_pipeline.scenario import ScenarioError, json_schema, load_scenario, scenario_files

EXIT_INVALID = 2
"""Exit code for invalid input (scenario files, options); 1 is left for runtime failures."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="drift-pipeline")
def main() -> None:
    """DRIFT: a budget-gated benchmark for agent memory systems."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(files: tuple[Path, ...]) -> None:
    """Validate scenario FILES (or folders of them); print one line per problem."""
    bad = 0
    for path in scenario_files(list(files)):
        try:
            loaded = load_scenario(path)
        except ScenarioError as error:
            bad += 1
            for line in error.lines():
                click.echo(line, err=True)
            continue
        click.echo(f"{path}: ok ({loaded.spec.id} v{loaded.spec.version})")
    if bad:
        sys.exit(EXIT_INVALID)


@main.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))
