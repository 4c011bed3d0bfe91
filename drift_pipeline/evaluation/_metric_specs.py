"""The metric registry: every figure the suite reports, described once.

A :class:`MetricSpec` says what a metric is called, how it is labelled, in which unit it is
measured, which way is better, and where it is shown. Four views read the registry and nothing
else: the leaderboard's columns (``headline``), each cell's figures in the ``--json`` summary
(``json``), ``drift compare`` (``compare``) and the numeric metadata of the Dagster
``cell_metrics`` asset (``metadata``). Each of those attributes is the metric's position in that
view, or ``None`` when the view leaves it out; a view lists its metrics by position, ties in
registration order (:func:`metric_specs`).

The suite's own metrics (:data:`BUILTIN_METRICS`) are computed together, from shared
intermediate figures, by :func:`~._metrics.compute_cell`. Any other metric carries its own
computation (``compute``): a ``"package.module:function"`` string, imported the first time a
cell is scored, or the function itself. It receives a cell's
:class:`~._metric_inputs.CellInputs` and returns a :class:`~._metric_inputs.UnitRate`, which the
suite turns into a figure with a bootstrap interval, a paired difference in ``drift compare``,
rows of ``cell_metrics`` and an entry in every view it names.

Installed packages add metrics through the entry-point group ``drift_pipeline.metrics``: each
entry point names a :class:`MetricSpec` object, and its name is the metric's name::

    [project.entry-points."drift_pipeline.metrics"]
    recall_accuracy = "my_metrics.specs:RECALL_ACCURACY"

Registration order is: the suite's metrics, then entry points (discovered on first use of the
registry, sorted by name), then :func:`register_metric` calls. A :func:`register_metric` call
holds in its own process: cells scored in other processes (``drift run --jobs N`` workers, runs
launched from the Dagster UI) see the suite's metrics and the installed packages' only, so a
metric meant for every run belongs in a package with an entry point.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from ._metric_inputs import CellInputs, UnitRate

__all__ = [
    "GEOMETRIC_FLOOR",
    "METRIC_ENTRY_POINT_GROUP",
    "Direction",
    "MetricCompute",
    "MetricSpec",
    "MetricView",
    "builtin_metric_names",
    "computed_metric_specs",
    "discover_metrics",
    "metric_spec",
    "metric_specs",
    "register_metric",
    "unregister_metric",
]

GEOMETRIC_FLOOR = 0.001
"""Values below it (zero, negative) count as it in a geometric mean, so one scenario where the
figure is 0 pulls the mean down without making it 0 whatever the others are."""

METRIC_ENTRY_POINT_GROUP = "drift_pipeline.metrics"
"""Entry-point group through which installed packages register metrics."""

Direction = Literal["higher", "lower", "neutral"]
"""Which way is better: ``higher``, ``lower``, or ``neutral`` (a diagnostic or a baseline)."""

MetricView = Literal["headline", "json", "compare", "metadata"]
"""The places a metric can be shown; each is a :class:`MetricSpec` attribute of that name."""

MetricCompute = Callable[["CellInputs"], "UnitRate"]
"""How a registered metric is computed from one cell's scored data."""

