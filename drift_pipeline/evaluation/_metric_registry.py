"""The metric registry: every figure the suite reports, described once.

Four views read the registry and nothing else: the leaderboard's columns, each cell's figures in
the ``--json`` summary, ``drift compare`` and the numeric metadata of the Dagster
``cell_metrics`` asset; :func:`metric_specs` lists a view's metrics in its order (see
:mod:`._metric_specs`).

The suite's own metrics (:data:`~._builtin_metrics.BUILTIN_METRICS`) are computed together,
from shared intermediate figures, by :func:`~._metrics.compute_cell`. Any other metric carries
its own computation (``compute``): a ``"package.module:function"`` string, imported the first
time a cell is scored, or the function itself. It receives a cell's
:class:`~._metric_inputs.CellInputs` and returns a :class:`~._metric_inputs.UnitRate`, which the
suite turns into a figure with a bootstrap interval, a paired difference in ``drift compare``,
rows of ``cell_metrics`` and an entry in every view it names.

Installed packages add metrics through the entry-point group ``drift_pipeline.metrics``: each
entry point names a :class:`~._metric_specs.MetricSpec` object, and its name is the metric's
name::

    [project.entry-points."drift_pipeline.metrics"]
    recall_accuracy = "my_metrics.specs:RECALL_ACCURACY"

Registration order is: the suite's metrics, then entry points (read on first use of the
registry, sorted by name), then :func:`register_metric` calls. A :func:`register_metric` call
holds in its own process: cells scored in other processes (``drift run --jobs N`` workers, runs
launched from the Dagster UI) see the suite's metrics and the installed packages' only, so a
metric meant for every run belongs in a package with an entry point.
"""

from __future__ import annotations

from drift_pipeline._lazy import Registry, RegistryError

from ._builtin_metrics import BUILTIN_METRICS
from ._metric_specs import VIEW_SECTIONS, VIEWS, MetricSpec, MetricView

__all__ = [
    "METRIC_ENTRY_POINT_GROUP",
    "builtin_metric_names",
    "computed_metric_specs",
    "discover_metrics",
    "metric_spec",
    "metric_specs",
    "register_metric",
    "unregister_metric",
]

METRIC_ENTRY_POINT_GROUP = "drift_pipeline.metrics"
"""Entry-point group through which installed packages register metrics."""

_BUILTIN: frozenset[str] = frozenset(spec.name for spec in BUILTIN_METRICS)


def _metric(name: str, value: object) -> MetricSpec:
    if not isinstance(value, MetricSpec):
        raise TypeError(f"it is a {type(value).__name__}, not a MetricSpec")
    if value.name != name:
        raise ValueError(f"it names metric {value.name!r}; the names must match")
    if value.compute is None and name not in _BUILTIN:
        raise ValueError("it has no compute: only the suite's own metrics are computed without one")
    return value


_METRICS: Registry[MetricSpec] = Registry("metric", METRIC_ENTRY_POINT_GROUP, _metric)
for _spec in BUILTIN_METRICS:
    _METRICS.register(_spec.name, _spec)


def discover_metrics() -> tuple[MetricSpec, ...]:
    """Register metrics of packages installed since the registry was first used.

    The registry reads the entry-point group on first use; call this after installing a
    package into a running process.

    Returns:
        The metrics added.

    Raises:
        RegistryError: When an entry point cannot be loaded, does not name a
            :class:`~._metric_specs.MetricSpec` of its name, or its name is taken.

    """
    return tuple(_METRICS.get(name) for name in _METRICS.discover(again=True))


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
        RegistryError: When the name is taken (without ``replace``), not registered (with
            ``replace``), or when ``compute`` is missing or given for a suite metric.

    """
    name = spec.name
    registered = name in _METRICS
    if not replace and registered:
        hint = "pick another name, or pass replace=True to change its description"
        raise RegistryError(f"{_METRICS.clash(name)}; {hint}")
    if replace and not registered:
        raise RegistryError(f"metric {name!r} is not registered; nothing to replace")
    if name in _BUILTIN and spec.compute is not None:
        raise RegistryError(f"metric {name!r} is computed by the suite; compute must be None")
    if name not in _BUILTIN and spec.compute is None:
        raise RegistryError(
            f"metric {name!r} has no compute: only the suite's own metrics are computed without one"
        )
    _METRICS.register(name, spec, replace=replace)
    return spec


def unregister_metric(name: str) -> MetricSpec:
    """Remove a registered metric (not one of the suite's) and return it.

    Raises:
        RegistryError: When no metric of that name is registered (a ``KeyError``), or for one
            of the suite's metrics.

    """
    spec = metric_spec(name)
    if name in _BUILTIN:
        raise RegistryError(f"metric {name!r} is one of the suite's own and cannot be removed")
    _METRICS.unregister(name)
    return spec


def metric_spec(name: str) -> MetricSpec:
    """The registered metric of that name.

    Raises:
        RegistryError: A ``KeyError`` with the registered names, when ``name`` is not one.

    """
    return _METRICS.get(name)


def metric_specs(view: MetricView | None = None) -> tuple[MetricSpec, ...]:
    """Registered metrics: all in registration order, or those of one view in its order.

    Args:
        view: ``headline``, ``json``, ``compare`` or ``metadata``: only the metrics shown
            there, section by section in the view's order (:data:`~._metric_specs.VIEW_SECTIONS`),
            each section in registration order; metrics of no listed section last.

    Raises:
        ValueError: For an unknown view.

    """
    specs = tuple(_METRICS.get(name) for name in _METRICS.names())
    if view is None:
        return specs
    if view not in VIEWS:
        raise ValueError(f"unknown metric view {view!r}; views: {', '.join(VIEWS)}")
    sections: tuple[str | None, ...] = VIEW_SECTIONS[view]
    last = len(sections)

    def rank(spec: MetricSpec) -> int:
        return sections.index(spec.section) if spec.section in sections else last

    # sorted() is stable: within a section, registration order stands.
    return tuple(sorted((spec for spec in specs if spec.shown_in(view)), key=rank))


def computed_metric_specs() -> tuple[MetricSpec, ...]:
    """Registered metrics outside the suite's own, in registration order (they carry compute)."""
    return tuple(spec for spec in metric_specs() if spec.name not in _BUILTIN)


def builtin_metric_names() -> tuple[str, ...]:
    """Names of the suite's own metrics, in row order."""
    return tuple(name for name in _METRICS.names() if name in _BUILTIN)
