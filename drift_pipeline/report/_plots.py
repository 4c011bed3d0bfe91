"""The report's plots, drawn with Altair and exported by vl-convert (SVG inline, PNG beside it).

Each plot is a Vega-Lite spec built from plain rows; the HTML page embeds its SVG (no script
or network at view time), and the same spec is written as ``<name>.svg`` and ``<name>.png``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Final

from ._report_data import ReportData

__all__ = ["PLOT_TITLES", "Plot", "export_plots", "report_plots"]

PLOT_TITLES: Final = {
    "cost_curve": "Token cost curve: cumulative write, storage and read tokens per arm",
    "mvot_by_horizon": "MVOT per horizon (95% interval)",
    "error_curve": "Error rate per checkpoint (learning and forgetting)",
    "probe_accuracy": "Accuracy per probe type and subtype",
    "abilities": "Abilities per arm (recall, revision, action, privacy where measured, efficiency)",
    "session_reads": "Read latency and read tokens against stored sessions (mean per bin)",
    "drift_c_trend": "DRIFT-C across records",
}
"""Plot name → its title, in the order the page shows them."""


class Plot:
    """One plot: its name, title and Vega-Lite spec (a dict)."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.title = PLOT_TITLES[name]
        self.spec = spec


def _data(rows: Sequence[dict[str, Any]]) -> Any:
    import altair as alt

    return alt.Data(values=[dict(row) for row in rows])  # type: ignore[no-untyped-call]


