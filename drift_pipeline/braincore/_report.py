"""Results as Markdown: the result file rendered into ``results_template.md``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._metrics import METRICS

__all__ = ["render_results", "results_template_path"]


def results_template_path() -> Path:
    """The shipped results template."""
    return Path(__file__).with_name("results_template.md")


def render_results(result: Mapping[str, Any], template: str | None = None) -> str:
    """Render a result (the dict of a result file) into the results template.

    Args:
        result: A result file's content (``BrainCoreResult.to_dict()`` or the JSON read back).
        template: The template text; the shipped ``results_template.md`` when ``None``.

    Returns:
        The Markdown report.
    """
    text = template if template is not None else results_template_path().read_text("utf-8")
    model = result["embedding_model"]
    metrics = result["metrics"]
    by_type = metrics["by_query_type"]
    type_rows = [
        f"| {name} | " + " | ".join(_cell(figures[m]) for m in METRICS) + " |"
        for name, figures in by_type.items()
    ]
    header = "| queries | " + " | ".join(f"`{m}`" for m in METRICS) + " |"
    rule = "|---|" + "---|" * len(METRICS)
    return text.format(
        adapter=result["adapter"],
        dataset_path=result["dataset"]["path"],
        records=result["dataset"]["records"],
        queries=result["dataset"]["queries"],
        dataset_sha256=result["dataset"]["sha256"],
        top_k=result["top_k"],
        embedding_model=f"{model['name']} ({model['package']} {model['version']})",
        bootstrap_draws=result["bootstrap"]["draws"],
        overall_table="\n".join(
            ["| metric | value | 95% interval | n |", "|---|---|---|---|"]
            + [
                f"| `{m}` | {_value(metrics['overall'][m])} | {_interval(metrics['overall'][m])} "
                f"| {metrics['overall'][m]['n']} |"
                for m in METRICS
            ]
        ),
        by_type_table="\n".join([header, rule, *type_rows]),
    )


def _value(figure: Mapping[str, Any]) -> str:
    value = figure["value"]
    if value is None:
        return "n/a"
    return f"{value:.0f}" if float(value).is_integer() and value > 1 else f"{value:.3f}"


def _interval(figure: Mapping[str, Any]) -> str:
    if figure["value"] is None:
        return "n/a"
    if figure["ci_low"] == figure["ci_high"] == figure["value"]:
        return "–"
    return f"[{figure['ci_low']:.3f}, {figure['ci_high']:.3f}]"


def _cell(figure: Mapping[str, Any]) -> str:
    return _value(figure)
