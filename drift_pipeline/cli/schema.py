"""``drift schema``: the JSON Schema of scenario files, for editors."""

from __future__ import annotations

import json

import click


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of scenario files."""
    from drift_pipeline.scenario import json_schema

    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))
