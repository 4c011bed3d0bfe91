"""The ``drift`` command: quick local runs of the DRIFT pipeline without Dagster."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from tqdm import tqdm

from drift_pipeline.report import render_world_summaries
from drift_pipeline.scenario import (
    HORIZON_NAMES,
    HorizonName,
    LoadedScenario,
    ScenarioError,
    json_schema,
    load_scenario,
    scenario_files,
)
from drift_pipeline.world import GenerationUnsupported, check_supported, generate_worlds

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
    found = scenario_files(list(files))
    if not found:
        click.echo(f"no scenario files found in {', '.join(map(str, files))}", err=True)
        sys.exit(EXIT_INVALID)
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
        sys.exit(EXIT_INVALID)


@main.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


def _load_all(paths: tuple[Path, ...]) -> list[LoadedScenario]:
    """Load every scenario or exit 2 with one line per problem (nothing written)."""
    loaded: list[LoadedScenario] = []
    failed = False
    for path in scenario_files(list(paths)):
        try:
            loaded.append(load_scenario(path))
        except ScenarioError as error:
            failed = True
            for line in error.lines():
                click.echo(line, err=True)
    if failed:
        sys.exit(EXIT_INVALID)
    if not loaded:
        click.echo(f"no scenario files found in {', '.join(map(str, paths))}", err=True)
        sys.exit(EXIT_INVALID)
    ids = [item.spec.id for item in loaded]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        click.echo(f"scenario id {duplicates[0]!r} is used by more than one file", err=True)
        sys.exit(EXIT_INVALID)
    return loaded


HORIZON_OPTION = click.option(
    "--horizon",
    "horizons",
    multiple=True,
    type=click.Choice(HORIZON_NAMES),
    help="Only these horizons (repeatable); default: every horizon each scenario declares.",
)
OUT_OPTION = click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("data"),
    show_default=True,
    help="Storage root for the Parquet tables.",
)


@main.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@HORIZON_OPTION
@OUT_OPTION
def generate(scenarios: tuple[Path, ...], horizons: tuple[HorizonName, ...], out: Path) -> None:
    """Generate the worlds of SCENARIOS (files or folders) as Parquet tables under --out."""
    loaded = _load_all(scenarios)
    try:
        for item in loaded:
            check_supported(item.spec)
    except GenerationUnsupported as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    total = sum(
        h.sessions * item.spec.replicates
        for item in loaded
        for name, h in item.spec.horizon.items()
        if not horizons or name in horizons
    )
    started = time.perf_counter()
    with tqdm(total=total, unit="session", desc="generate", disable=None, leave=False) as bar:
        summaries = generate_worlds(loaded, out, horizons, progress=bar.update)
    elapsed = time.perf_counter() - started
    click.echo(render_world_summaries(summaries, elapsed, out))