_VIEWS: tuple[str, ...] = get_args(MetricView)
_DIRECTIONS: tuple[str, ...] = get_args(Direction)
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_TARGET = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclass(frozen=True)
class MetricSpec:
    """Everything the reports need to know about one metric.

    Attributes:
        name: Row name in ``cell_metrics`` and key in the JSON summary (lowercase, digits, ``_``);
            the Dagster metadata key is ``drift/<name>``.
        label: Short column header on the leaderboard.
        unit: What a value measures: ``score``, ``share``, ``ratio``, ``tokens``, ``ms``,
            ``count`` or another short word.
        direction: ``higher`` or ``lower`` is better, or ``neutral``.
        description: One line saying what the figure is.
        headline: Leaderboard column position, or ``None``.
        json: Position among each cell's ``metrics`` in the ``--json`` summary, or ``None``.
        compare: Position in ``drift compare``, or ``None``.
        metadata: Position among the ``cell_metrics`` asset's numeric metadata, or ``None``.
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
    headline: int | None = None
    json: int | None = None
    compare: int | None = None
    metadata: int | None = None
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
        for view in _VIEWS:
            position = getattr(self, view)
            if position is not None and (
                isinstance(position, bool) or not isinstance(position, int) or position < 0
            ):
                raise ValueError(f"{where}: {view} must be a position (an int >= 0) or None")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int):
            raise ValueError(f"{where}: digits must be an int from 0 to 6")
        if not 0 <= self.digits <= 6:
            raise ValueError(f"{where}: digits must be an int from 0 to 6")
        if isinstance(self.compute, str) and not _TARGET.fullmatch(self.compute):
            raise ValueError(f"{where}: compute {self.compute!r} is not 'package.module:function'")
        if not (self.compute is None or isinstance(self.compute, str) or callable(self.compute)):
            raise ValueError(f"{where}: compute must be 'module:function' or a callable")

    def computation(self) -> MetricCompute:
        """The function computing this metric, imported on first use.

        Raises:
            ValueError: When the metric has no ``compute`` (the suite computes its own).
            ImportError: When the module of a ``"module:function"`` target cannot be imported
                or lacks the function.
            TypeError: When the target is not callable.

        """
        if self.compute is None:
            raise ValueError(f"metric {self.name!r} is computed by the suite, not by a function")
        if not isinstance(self.compute, str):
            return self.compute
        module_name, _, attribute = self.compute.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ImportError(
                f"metric {self.name!r}: cannot import {module_name!r} of compute "
                f"{self.compute!r} ({error})"
            ) from error
        target = getattr(module, attribute, None)
        if target is None:
            raise ImportError(
                f"metric {self.name!r}: module {module_name!r} has no {attribute!r} "
                f"(compute {self.compute!r})"
            )
        if not callable(target):
            raise TypeError(f"metric {self.name!r}: compute {self.compute!r} is not callable")
        function: MetricCompute = target
        return function


_REGISTRY: dict[str, MetricSpec] = {}
_BUILTIN: set[str] = set()
_FROM_ENTRY_POINTS: set[str] = set()
_state = {"loaded": False, "loading": False}


def _ensure_loaded() -> None:
    """Register the suite's metrics, then the installed packages', once."""
    if _state["loaded"] or _state["loading"]:
        return
    _state["loading"] = True
    try:
        from ._builtin_metrics import BUILTIN_METRICS

        for spec in BUILTIN_METRICS:
            if spec.name not in _REGISTRY:
                _REGISTRY[spec.name] = spec
                _BUILTIN.add(spec.name)
        _discover()
        _state["loaded"] = True
    finally:
        _state["loading"] = False


def _entry_point_spec(entry: EntryPoint) -> MetricSpec:
    where = f"entry point {entry.name} = {entry.value} (group {METRIC_ENTRY_POINT_GROUP})"
    try:
        spec = entry.load()
    except Exception as error:  # a broken plug-in must name itself, whatever it raised
        raise ImportError(f"{where} failed to load: {error}") from error
    if not isinstance(spec, MetricSpec):
        raise TypeError(f"{where} is a {type(spec).__name__}, not a MetricSpec")
    if spec.name != entry.name:
        raise ValueError(f"{where} names metric {spec.name!r}; the names must match")
    return spec


def _discover() -> list[MetricSpec]:
    added = []
    for entry in sorted(entry_points(group=METRIC_ENTRY_POINT_GROUP), key=lambda e: e.name):
        if entry.name in _FROM_ENTRY_POINTS:
            continue
        spec = _entry_point_spec(entry)
        _check_new(spec, f"entry point {entry.name} = {entry.value}")
        _REGISTRY[spec.name] = spec
        _FROM_ENTRY_POINTS.add(spec.name)
        added.append(spec)
    return added


def _check_new(spec: MetricSpec, source: str) -> None:
    if spec.name in _REGISTRY:
        origin = "built in" if spec.name in _BUILTIN else "registered"
        raise ValueError(
            f"metric {spec.name!r} from {source} is already {origin}; "
            "pick another name, or pass replace=True to change its description"
        )
    if spec.compute is None:
        raise ValueError(
            f"metric {spec.name!r} from {source} has no compute: only the suite's own metrics "
            "are computed without one"
        )


def discover_metrics() -> tuple[MetricSpec, ...]:
    """Register metrics of packages installed since the registry was first used.

    The registry scans the entry-point group on first use; call this after installing a
    package into a running process.

    Returns:
        The metrics added.

    Raises:
        ImportError: When an entry point cannot be loaded.
        TypeError: When an entry point does not name a :class:`MetricSpec`.
        ValueError: When its name differs from the entry point's, or is already taken.

    """
    _ensure_loaded()
    return tuple(_discover())


def register_metric(spec: MetricSpec, *, replace: bool = False) -> MetricSpec:
    """Add a metric to every report (or, with ``replace``, change how one is described).

    Args:
        spec: The metric. Unless it replaces one of the suite's metrics it needs ``compute``.
        replace: Replace the registered metric of that name, keeping its place in the
            registration order. A suite metric can be relabelled or moved between views this
            way, but it stays computed by the suite (``compute`` must be ``None``).

    Returns:
        ``spec``.

    Raises:
        ValueError: When the name is taken (without ``replace``), not registered (with
            ``replace``), or when ``compute`` is missing or given for a suite metric.

    """
    _ensure_loaded()
    if not replace:
        _check_new(spec, "register_metric")
    elif spec.name not in _REGISTRY:
        raise ValueError(f"metric {spec.name!r} is not registered; nothing to replace")
    elif spec.name in _BUILTIN and spec.compute is not None:
        raise ValueError(f"metric {spec.name!r} is computed by the suite; compute must be None")
    elif spec.name not in _BUILTIN and spec.compute is None:
        raise ValueError(f"metric {spec.name!r} needs a compute")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_metric(name: str) -> MetricSpec:
    """Remove a registered metric (not one of the suite's) and return it.

    Raises:
        KeyError: When no metric of that name is registered.
        ValueError: For one of the suite's metrics.

    """
    spec = metric_spec(name)
    if name in _BUILTIN:
        raise ValueError(f"metric {name!r} is one of the suite's own and cannot be removed")
    del _REGISTRY[name]
    _FROM_ENTRY_POINTS.discard(name)
    return spec


def metric_spec(name: str) -> MetricSpec:
    """The registered metric of that name.

    Raises:
        KeyError: With the registered names, when ``name`` is not one.

    """
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise KeyError(f"unknown metric {name!r}; registered: {known}") from None


def metric_specs(view: MetricView | None = None) -> tuple[MetricSpec, ...]:
    """Registered metrics: all in registration order, or those of one view in its order.

    Args:
        view: ``headline``, ``json``, ``compare`` or ``metadata``: only the metrics with a
            position in that view, sorted by it (ties in registration order).

    Raises:
        ValueError: For an unknown view.

    """
    _ensure_loaded()
    specs = tuple(_REGISTRY.values())
    if view is None:
        return specs
    if view not in _VIEWS:
        raise ValueError(f"unknown metric view {view!r}; views: {', '.join(_VIEWS)}")
    shown: list[tuple[int, int, MetricSpec]] = []
    for index, spec in enumerate(specs):
        position = getattr(spec, view)
        if position is not None:
            shown.append((position, index, spec))
    shown.sort(key=lambda item: (item[0], item[1]))
    return tuple(spec for _, _, spec in shown)


def computed_metric_specs() -> tuple[MetricSpec, ...]:
    """Registered metrics outside the suite's own, in registration order (they carry compute)."""
    return tuple(spec for spec in metric_specs() if spec.name not in _BUILTIN)


def builtin_metric_names() -> tuple[str, ...]:
    """Names of the suite's own metrics, in row order."""
    _ensure_loaded()
    return tuple(name for name in _REGISTRY if name in _BUILTIN)