def report_plots(data: ReportData, names: Collection[str] | None = None) -> list[Plot]:
    """Every plot the data has rows for (a plot without rows is left out).

    Args:
        data: The report's data.
        names: Only these plots (of :data:`PLOT_TITLES`); ``None``: all of them. Building a
            chart's spec validates it against the Vega-Lite schema, which costs more than its
            rows: a caller that shows three plots builds three.
    """
    import altair as alt

    wanted = set(PLOT_TITLES if names is None else names)
    plots: list[Plot] = []
    if data.cost_curve and "cost_curve" in wanted:
        long = [
            {
                **{k: row[k] for k in ("horizon", "checkpoint")},
                # The legend marks an arm whose model tokens are unknown: its tokens are at least.
                "arm": f"{row['arm']} (≥, model tokens unknown)"
                if row.get("tokens_unknown")
                else row["arm"],
                "kind": kind,
                "tokens": row[f"{kind}_tokens"],
            }
            for row in data.cost_curve
            for kind in ("write", "storage", "read")
        ]
        chart = (
            alt.Chart(_data(long))
            .mark_line(point=True)
            .encode(
                x=alt.X("checkpoint:Q", title="sessions"),
                y=alt.Y("tokens:Q", title="tokens (cumulative; storage held)"),
                color=alt.Color("arm:N"),
                strokeDash=alt.StrokeDash("kind:N"),
            )
            .properties(width=260, height=180)
            .facet(column=alt.Column("horizon:N", sort=HORIZONS))
        )
        plots.append(Plot("cost_curve", chart.to_dict()))
    mvot = [
        {
            "horizon": h,
            **(r.get("mvot") or {}),
            # An upper bound (its model tokens unknown) says so in the axis label.
            "arm": f"{r['arm']} (≤)" if (r.get("mvot") or {}).get("bound") else r["arm"],
        }
        for h, rows in data.record.get("horizons", {}).items()
        for r in rows
        if isinstance(r.get("mvot"), dict) and r["mvot"].get("value") is not None
    ]
    if mvot and "mvot_by_horizon" in wanted:
        base = alt.Chart(_data(mvot)).encode(
            x=alt.X("arm:N", title=None), color=alt.Color("arm:N", legend=None)
        )
        chart = (
            (
                base.mark_bar().encode(y=alt.Y("value:Q", title="MVOT"))
                + base.mark_rule().encode(y="ci_low:Q", y2="ci_high:Q")
            )
            .properties(width=220, height=180)
            .facet(column=alt.Column("horizon:N", sort=HORIZONS))
        )
        plots.append(Plot("mvot_by_horizon", chart.to_dict()))
    if data.error_curve and "error_curve" in wanted:
        chart = (
            alt.Chart(_data(data.error_curve))
            .mark_line(point=True)
            .encode(
                x=alt.X("checkpoint:Q", title="sessions"),
                y=alt.Y("error_rate:Q", title="probe error rate"),
                color="arm:N",
            )
            .properties(width=260, height=180)
            .facet(column=alt.Column("horizon:N", sort=HORIZONS))
        )
        plots.append(Plot("error_curve", chart.to_dict()))
    if data.probe_accuracy and "probe_accuracy" in wanted:
        rows = [{**r, "probe": f"{r['probe_type']}:{r['subtype']}"} for r in data.probe_accuracy]
        chart = (
            alt.Chart(_data(rows))
            .mark_rect()
            .encode(
                x=alt.X("arm:N", title=None),
                y=alt.Y("probe:N", title="probe type:subtype"),
                color=alt.Color("accuracy:Q", scale=alt.Scale(domain=[0, 1])),
                tooltip=["arm:N", "probe:N", "accuracy:Q", "n:Q"],
            )
            .properties(width=320)
        )
        plots.append(Plot("probe_accuracy", chart.to_dict()))
    if data.abilities and "abilities" in wanted:
        chart = (
            alt.Chart(_data(data.abilities))
            .mark_bar()
            .encode(
                x=alt.X("ability:N", sort=list(_ABILITY_ORDER), title=None),
                y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None),
                color=alt.Color("ability:N", legend=None),
            )
            .properties(width=120, height=100)
            .facet(facet=alt.Facet("arm:N"), columns=4)
        )
        plots.append(Plot("abilities", chart.to_dict()))
    if data.session_reads and "session_reads" in wanted:
        measures = (("read_ms", "read latency (ms)"), ("read_tokens", "tokens returned"))
        long = [
            {
                **{k: row[k] for k in ("arm", "horizon", "sessions_stored")},
                "measure": label,
                "value": row[key],
            }
            for row in data.session_reads
            for key, label in measures
        ]
        chart = (
            alt.Chart(_data(long))
            .mark_line(point=True)
            .encode(
                x=alt.X("sessions_stored:Q", title="sessions stored before the read"),
                y=alt.Y("value:Q", title=None),
                color=alt.Color("arm:N"),
            )
            .properties(width=260, height=160)
            .facet(
                row=alt.Row("measure:N", title=None),
                column=alt.Column("horizon:N", sort=HORIZONS),
            )
            .resolve_scale(y="independent")
        )
        plots.append(Plot("session_reads", chart.to_dict()))
    # One line per arm and configuration: a backend's runs with other options are another line.
    trend = [
        {**r, "arm": f"{r['arm']} ({r['options']})" if r.get("options") else r["arm"]}
        for r in data.trend
        if r["horizon"] == "all" and r["drift_c"] is not None
    ]
    if trend and "drift_c_trend" in wanted:
        chart = (
            alt.Chart(_data(trend))
            .mark_line(point=True)
            .encode(
                x=alt.X("created:T", title="record"),
                y=alt.Y("drift_c:Q", title="DRIFT-C"),
                color="arm:N",
            )
            .properties(width=480, height=200)
        )
        plots.append(Plot("drift_c_trend", chart.to_dict()))
    return plots


_ABILITY_ORDER: Final = ("recall", "revision", "action", "privacy", "efficiency")
HORIZONS: Final = ["short", "medium", "long"]


def export_plots(plots: Sequence[Plot], folder: Path) -> dict[str, str]:
    """Write each plot as ``<name>.svg`` and ``<name>.png`` in ``folder``.

    Returns:
        Plot name → its SVG text (for the page to inline).
    """
    import vl_convert as vlc

    folder.mkdir(parents=True, exist_ok=True)
    svgs: dict[str, str] = {}
    for plot in plots:
        svg = vlc.vegalite_to_svg(plot.spec)
        (folder / f"{plot.name}.svg").write_text(svg, encoding="utf-8")
        (folder / f"{plot.name}.png").write_bytes(vlc.vegalite_to_png(plot.spec, scale=2))
        svgs[plot.name] = svg
    return svgs
