"""Direct runs recorded in the Dagster instance: ``dagster dev`` shows what ``drift run`` wrote.

After a direct run every asset it wrote gets an ``AssetMaterialization`` (reported without a
run, :meth:`dagster.DagsterInstance.report_runless_asset_event`) under the same asset key,
partition and metadata vocabulary as the Dagster path: world tables, reference memory and
baselines per world; memory, answers, metrics and cost curve per cell; the leaderboard and
cost curves once, the leaderboard with its table and plots. The answerability audit is
reported as the ``probes`` check's evaluation.

The instance is the one ``DAGSTER_HOME`` names, else ``.dagster_home`` in the folder the run
was started from when it holds a ``dagster.yaml`` (the project root, as the README sets it
up); with neither, nothing is recorded. ``DRIFT_DAGSTER_RECORD=0`` turns recording off.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import dagster as dg
import duckdb

from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.memory import Arm
from drift_pipeline.pipeline import REFERENCE_ARM, CellResult

from . import metadata as md
from .asset_names import CELL_COST_CURVE, REFERENCE_MEMORY, WORLD_BASELINES
from .partitions import cell_partition_key, register_partitions

__all__ = [
    "FAULT_RATE_CHECK",
    "LEADERBOARD_CHECKS",
    "RECORD_ENV",
    "SANITY_CHECK",
    "direct_run_instance",
    "leaderboard_metadata",
    "record_direct_run",
    "trust_checks",
]

RECORD_ENV: Final = "DRIFT_DAGSTER_RECORD"
"""``0`` turns the recording of direct runs off."""
ANSWERABILITY: Final = "answerability_audit"
"""The ``probes`` asset's check (the name the world asset declares it under)."""
RECORDED_BY: Final = "drift/recorded_by"
WORLD_TABLE_NAMES: Final = (
    "latent_profiles",
    "event_schedules",
    "transcripts",
    "ground_truth",
    "probes",
)


def direct_run_instance() -> dg.DagsterInstance | None:
    """The instance direct runs record into, or ``None`` (turned off, or no instance here)."""
    if os.environ.get(RECORD_ENV, "1") == "0":
        return None
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    home = Path.cwd() / ".dagster_home"
    if (home / "dagster.yaml").exists():
        return dg.DagsterInstance.from_config(str(home))
    return None


def _counts(con: duckdb.DuckDBPyConnection, table: str, by: str) -> dict[tuple[Any, ...], int]:
    views = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
    if table not in views:
        return {}
    rows = con.execute(f"select {by}, count(*) from {table} group by all").fetchall()
    return {tuple(row[:-1]): int(row[-1]) for row in rows}


def _figure(cell: CellResult, metric: str) -> float | None:
    try:
        return cell.metrics.get(metric).value
    except KeyError:
        return None


def _cell_events(
    cell: CellResult, counts: Mapping[str, Mapping[tuple[Any, ...], int]]
) -> list[dg.AssetMaterialization]:
    key = (cell.scenario, cell.horizon, cell.arm.key)
    partition = cell_partition_key(CellKey(WorldKey.of(cell.scenario, cell.horizon), cell.arm.key))
    faults = len(cell.faults)
    answers = cell.answers
    correct = [c for c in answers.column("correct").to_pylist() if c is not None]
    curve = cell.cost_curve
    cumulative = curve.column("cumulative_tokens").to_pylist() if curve.num_rows else []
    final_mvot = curve.column("mvot_so_far").to_pylist()[-1] if curve.num_rows else None
    figures = {
        "memory_snapshots": md.numeric(
            {
                md.ROWS: counts["memory_snapshots"].get(key),
                md.REPLICATES: cell.replicates,
                md.FAULTS: faults,
                md.VALID: cell.valid,
                md.FAULT_RATE: cell.fault_rate,
            },
            md.MEMORY_SNAPSHOTS_KEYS,
        ),
        "retrievals": md.numeric(
            {md.ROWS: counts["retrievals"].get(key), md.REPLICATES: cell.replicates},
            md.RETRIEVALS_KEYS,
        ),
        "probe_answers": md.numeric(
            {
                md.ROWS: answers.num_rows,
                md.PROBES: len(set(answers.column("probe_id").to_pylist())),
                md.ACCURACY: sum(correct) / len(correct) if correct else None,
            },
            md.PROBE_ANSWERS_KEYS,
        ),
        "cell_metrics": md.numeric(
            {
                md.ROWS: counts["cell_metrics"].get(key),
                md.VALID: cell.valid,
                md.FAULT_RATE: cell.fault_rate,
                **{key_: _figure(cell, name) for name, key_ in md.HEADLINE_METRICS.items()},
            },
            md.CELL_METRICS_KEYS,
        ),
        CELL_COST_CURVE: md.numeric(
            {
                md.ROWS: curve.num_rows,
                md.CHECKPOINTS: curve.num_rows,
                md.FINAL_CUMULATIVE_TOKENS: cumulative[-1] if cumulative else None,
                md.FINAL_MVOT: final_mvot,
            },
            md.CELL_COST_CURVE_KEYS,
        ),
    }
    return [
        dg.AssetMaterialization(
            asset_key=asset,
            partition=str(partition),
            metadata={**values, RECORDED_BY: dg.MetadataValue.text("drift run")},
        )
        for asset, values in figures.items()
    ]


