"""The spec's production latency budget (§7.8): each arm against the targets where it runs.

Each arm runs ``local`` (a built-in, an in-process adapter) or ``cloud`` (a remote service), as
its backend declares (see :mod:`drift_pipeline.memory`). Its p99 read latency, write latency,
TTFRT and Dialectic speed are held against the targets for that deployment; an arm's figure is
its worst cell's p99 (the budget holds only if it holds on every world). A figure no cell
measured is "not measured", never a pass; a TTFRT (and so a Dialectic speed) modelled from the
context size rather than measured with a reader model is marked so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from drift_pipeline.evaluation import CellMetrics

from ._table import table_lines

__all__ = [
    "BUDGET_FIGURES",
    "BUDGET_TARGETS_MS",
    "BudgetFigure",
    "arm_budget",
    "budget_from_json",
    "budget_json",
    "budget_lines",
]

BUDGET_FIGURES: Final[tuple[tuple[str, str, str], ...]] = (
    ("read", "Read p99", "read_ms_p99"),
    ("write", "Write p99", "write_ms_p99"),
    ("ttfrt", "TTFRT p99", "ttfrt_ms_p99"),
    ("dialectic", "Dialectic p99", "dialectic_ms_p99"),
)
"""Each budgeted figure: its key, its label, and the metric it is read from."""

BUDGET_TARGETS_MS: Final[Mapping[str, Mapping[str, float]]] = {
    "local": {"read": 50.0, "write": 2000.0, "ttfrt": 200.0, "dialectic": 500.0},
    "cloud": {"read": 150.0, "write": 2000.0, "ttfrt": 400.0, "dialectic": 800.0},
}
"""The spec's production latency budget targets (p99, ms), by deployment."""

_MODELLED_WHEN_TTFT_IS: Final = frozenset({"ttfrt", "dialectic"})


class _Cell(Protocol):
    metrics: CellMetrics


@dataclass(frozen=True)
class BudgetFigure:
    """One budgeted figure of one arm.

    Attributes:
        figure: ``read``, ``write``, ``ttfrt`` or ``dialectic``.
        p99_ms: The arm's worst cell's p99; ``None``: not measured.
        target_ms: The target where the arm runs.
        modelled: The figure rests on a modelled reader TTFT (in some cell).
    """

    figure: str
    p99_ms: float | None
    target_ms: float
    modelled: bool = False

    @property
    def passed(self) -> bool | None:
        """Whether the figure is under its target; ``None`` when not measured."""
        return None if self.p99_ms is None else self.p99_ms < self.target_ms


def _value(metrics: CellMetrics, name: str) -> float | None:
    try:
        return metrics.get(name).value
    except KeyError:  # cells computed before the metric existed
        return None


def arm_budget(cells: Iterable[_Cell], deployment: str) -> tuple[BudgetFigure, ...]:
    """The budget figures of one arm over its cells, against ``deployment``'s targets."""
    targets = BUDGET_TARGETS_MS[deployment]
    cells = list(cells)
    modelled = any((_value(c.metrics, "ttft_measured") or 0.0) < 1.0 for c in cells)
    out = []
    for figure, _, metric in BUDGET_FIGURES:
        values = [v for c in cells if (v := _value(c.metrics, metric)) is not None]
        out.append(
            BudgetFigure(
                figure,
                max(values) if values else None,
                targets[figure],
                bool(values) and modelled and figure in _MODELLED_WHEN_TTFT_IS,
            )
        )
    return tuple(out)


def _cell_text(figure: BudgetFigure) -> str:
    if figure.p99_ms is None:
        return "not measured"
    verdict = "pass" if figure.passed else "FAIL"
    mark = " m" if figure.modelled else ""
    return f"{figure.p99_ms:.1f}{mark} {verdict} (< {figure.target_ms:g})"


def budget_lines(
    arms: Sequence[tuple[str, str, Sequence[BudgetFigure]]], markdown: bool = False
) -> list[str]:
    """The budget table: one row per arm (``arm``, ``deployment``, figures), one column per figure.

    Returns no lines for no arms.
    """
    if not arms:
        return []
    header = ["budget (spec §7.8, p99 ms)", "runs", *(label for _, label, _ in BUDGET_FIGURES)]
    body = [[arm, deployment, *map(_cell_text, figures)] for arm, deployment, figures in arms]
    modelled = any(f.modelled for _, _, figures in arms for f in figures)
    note = ["m: from a modelled reader TTFT (no measured reader)"] if modelled else []
    lines = table_lines(header, body, markdown)
    return [*lines, *(["", *note] if markdown and note else note)]


def budget_json(deployment: str, figures: Sequence[BudgetFigure]) -> dict[str, Any]:
    """One arm's budget for the JSON summary and the leaderboard's metadata."""
    return {
        "deployment": deployment,
        "figures": {
            f.figure: {
                "p99_ms": f.p99_ms,
                "target_ms": f.target_ms,
                "pass": f.passed,
                "measured": f.p99_ms is not None,
                "modelled": f.modelled,
            }
            for f in figures
        },
    }


def budget_from_json(budget: Mapping[str, Any]) -> tuple[str, tuple[BudgetFigure, ...]]:
    """An arm's deployment and budget figures back from :func:`budget_json` (a record's row)."""
    figures = budget.get("figures") or {}
    return str(budget.get("deployment", "local")), tuple(
        BudgetFigure(
            name,
            None if not figures[name].get("measured") else figures[name].get("p99_ms"),
            float(figures[name]["target_ms"]),
            bool(figures[name].get("modelled")),
        )
        for name, _, _ in BUDGET_FIGURES
        if name in figures
    )
