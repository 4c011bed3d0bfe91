"""``drift compare`` lines: paired differences A − B of the registry's ``compare`` view."""

from __future__ import annotations

from drift_pipeline.evaluation import CellMetrics, MetricRow, metric_specs


def _undefined(metric: str) -> MetricRow:
    return MetricRow(metric, None, None, None, None, 0)


def comparison_lines(diff: CellMetrics) -> list[str]:
    """One line per metric of the ``compare`` view: difference, 95% interval, ``*`` if 0 is out.

    Args:
        diff: Paired differences, as :func:`drift_pipeline.evaluation.compare_arms` returns.

    Returns:
        The lines, indented by two spaces, in the view's order; a figure undefined for either
        arm (or missing from ``diff``) reads ``undefined``.

    """
    lines = []
    for spec in metric_specs("compare"):
        metric = spec.name
        try:
            row = diff.get(metric)
        except KeyError:
            row = _undefined(metric)
        if row.value is None:
            lines.append(f"  {metric:<22} undefined")
            continue
        marker = "" if (row.ci_low or 0) <= 0 <= (row.ci_high or 0) else "  *"
        lines.append(
            f"  {metric:<22} {row.value:+.3f}  [{row.ci_low:+.3f}, {row.ci_high:+.3f}]{marker}"
        )
    return lines
