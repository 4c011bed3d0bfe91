"""Reports over every stored cell, read through DuckDB over the Parquet globs.

Unpartitioned: they depend on every partition of the cell assets, and read whatever cells the
storage root holds through :func:`drift_pipeline.pipeline.connect` (one DuckDB view per table),
not through an IO manager fanning partitions in.
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.asset_names import (
    CELL_COST_CURVE,
    REFERENCE_MEMORY,
    WORLD_BASELINES,
)
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.direct_record import (
    FAULT_RATE_CHECK,
    SANITY_CHECK,
    leaderboard_metadata,
    trust_checks,
)
from drift_pipeline.orchestration.resources import DriftStorage
from drift_pipeline.pipeline import stored_cells
from drift_pipeline.report import (
    budget_json,
    build_record,
    gather,
    render_budget,
    render_leaderboard,
    report_plots,
    scoring_json,
    sign,
    standings,
    summary_json,
    write_record,
)
from drift_pipeline.storage import (
    CELL_METRICS,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    staged,
)

GROUP = "report"
REPORTS = "_reports"
"""Folder under the storage root holding the rendered reports."""

_SPARK = "▁▂▃▄▅▆▇█"


@dg.asset(
    deps=[
        CELL_METRICS.name,
        PROBE_ANSWERS.name,
        MEMORY_SNAPSHOTS.name,
        RETRIEVALS.name,
        PROBES.name,
        # The reference compressor's rows, read like any arm's.
        REFERENCE_MEMORY,
        WORLD_BASELINES,
    ],
    group_name=GROUP,
    kinds={"duckdb", "python"},
    automation_condition=REFRESH,
    check_specs=[
        dg.AssetCheckSpec(
            SANITY_CHECK,
            asset="leaderboard",
            description="Every sanity arm that ran scored DRIFT-C well below the reference "
            "arms (none ran: not passed, nothing shows the probes reward memory alone).",
        ),
        dg.AssetCheckSpec(
            FAULT_RATE_CHECK,
            asset="leaderboard",
            description="No arm faulted past the fault-rate limit (such an arm is unranked).",
        ),
    ],
)
def leaderboard(context: dg.AssetExecutionContext, storage: DriftStorage) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Every arm's headline metrics with 95% intervals, over all stored scenarios and horizons."""
    with storage.connect() as con:
        cells, skipped = stored_cells(con, storage.path())
    for line in skipped:
        context.log.warning(f"not on the leaderboard: {line}")
    rows = standings(cells)
    table = render_leaderboard(rows, markdown=True) if rows else "_no evaluated cells yet_"
    _write(storage, "leaderboard.md", table + "\n")
    # Invalid cells follow the same rule as in `drift run`: listed with their fault rate, never
    # ranked, so the best figure is the best ranked arm's.
    best = rows[0].rows["drift_c"].value if rows and rows[0].valid else None
    # Who scored the board and how often they are right, as the table under it says.
    scoring = scoring_json(scoring for row in rows for scoring in row.scorings)
    others = _others_figures(scoring)
    budget_failures, budget = md.budget(
        render_budget(rows, markdown=True),
        {s.arm: budget_json(s.deployment, s.budget) for s in rows},
    )
    for cell in cells:
        if not cell.valid:
            context.log.warning(
                f"not ranked: {cell.arm.key} on {cell.scenario}/{cell.horizon}: "
                f"{cell.fault_rate:.1%} of its calls faulted or were skipped "
                f"(limit {cell.max_fault_rate:.1%})"
            )
    summary = summary_json(cells, _scenarios_of(cells))
    record = _record(storage, summary)
    plots = _plots(storage, record)
    return dg.MaterializeResult(
        check_results=[
            dg.AssetCheckResult(
                check_name=name,
                passed=passed,
                description=description,
                severity=dg.AssetCheckSeverity.WARN,
            )
            for name, passed, description in trust_checks(summary)
        ],
        metadata={
            **plots,
            "record": dg.MetadataValue.text(record.name if record else "none"),
            **md.numeric(
                {
                    md.CELLS: len(cells),
                    md.ARMS: len(rows),
                    md.WORLDS: len({(c.scenario, c.horizon) for c in cells}),
                    md.SKIPPED_CELLS: len(skipped),
                    md.INVALID_CELLS: sum(1 for cell in cells if not cell.valid),
                    md.BEST_DRIFT_C: best,
                    md.READER_ACCURACY: others.get("accuracy"),
                    md.READER_FALSE_ACCEPT_RATE: others.get("false_accept_rate"),
                    md.BUDGET_FAILURES: budget_failures,
                },
                md.LEADERBOARD_KEYS,
            ),
            **budget,
            "leaderboard": dg.MetadataValue.md(table),
            "reader": dg.MetadataValue.text(", ".join(s["reader"] for s in scoring) or "none"),
            "judge": dg.MetadataValue.text(", ".join(s["judge"] for s in scoring) or "none"),
            "scoring": dg.MetadataValue.json(scoring),
        },
    )