def _world_events(
    world: WorldKey,
    con: duckdb.DuckDBPyConnection,
    counts: Mapping[str, Mapping[tuple[Any, ...], int]],
) -> list[dg.AssetMaterialization]:
    key = (world.source_id, world.horizon)
    events = [
        dg.AssetMaterialization(
            asset_key=table,
            partition=world.partition_key,
            metadata={
                **md.numeric({md.ROWS: counts[table].get(key)}, md.WORLD_TABLE_KEYS[table]),
                RECORDED_BY: dg.MetadataValue.text("drift run"),
            },
        )
        for table in WORLD_TABLE_NAMES
    ]
    ref_rows = counts["memory_snapshots"].get((*key, REFERENCE_ARM.key))
    events.append(
        dg.AssetMaterialization(
            asset_key=REFERENCE_MEMORY,
            partition=world.partition_key,
            metadata={
                **md.numeric({md.ROWS: ref_rows}, md.REFERENCE_MEMORY_KEYS),
                RECORDED_BY: dg.MetadataValue.text("drift run"),
            },
        )
    )
    found = dict(
        con.execute(
            "select metric, value from cell_metrics where scenario = ? and horizon = ? "
            "and arm = ? and checkpoint = 'all'",
            [world.source_id, world.horizon, REFERENCE_ARM.key],
        ).fetchall()
    )
    probes = counts["probes"].get(key)
    baseline = {
        md.PROBES: probes,
        md.AMNESIAC_ERROR_RATE: found.get("error_rate_amnesiac"),
        md.REFERENCE_STORAGE_PER_SESSION: found.get("storage_per_session"),
        md.MVOT: found.get("mvot"),
        md.DRIFT_C: found.get("drift_c"),
    }
    events.append(
        dg.AssetMaterialization(
            asset_key=WORLD_BASELINES,
            partition=world.partition_key,
            metadata={
                **md.numeric(baseline, md.WORLD_BASELINES_KEYS),
                RECORDED_BY: dg.MetadataValue.text("drift run"),
            },
        )
    )
    return events


SANITY_CHECK: Final = "sanity_arms"
"""Check on ``leaderboard``: every sanity arm scored well below the reference arms."""
FAULT_RATE_CHECK: Final = "fault_rate_validity"
"""Check on ``leaderboard``: no arm faulted past the run's limit anywhere (else it is unranked)."""
LEADERBOARD_CHECKS: Final = (SANITY_CHECK, FAULT_RATE_CHECK)


def trust_checks(summary: Mapping[str, Any]) -> list[tuple[str, bool, str]]:
    """The leaderboard's checks from its JSON rows: (check name, passed, description).

    Sanity passes when every row's sanity check passed (not when no sanity arm ran); the
    fault-rate check when every row is valid.
    """
    rows = list(summary.get("arms", []))
    sanity = [(row.get("verification") or {}).get("checks", {}).get("sanity") for row in rows]
    reasons = sorted(
        {
            line
            for row in rows
            for line in (row.get("verification") or {}).get("reasons", [])
            if "sanity" in line
        }
    )
    invalid = [
        f"{row['arm']} ({row.get('fault_rate', 0.0):.1%} of calls faulted)"
        for row in rows
        if not row.get("valid", True)
    ]
    return [
        (
            SANITY_CHECK,
            bool(rows) and all(value is True for value in sanity),
            "; ".join(reasons) or "every sanity arm lost by the required margin",
        ),
        (
            FAULT_RATE_CHECK,
            not invalid,
            ("not ranked: " + ", ".join(invalid)) if invalid else "every arm under the limit",
        ),
    ]


def _png_markdown(title: str, spec: Mapping[str, Any]) -> str:
    import vl_convert as vlc

    png = vlc.vegalite_to_png(dict(spec), scale=1)
    return f"![{title}](data:image/png;base64,{base64.b64encode(png).decode()})"


