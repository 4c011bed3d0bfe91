"""Shared helpers for tests that register metrics: temporary registrations and the example
package of ``tests/evaluation/example_metrics`` (importable, or laid out as if installed)."""

from __future__ import annotations

import importlib
import shutil
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from drift_pipeline.evaluation import (
    METRIC_ENTRY_POINT_GROUP,
    MetricSpec,
    metric_specs,
    register_metric,
    unregister_metric,
)

EXAMPLE_PACKAGE = Path(__file__).parent / "evaluation" / "example_metrics"
EXAMPLE_MODULE = "drift_example_metrics"


@contextmanager
def registered(*specs: MetricSpec) -> Iterator[None]:
    """Register ``specs`` for the block (replacing a suite metric of the same name), then undo."""
    before = {spec.name: spec for spec in metric_specs()}
    try:
        for spec in specs:
            register_metric(spec, replace=spec.name in before)
        yield
    finally:
        for spec in specs:
            if spec.name in before:
                register_metric(before[spec.name], replace=True)
            elif spec.name in {s.name for s in metric_specs()}:
                unregister_metric(spec.name)


def example_spec(name: str) -> MetricSpec:
    """A metric of the example package (``RECALL_ACCURACY`` or ``EMPTY_READS``).

    Needs the package importable (:func:`example_importable`).
    """
    spec = getattr(importlib.import_module(EXAMPLE_MODULE), name)
    assert isinstance(spec, MetricSpec)
    return spec


def example_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put the example package's module on ``sys.path`` (as a checkout of it would be)."""
    monkeypatch.syspath_prepend(str(EXAMPLE_PACKAGE))


def install_example(
    site: Path, monkeypatch: pytest.MonkeyPatch, *, on_path: bool = True
) -> list[str]:
    """Lay the example package out in ``site`` as an installer does in site-packages.

    The module goes next to a ``.dist-info`` holding the entry points of the package's
    ``pyproject.toml``, so ``importlib.metadata`` finds them the way it finds any installed
    distribution once ``site`` is on the path (this process's with ``on_path``; a child
    process's otherwise). Returns the names of the entry points of the metrics group.
    """
    project = tomllib.loads((EXAMPLE_PACKAGE / "pyproject.toml").read_text())["project"]
    entries: dict[str, str] = project["entry-points"][METRIC_ENTRY_POINT_GROUP]
    shutil.copy(EXAMPLE_PACKAGE / f"{EXAMPLE_MODULE}.py", site)
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = [f"[{METRIC_ENTRY_POINT_GROUP}]", *(f"{k} = {v}" for k, v in entries.items())]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    if on_path:
        monkeypatch.delitem(sys.modules, EXAMPLE_MODULE, raising=False)
        monkeypatch.syspath_prepend(str(site))
        importlib.invalidate_caches()
    return list(entries)