def _scenarios_of(cells: Sequence[Any]) -> list[str]:
    """The scenarios of the stored cells, in order of first appearance."""
    return list(dict.fromkeys(str(cell.scenario) for cell in cells))


def _record(storage: DriftStorage, summary: dict[str, Any]) -> Path | None:
    """The refresh's signed leaderboard record (a local root only), never over an earlier one."""
    root = storage.path()
    if root.local_path is None or not summary["cells"]:
        return None
    manifest_path = root.local_path / "_manifests" / "run.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    return write_record(root.local_path, sign(build_record(summary, manifest)))


def _plots(storage: DriftStorage, record: Path | None) -> dict[str, dg.MetadataValue]:
    """The cost curve and MVOT plots of the record as metadata Dagster renders."""
    root = storage.path()
    if record is None or root.local_path is None:
        return {}
    with storage.connect() as con:
        plots = report_plots(gather(root.local_path, con, record))
    return {
        key: value
        for key, value in leaderboard_metadata({}, plots, record, 0).items()
        if key.startswith("plot_")
    }


def _others_figures(scoring: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The one offline reader's figures on the shipped sets by other authors (else empty)."""
    if len(scoring) != 1:
        return {}
    for figures in scoring[0]["reader_figures"] or []:
        if figures["name"] == "reader_check_others":
            return dict(figures)
    return {}


@dg.asset(
    deps=[CELL_COST_CURVE, WORLD_BASELINES],
    group_name=GROUP,
    kinds={"duckdb", "python"},
    automation_condition=REFRESH,
)
def cost_curves(storage: DriftStorage) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Token-cost curves per arm and horizon (mean over scenarios), as a table and a plot."""
    with storage.connect() as con:
        views = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
        points: list[tuple[Any, ...]] = []
        if "cost_curves" in views:
            points = con.execute(
                "select horizon, arm, checkpoint, avg(cumulative_tokens), avg(mvot_so_far), "
                "count(distinct scenario) from cost_curves group by all "
                "order by horizon, arm, checkpoint"
            ).fetchall()
    table = _curve_table(points)
    spec = _vega_lite(points)
    _write(storage, "cost_curves.md", table + "\n")
    _write(storage, "cost_curves.vl.json", json.dumps(spec, indent=2) + "\n")
    return dg.MaterializeResult(
        metadata={
            **md.numeric(
                {
                    md.ROWS: len(points),
                    md.ARMS: len({p[1] for p in points}),
                    md.WORLDS: len({p[0] for p in points}),
                    md.MAX_CUMULATIVE_TOKENS: max((p[3] for p in points), default=None),
                },
                md.COST_CURVES_KEYS,
            ),
            "cost_curves": dg.MetadataValue.md(table),
            "plot": dg.MetadataValue.json(spec),
        }
    )


def _write(storage: DriftStorage, name: str, text: str) -> None:
    with staged(storage.path()) as writer:
        writer.put_text(f"{REPORTS}/{name}", text)


def _sparkline(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    if not present:
        return ""
    low, high = min(present), max(present)
    span = (high - low) or 1.0
    return "".join(
        " " if v is None else _SPARK[round((v - low) / span * (len(_SPARK) - 1))] for v in values
    )


def _curve_table(points: Sequence[tuple[Any, ...]]) -> str:
    """One row per arm and horizon: the curve as sparklines, and its end point."""
    if not points:
        return "_no cost curves yet_"
    curves: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for point in points:
        curves.setdefault((point[0], point[1]), []).append(point)
    lines = [
        "| horizon | arm | checkpoints | tokens (cumulative) | MVOT so far | final tokens | "
        "final MVOT | scenarios |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (horizon, arm), curve in curves.items():
        tokens = [p[3] for p in curve]
        mvot = [p[4] for p in curve]
        final_mvot = "—" if mvot[-1] is None else f"{mvot[-1]:.3f}"
        lines.append(
            f"| {horizon} | {arm} | {', '.join(str(p[2]) for p in curve)} | "
            f"`{_sparkline(tokens)}` | `{_sparkline(mvot)}` | {tokens[-1]:,.0f} | "
            f"{final_mvot} | {curve[-1][5]} |"
        )
    return "\n".join(lines)


def _vega_lite(points: Sequence[tuple[Any, ...]]) -> dict[str, Any]:
    """A Vega-Lite line chart of cumulative tokens against MVOT so far, per arm and horizon."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Token-cost curves (mean over scenarios)",
        "data": {
            "values": [
                {
                    "horizon": p[0],
                    "arm": p[1],
                    "checkpoint": p[2],
                    "cumulative_tokens": p[3],
                    "mvot_so_far": p[4],
                }
                for p in points
            ]
        },
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {
                "field": "cumulative_tokens",
                "type": "quantitative",
                "title": "cumulative tokens",
            },
            "y": {"field": "mvot_so_far", "type": "quantitative", "title": "MVOT so far"},
            "color": {"field": "arm", "type": "nominal"},
            "column": {"field": "horizon", "type": "nominal"},
            "order": {"field": "checkpoint", "type": "quantitative"},
        },
    }
