"""How a metric is described: :class:`MetricSpec`, a declaration that reads like a sentence.

A spec says what a metric is called, how it is labelled, in which unit it is measured, which
way is better, and where it is shown. Four views show metrics: the leaderboard's columns
(``headline``), each cell's figures in the ``--json`` summary (``json``), ``drift compare``
(``compare``) and the numeric metadata of the Dagster ``cell_metrics`` asset (``metadata``).
A spec names the views it is shown in; each view lists its metrics section by section
(:data:`VIEW_SECTIONS`: the composites first on the leaderboard, last in the JSON summary),
and within a section in the order they were declared. A metric of no section (or of a section
the view does not list) follows the suite's, in registration order.

The registry of specs is :mod:`._metric_registry`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

from drift_pipeline._lazy import RegistryError, resolve_target

if TYPE_CHECKING:
    from ._metric_inputs import CellInputs, UnitRate

__all__ = [
    "GEOMETRIC_FLOOR",
    "VIEW_SECTIONS",
    "Direction",
    "MetricCompute",
    "MetricSection",
    "MetricSpec",
    "MetricView",
]

GEOMETRIC_FLOOR = 0.001
"""Values below it (zero, negative) count as it in a geometric mean, so one scenario where the
figure is 0 pulls the mean down without making it 0 whatever the others are."""

Direction = Literal["higher", "lower", "neutral"]
"""Which way is better: ``higher``, ``lower``, or ``neutral`` (a diagnostic or a baseline)."""

MetricView = Literal["headline", "json", "compare", "metadata"]
"""The places a metric can be shown; each is a :class:`MetricSpec` flag of that name."""

MetricSection = Literal["composite", "capability", "privacy", "multi_peer", "cost", "latency"]
"""The groups the views list metrics by: the DRIFT-C/DRIFT-E composites and what goes with
them, the capability and efficiency scores (spec §7.1-§7.8), Privacy, the multi-peer figures
(consistency, attribution, hand-over), token costs, latencies."""

VIEW_SECTIONS: Final[Mapping[MetricView, tuple[MetricSection, ...]]] = {
    "headline": ("composite", "capability"),
    "json": ("capability", "privacy", "multi_peer", "composite"),
    "compare": ("composite", "capability", "privacy", "multi_peer", "latency", "cost"),
    "metadata": ("capability", "composite", "privacy", "multi_peer", "cost", "latency"),
}
"""Each view's sections, in the order it shows them."""

MetricCompute = Callable[["CellInputs"], "UnitRate"]
"""How a registered metric is computed from one cell's scored data."""

VIEWS: Final[tuple[MetricView, ...]] = get_args(MetricView)
_SECTIONS: tuple[str, ...] = get_args(MetricSection)
_DIRECTIONS: tuple[str, ...] = get_args(Direction)
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """Everything the reports need to know about one metric, given by keyword.

    Attributes:
        name: Row name in ``cell_metrics`` and key in the JSON summary (lowercase, digits, ``_``);
            the Dagster metadata key is ``drift/<name>``.
        label: Short column header on the leaderboard.
        unit: What a value measures: ``score``, ``share``, ``ratio``, ``tokens``, ``ms``,
            ``count`` or another short word.
        direction: ``higher`` or ``lower`` is better, or ``neutral``.
        description: One line saying what the figure is.
        section: Where the views list it (:data:`VIEW_SECTIONS`); ``None``: after the suite's.
        headline: A leaderboard column.
        json: Among each cell's ``metrics`` in the ``--json`` summary.
        compare: A line of ``drift compare``.
        metadata: Among the ``cell_metrics`` asset's numeric metadata.
        digits: Decimals the leaderboard prints (values of 100 or more print as integers).
        null_when_undefined: In the JSON summary an undefined figure is ``null`` instead of an
            object of nulls (for figures only some scenarios measure, like Privacy).
        geometric: Across scenarios the leaderboard takes the geometric mean (of values floored
            at :data:`GEOMETRIC_FLOOR`) instead of the arithmetic mean: for ratios such as TES,
            where one scenario's 80 must not outweigh four scenarios' 0.5.
        compute: For a metric outside the suite's own: ``"package.module:function"`` or a
            function taking :class:`~._metric_inputs.CellInputs` and returning a
            :class:`~._metric_inputs.UnitRate`. ``None`` for the suite's metrics.

    Raises:
        ValueError: When an attribute is malformed (the message names the metric and the
            attribute).

    """

    name: str
    label: str
    unit: str
    direction: Direction
    description: str
    section: MetricSection | None = None
    headline: bool = False
    json: bool = False
    compare: bool = False
    metadata: bool = False
    digits: int = 2
    null_when_undefined: bool = False
    geometric: bool = False
    compute: str | MetricCompute | None = None

    def __post_init__(self) -> None:
        where = f"metric {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(
                f"{where}: name must be lowercase letters, digits and '_', starting with a letter"
            )
        for attribute in ("label", "unit", "description"):
            text = getattr(self, attribute)
            if not isinstance(text, str) or not text.strip() or "\n" in text:
                raise ValueError(f"{where}: {attribute} must be one non-empty line")
        if self.direction not in _DIRECTIONS:
            raise ValueError(
                f"{where}: direction {self.direction!r} is not one of {', '.join(_DIRECTIONS)}"
            )
        if self.section is not None and self.section not in _SECTIONS:
            raise ValueError(
                f"{where}: section {self.section!r} is not one of {', '.join(_SECTIONS)}"
            )
        for flag in (*VIEWS, "null_when_undefined", "geometric"):
            if not isinstance(getattr(self, flag), bool):
                raise ValueError(f"{where}: {flag} must be True or False")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int):
            raise ValueError(f"{where}: digits must be an int from 0 to 6")
        if not 0 <= self.digits <= 6:
            raise ValueError(f"{where}: digits must be an int from 0 to 6")
        if isinstance(self.compute, str) and not _TARGET.fullmatch(self.compute):
            raise ValueError(f"{where}: compute {self.compute!r} is not 'package.module:function'")
        if not (self.compute is None or isinstance(self.compute, str) or callable(self.compute)):
            raise ValueError(f"{where}: compute must be 'module:function' or a callable")

    def shown_in(self, view: MetricView) -> bool:
        """Whether the view ``view`` shows this metric."""
        return bool(getattr(self, view))

    def computation(self) -> MetricCompute:
        """The function computing this metric, imported on first use.

        Raises:
            ValueError: When the metric has no ``compute`` (the suite computes its own).
            RegistryError: When a ``"module:function"`` target cannot be imported, lacks the
                function, or names something that is not callable.

        """
        if self.compute is None:
            raise ValueError(f"metric {self.name!r} is computed by the suite, not by a function")
        if not isinstance(self.compute, str):
            return self.compute
        what = f"metric {self.name!r} compute"
        target = resolve_target(self.compute, what)
        if not callable(target):
            raise RegistryError(f"{what}: {self.compute!r} is not callable")
        function: MetricCompute = target
        return function
