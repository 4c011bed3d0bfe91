"""The report assets' metadata, computed one way for the Dagster path and for direct runs.

The ``leaderboard`` asset carries the board as a Markdown table (with each row's verification
status), the latency budget, the reader and judge with their figures, the run record's name,
its trust checks and the plots Dagster renders (PNG inlined in Markdown, the Vega-Lite spec
beside it); ``cost_curves`` carries its table and line chart. Both the asset functions and
:mod:`.direct_record` build them here, so the UI shows the same keys whichever path wrote the
tables.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import dagster as dg
import duckdb

from drift_pipeline.evaluation import HELD_OUT
from drift_pipeline.report import (
    budget_json,
    gather,
    render_budget,
    render_leaderboard,
    report_plots,
    scoring_json,
    standings,
    table_lines,
    verifications,
)

from . import metadata as md

__all__ = [
    "DAGSTER_PLOTS",
    "FAULT_RATE_CHECK",
    "LEADERBOARD_CHECKS",
    "SANITY_CHECK",
    "cost_curves_metadata",
    "leaderboard_metadata",
    "leaderboard_plots",
    "plot_metadata",
    "trust_checks",
]

SANITY_CHECK: Final = "sanity_arms"
"""Check on ``leaderboard``: every sanity arm scored well below the reference arms."""
FAULT_RATE_CHECK: Final = "fault_rate_validity"
"""Check on ``leaderboard``: no arm faulted past the run's limit anywhere (else it is unranked)."""
LEADERBOARD_CHECKS: Final = (SANITY_CHECK, FAULT_RATE_CHECK)
DAGSTER_PLOTS: Final = ("cost_curve", "mvot_by_horizon", "session_reads")
"""The report's plots the leaderboard asset carries (the rest are in the HTML report)."""

_SPARK: Final = "▁▂▃▄▅▆▇█"


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


def leaderboard_plots(folder: Path, con: duckdb.DuckDBPyConnection, record: Path) -> list[Any]:
    """The plots of :data:`DAGSTER_PLOTS` for the run ``record`` signed, from ``folder``.

    Only their rows are read: the HTML report's drill-down reads every explained probe's
    context again, which would cost the run more time and memory than the whole recording.
    """
    return report_plots(gather(folder, con, record, drill_down=False), DAGSTER_PLOTS)


def _png_markdown(title: str, spec: Mapping[str, Any]) -> str:
    import vl_convert as vlc

    png = vlc.vegalite_to_png(dict(spec), scale=1)
    return f"![{title}](data:image/png;base64,{base64.b64encode(png).decode()})"


def plot_metadata(plots: Sequence[Any]) -> dict[str, dg.MetadataValue]:
    """``plot_<name>`` (a PNG in Markdown) and ``plot_<name>_vega`` of :data:`DAGSTER_PLOTS`."""
    out: dict[str, dg.MetadataValue] = {}
    for plot in plots:
        if plot.name in DAGSTER_PLOTS:
            out[f"plot_{plot.name}"] = dg.MetadataValue.md(_png_markdown(plot.title, plot.spec))
            out[f"plot_{plot.name}_vega"] = dg.MetadataValue.json(plot.spec)
    return out


def _set_figures(scoring: Sequence[Mapping[str, Any]], name: str) -> dict[str, Any]:
    """The one offline reader's figures on the labelled set ``name`` (else empty)."""
    if len(scoring) != 1:
        return {}
    for figures in scoring[0]["reader_figures"] or []:
        if figures["name"] == name:
            return dict(figures)
    return {}