def leaderboard_metadata(
    summary: Mapping[str, Any], plots: Sequence[Any], record: Path | None, cells: int
) -> dict[str, Any]:
    """The leaderboard asset's metadata: figures, the board as a table, its plots, the record."""
    rows = list(summary.get("arms", []))
    columns = ("rank", "arm", "drift_c", "mvot", "selectivity", "tes", "valid", "status")

    def cell(row: Mapping[str, Any], column: str) -> str:
        if column == "status":
            return str((row.get("verification") or {}).get("status"))
        value = row.get(column)
        if isinstance(value, dict):
            figure = value.get("value")
            return (
                "—"
                if figure is None
                else f"{figure:.3f} [{value['ci_low']:.3f}, {value['ci_high']:.3f}]"
            )
        return "—" if value is None else str(value)

    table = "\n".join(
        [
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
            *("| " + " | ".join(cell(row, c) for c in columns) + " |" for row in rows),
        ]
    )
    best = next(
        (row["drift_c"]["value"] for row in rows if row.get("valid") and row.get("drift_c")), None
    )
    metadata: dict[str, Any] = {
        **md.numeric(
            {
                md.CELLS: cells,
                md.ARMS: len(rows),
                md.WORLDS: len({(c["scenario"], c["horizon"]) for c in summary.get("cells", [])}),
                md.INVALID_CELLS: sum(
                    1 for c in summary.get("cells", []) if not c.get("valid", True)
                ),
                md.BEST_DRIFT_C: best,
            },
            md.LEADERBOARD_KEYS,
        ),
        "leaderboard": dg.MetadataValue.md(table),
        "record": dg.MetadataValue.text(record.name if record else "none"),
        RECORDED_BY: dg.MetadataValue.text("drift run"),
    }
    for plot in plots:
        if plot.name in ("cost_curve", "mvot_by_horizon"):
            metadata[f"plot_{plot.name}"] = dg.MetadataValue.md(
                _png_markdown(plot.title, plot.spec)
            )
            metadata[f"plot_{plot.name}_vega"] = dg.MetadataValue.json(plot.spec)
    return metadata


def record_direct_run(
    instance: dg.DagsterInstance,
    folder: Path,
    cells: Sequence[CellResult],
    summary: Mapping[str, Any],
    audits: Mapping[str, str | None],
    record: Path | None,
) -> int:
    """Report every asset a direct run wrote as materialised on ``instance``.

    Returns:
        The number of events reported.
    """
    from drift_pipeline.pipeline import connect
    from drift_pipeline.report import gather, report_plots

    worlds = list(dict.fromkeys(WorldKey.of(c.scenario, c.horizon) for c in cells))
    arms = list(
        dict.fromkeys(Arm.parse(c.arm.key) for c in cells if c.arm.key != REFERENCE_ARM.key)
    )
    register_partitions(instance, worlds, arms)
    con = connect(folder)
    counts = {table: _counts(con, table, "scenario, horizon") for table in WORLD_TABLE_NAMES} | {
        table: _counts(con, table, "scenario, horizon, arm")
        for table in ("memory_snapshots", "retrievals", "cell_metrics")
    }
    events: list[dg.AssetMaterialization | dg.AssetCheckEvaluation] = []
    for world in worlds:
        events += _world_events(world, con, counts)
        failure = audits.get(f"{world.source_id}/{world.horizon}")
        events.append(
            dg.AssetCheckEvaluation(
                check_name=ANSWERABILITY,
                asset_key=dg.AssetKey("probes"),
                passed=failure is None,
                partition=world.partition_key,
                description=failure,
            )
        )
    for cell in cells:
        if cell.arm.key != REFERENCE_ARM.key:
            events += _cell_events(cell, counts)
    plots = report_plots(gather(folder, con, record)) if record is not None else []
    events.append(
        dg.AssetMaterialization(
            asset_key="leaderboard",
            metadata=leaderboard_metadata(summary, plots, record, len(cells)),
        )
    )
    events.append(
        dg.AssetMaterialization(
            asset_key="cost_curves",
            metadata={
                **md.numeric({md.ARMS: len(arms), md.WORLDS: len(worlds)}, md.COST_CURVES_KEYS),
                RECORDED_BY: dg.MetadataValue.text("drift run"),
            },
        )
    )
    events += [
        dg.AssetCheckEvaluation(
            check_name=name,
            asset_key=dg.AssetKey("leaderboard"),
            passed=passed,
            description=description,
            severity=dg.AssetCheckSeverity.WARN,
        )
        for name, passed, description in trust_checks(summary)
    ]
    for event in events:
        instance.report_runless_asset_event(event)
    return len(events)
