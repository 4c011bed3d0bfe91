"""``drift explain``: why an arm answered a probe as it did, from stored memory to verdict."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import CommandError


@click.command("explain")
@click.argument("run_folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--probe", "probe_id", required=True, metavar="ID", help="The probe's id.")
@click.option(
    "--arm",
    required=True,
    metavar="NAME",
    help="The arm, e.g. fact_store@hard (or fact_store, when the run has it under one gate).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Print each memory snapshot whole (default: its lines about the probe's values).",
)
def command(run_folder: Path, probe_id: str, arm: str, full: bool) -> None:
    """Explain one probe for one arm: stored memory, retrieved context, answer and verdict.

    Prints what the arm stored after each evidence session, what retrieve returned, the
    reader's answer, the verdict and why: the rationale, then every mention of a candidate
    value line by line, counted or ignored (as a question, a hypothetical …) with its rule id.
    """
    explain_exec(run_folder, probe_id, arm, full)


def explain_exec(run_folder: Path, probe_id: str, arm: str, full: bool = False) -> None:
    """Print the probe's drill-down for the arm.

    Raises:
        CommandError: No such folder, arm or probe (exit 2), naming what exists.
    """
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import probe_traces, render_traces

    if not run_folder.is_dir():
        raise CommandError(f"{run_folder}: no such run folder")
    con = connect(run_folder)
    views = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
    if not {"probe_answers", "probes", "retrievals", "memory_snapshots"} <= views:
        raise CommandError(f"{run_folder}: no evaluated cells (drift run writes them)")
    arms = [
        row[0]
        for row in con.execute("select distinct arm from probe_answers order by 1").fetchall()
    ]
    # A backend's name alone names its arm when the run has that backend under one gate only.
    gated = [name for name in arms if name.partition("@")[0] == arm] if "@" not in arm else []
    if arm not in arms and len(gated) == 1:
        arm = gated[0]
    if arm not in arms:
        raise CommandError(f"--arm {arm}: not in {run_folder} (arms: {', '.join(arms)})")
    traces = probe_traces(con, arm, probe_id)
    if not traces:
        raise CommandError(
            f"--probe {probe_id}: {arm} answered no probe of that id in {run_folder}"
        )
    click.echo(render_traces(traces, full))