def leaderboard_metadata(
    cells: Sequence[Any],
    summary: Mapping[str, Any],
    plots: Sequence[Any],
    record: Path | None,
    skipped: int = 0,
    audits: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The ``leaderboard`` asset's metadata.

    Args:
        cells: The evaluated cells on the board.
        summary: Their JSON summary (its rows' verification and validity).
        plots: The report's plots of the record (see :data:`DAGSTER_PLOTS`).
        record: The signed record the board was written to (``None``: none).
        skipped: Stored cells that could not be read back.
        audits: World → the answerability audit's failure, where it ran.
    """
    # The arms marked as leaking across entities (allowed) in the summary are marked here too.
    leaks = {
        str(row["backend"]): str(row["leak_allowed"])
        for row in summary.get("arms", [])
        if row.get("leak_allowed")
    }
    rows = standings(cells, None, leaks)
    # A run's cell holds its limit on its run, a stored one on itself.
    limits = [
        getattr(c, "max_fault_rate", None) or getattr(c.run, "max_fault_rate", None) for c in cells
    ]
    limit = max((float(x) for x in limits if x is not None), default=None)
    checked = verifications(rows, limit, dict(audits) if audits else None)
    table = (
        render_leaderboard(rows, markdown=True, checked=checked)
        if rows
        else "_no evaluated cells yet_"
    )
    scoring = scoring_json(scoring for row in rows for scoring in row.scorings)
    others = _set_figures(scoring, "reader_check_others")
    held_out = _set_figures(scoring, HELD_OUT)
    budget_failures, budget = md.budget(
        render_budget(rows, markdown=True),
        {s.arm: budget_json(s.deployment, s.budget) for s in rows if s.valid},
    )
    ranked = [
        row
        for row in summary.get("arms", [])
        if row.get("valid") and row.get("ranked", True) and row.get("drift_c")
    ]
    return {
        **md.numeric(
            {
                md.CELLS: len(cells),
                md.ARMS: len(rows),
                md.WORLDS: len({(c.scenario, c.horizon) for c in cells}),
                md.SKIPPED_CELLS: skipped,
                md.INVALID_CELLS: sum(1 for c in cells if not getattr(c, "valid", True)),
                # Invalid arms, and arms whose cost is unknown, are never ranked, so the best
                # figure is the best ranked arm's.
                md.BEST_DRIFT_C: ranked[0]["drift_c"]["value"] if ranked else None,
                md.READER_ACCURACY: others.get("accuracy"),
                md.READER_FALSE_ACCEPT_RATE: others.get("false_accept_rate"),
                md.READER_HELD_OUT_ACCURACY: held_out.get("accuracy"),
                md.READER_HELD_OUT_FALSE_ACCEPT_RATE: held_out.get("false_accept_rate"),
                md.BUDGET_FAILURES: budget_failures,
            },
            md.LEADERBOARD_KEYS,
        ),
        **budget,
        "leaderboard": dg.MetadataValue.md(table),
        "record": dg.MetadataValue.text(record.name if record else "none"),
        "reader": dg.MetadataValue.text(", ".join(s["reader"] for s in scoring) or "none"),
        "judge": dg.MetadataValue.text(", ".join(s["judge"] for s in scoring) or "none"),
        "scoring": dg.MetadataValue.json(scoring),
        **plot_metadata(plots),
    }


def cost_curves_metadata(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, Any], str, Any]:
    """The ``cost_curves`` asset's metadata, its Markdown table and its Vega-Lite spec.

    One row per arm and horizon (mean over scenarios): cumulative tokens and MVOT so far at
    each checkpoint.
    """
    views = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
    points: list[tuple[Any, ...]] = []
    if "cost_curves" in views:
        columns = {d[0] for d in con.execute("select * from cost_curves limit 0").description}
        # An arm whose model spend is unknown: its tokens are at least, its MVOT at most, these.
        unknown = "bool_or(model_tokens = 'unknown')" if "model_tokens" in columns else "false"
        points = con.execute(
            "select horizon, arm, checkpoint, avg(cumulative_tokens), avg(mvot_so_far), "
            f"count(distinct scenario), {unknown} from cost_curves group by all "
            "order by horizon, arm, checkpoint"
        ).fetchall()
    table = _curve_table(points)
    spec = _vega_lite(points)
    metadata = {
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
    return metadata, table, spec


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
    header = [
        "horizon",
        "arm",
        "checkpoints",
        "tokens (cumulative)",
        "MVOT so far",
        "final tokens",
        "final MVOT",
        "scenarios",
    ]
    body = []
    for (horizon, arm), curve in curves.items():
        tokens = [p[3] for p in curve]
        mvot = [p[4] for p in curve]
        unknown = any(p[6] for p in curve)
        at_least, at_most = ("≥", "≤") if unknown else ("", "")
        body.append(
            [
                horizon,
                f"{arm} [model tokens unknown]" if unknown else arm,
                ", ".join(str(p[2]) for p in curve),
                f"`{_sparkline(tokens)}`",
                f"`{_sparkline(mvot)}`",
                f"{at_least}{tokens[-1]:,.0f}",
                "—" if mvot[-1] is None else f"{at_most}{mvot[-1]:.3f}",
                str(curve[-1][5]),
            ]
        )
    return "\n".join(table_lines(header, body, markdown=True))


def _vega_lite(points: Sequence[tuple[Any, ...]]) -> dict[str, Any]:
    """A Vega-Lite line chart of cumulative tokens against MVOT so far, per arm and horizon."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Token-cost curves (mean over scenarios)",
        "data": {
            "values": [
                {
                    "horizon": p[0],
                    # The legend says which curves are bounds (tokens at least, MVOT at most).
                    "arm": f"{p[1]} [model tokens unknown]" if p[6] else p[1],
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
