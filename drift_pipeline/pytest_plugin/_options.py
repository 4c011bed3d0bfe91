"""The plugin's command-line options, checked into :class:`GateOptions` before anything runs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GateOptions", "Thresholds", "add_options", "read_options"]

TIMED_METRICS = frozenset({"lps", "drift_e"})
"""Figures built from measured wall-clock times, which differ between any two runs."""


@dataclass(frozen=True)
class Thresholds:
    """Bounds on a cell's whole-cell figures: a minimum or a maximum per metric name."""

    minimum: Mapping[str, float] = field(default_factory=dict)
    maximum: Mapping[str, float] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.minimum or self.maximum)


@dataclass(frozen=True)
class GateOptions:
    """Everything the options say, checked.

    Attributes:
        sources: Scenario files or folders (or ``PREFIX:PATH`` importer sources).
        backends: Registered names or ``package.module:Class`` paths.
        backend_options: Constructor options per backend name.
        horizons: Only these horizons (empty: every one a scenario declares).
        gate: The budget gate of every arm.
        thresholds: Bounds every test checks.
        baseline: A previous ``--drift-output`` to compare with.
        baseline_metrics: The metrics compared with the baseline.
        output: Where to write this run's figures and answers.
        data: Storage root of the tables (None: a temporary folder, removed afterwards).
        call_timeout: Seconds before a backend call is recorded as a timeout.
        max_fault_rate: Share of a cell's calls that may fault before it fails.
        simulated_clock: Backends' clocks read each session's simulated time during its calls.
        allow_leaks: Backends the conformance check may find keeping entities' memories
            together (their tests run, the leak recorded; see ``drift run --allow-leak``).
    """

    sources: tuple[str, ...]
    backends: tuple[str, ...]
    backend_options: Mapping[str, Mapping[str, Any]]
    horizons: tuple[str, ...]
    gate: str
    thresholds: Thresholds
    baseline: Path | None
    baseline_metrics: tuple[str, ...]
    output: Path | None
    data: Path | None
    call_timeout: float
    max_fault_rate: float
    simulated_clock: bool = True
    allow_leaks: tuple[str, ...] = ()


def add_options(parser: pytest.Parser) -> None:
    """Register the ``drift`` group; nothing here imports the harness."""
    group = parser.getgroup("drift", "DRIFT memory benchmark as tests")
    group.addoption(
        "--drift-scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="Scenario files or folders (or PREFIX:PATH sources) to run as tests (repeatable); "
        "without it the plugin does nothing.",
    )
    group.addoption(
        "--drift-backend",
        action="append",
        default=[],
        metavar="NAME|module:Class",
        help="Memory system under test (repeatable): a registered name or an import path.",
    )
    group.addoption(
        "--drift-backend-config",
        metavar="FILE",
        help="YAML mapping backend name -> constructor options (as drift run's --backend-config).",
    )
    group.addoption(
        "--drift-horizon",
        "--horizon",
        dest="drift_horizons",
        action="append",
        default=[],
        choices=("short", "medium", "long"),
        help="Only these horizons (repeatable); default: every horizon a scenario declares.",
    )
    group.addoption("--drift-gate", default="hard", help="Budget gate of every arm (hard).")
    group.addoption(
        "--drift-min",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="Fail when the metric's whole-cell figure is below VALUE (repeatable).",
    )
    group.addoption(
        "--drift-max",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="Fail when the metric's whole-cell figure is above VALUE (repeatable).",
    )
    group.addoption(
        "--drift-thresholds",
        metavar="FILE",
        help="YAML or JSON with 'min' and 'max' mappings of metric to value; --drift-min and "
        "--drift-max override it metric by metric.",
    )
    group.addoption(
        "--drift-baseline",
        metavar="FILE",
        help="A previous --drift-output: fail when a metric is worse than there beyond its "
        "paired 95%% interval.",
    )
    group.addoption(
        "--drift-baseline-metrics",
        metavar="M1,M2",
        help="Metrics compared with the baseline (default: drift run's compare view, less the "
        "figures built from measured times).",
    )
    group.addoption(
        "--drift-output",
        metavar="FILE",
        help="Write the figures, leaderboard and per-probe answers of this run as JSON.",
    )
    group.addoption(
        "--drift-data",
        metavar="DIR",
        help="Keep the run's tables here (default: a temporary folder, removed afterwards).",
    )
    group.addoption("--drift-call-timeout", type=float, default=30.0, metavar="SECONDS")
    group.addoption("--drift-max-fault-rate", type=float, default=0.05, metavar="SHARE")
    group.addoption(
        "--drift-real-clock",
        action="store_true",
        help="Backends' clocks read the real time (as drift run --real-clock); by default they "
        "read the simulated time of each call's session.",
    )
    group.addoption(
        "--drift-allow-leak",
        action="append",
        default=[],
        metavar="NAME|module:Class",
        help="Let this --drift-backend keep entities' memories together (repeatable): the "
        "conformance check reports the leak instead of failing its tests.",
    )


def read_options(config: pytest.Config) -> GateOptions:
    """The options, checked against the registries.

    Raises:
        pytest.UsageError: One line naming the bad value and what would be right.
    """
    from drift_pipeline.evaluation import metric_specs

    known = {spec.name: spec for spec in metric_specs()}
    if getattr(config.option, "numprocesses", None):
        # Each xdist worker would run every world itself and write the output file over the
        # others'; the harness already runs a world's replicates side by side.
        raise pytest.UsageError("--drift-scenarios runs in one pytest process: give -n 0")
    backends = tuple(config.getoption("drift_backend"))
    if not backends:
        raise pytest.UsageError("--drift-scenarios needs --drift-backend NAME|module:Class")
    for backend in backends:
        _check_backend(backend)
    allow_leaks = tuple(dict.fromkeys(config.getoption("drift_allow_leak")))
    for name in allow_leaks:
        if name not in backends:
            raise pytest.UsageError(f"--drift-allow-leak {name}: not one of the --drift-backend")
    thresholds = _thresholds(config, known)
    baseline = _path(config.getoption("drift_baseline"), "--drift-baseline", must_exist=True)
    listed = config.getoption("drift_baseline_metrics")
    if listed:
        baseline_metrics = tuple(m.strip() for m in listed.split(",") if m.strip())
        for metric in baseline_metrics:
            _known_metric(metric, known, "--drift-baseline-metrics")
    else:
        baseline_metrics = tuple(
            spec.name
            for spec in metric_specs("compare")
            if spec.unit != "ms" and spec.name not in TIMED_METRICS
        )
    rate = float(config.getoption("drift_max_fault_rate"))
    if not 0.0 <= rate <= 1.0:
        raise pytest.UsageError(f"--drift-max-fault-rate {rate}: expected a share in 0..1")
    timeout = float(config.getoption("drift_call_timeout"))
    if not timeout > 0:
        raise pytest.UsageError(f"--drift-call-timeout {timeout}: expected seconds above 0")
    return GateOptions(
        sources=tuple(config.getoption("drift_scenarios")),
        backends=backends,
        backend_options=_backend_config(config.getoption("drift_backend_config"), backends),
        horizons=tuple(dict.fromkeys(config.getoption("drift_horizons"))),
        gate=_gate(config.getoption("drift_gate")),
        thresholds=thresholds,
        baseline=baseline,
        baseline_metrics=baseline_metrics,
        output=_path(config.getoption("drift_output"), "--drift-output"),
        data=_path(config.getoption("drift_data"), "--drift-data"),
        call_timeout=timeout,
        max_fault_rate=rate,
        simulated_clock=not config.getoption("drift_real_clock"),
        allow_leaks=allow_leaks,
    )


def _check_backend(spec: str) -> None:
    from drift_pipeline.memory.backends import backend_names

    if ":" in spec:
        module, _, cls = spec.partition(":")
        if module and cls and all(p.isidentifier() for p in [*module.split("."), cls]):
            return
        raise pytest.UsageError(f"--drift-backend {spec!r}: expected NAME or package.module:Class")
    known = backend_names()
    if spec not in known:
        raise pytest.UsageError(
            f"--drift-backend {spec!r}: unknown backend; registered: {', '.join(known)}, "
            "or package.module:Class"
        )


def _gate(text: str) -> str:
    from drift_pipeline.memory import Gate

    try:
        return str(Gate.parse(text))
    except ValueError as error:
        raise pytest.UsageError(f"--drift-gate: {error}") from None


def _known_metric(name: str, known: Mapping[str, Any], where: str) -> None:
    if name not in known:
        raise pytest.UsageError(
            f"{where}: unknown metric {name!r}; known: {', '.join(sorted(known))}"
        )


def _bounds(items: Sequence[str], option: str, known: Mapping[str, Any]) -> dict[str, float]:
    bounds: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not math.isfinite(number):
            raise pytest.UsageError(f"{option} {item!r}: expected METRIC=NUMBER, e.g. mvot=0.2")
        _known_metric(name.strip(), known, option)
        bounds[name.strip()] = number
    return bounds


def _thresholds(config: pytest.Config, known: Mapping[str, Any]) -> Thresholds:
    minimum: dict[str, float] = {}
    maximum: dict[str, float] = {}
    file = _path(config.getoption("drift_thresholds"), "--drift-thresholds", must_exist=True)
    if file is not None:
        data = _mapping_file(file, "--drift-thresholds")
        unknown = sorted(set(data) - {"min", "max"})
        if unknown:
            raise pytest.UsageError(
                f"{file}: unknown key(s) {', '.join(unknown)}; expected 'min' and 'max'"
            )
        for key, target in (("min", minimum), ("max", maximum)):
            section = data.get(key) or {}
            if not isinstance(section, dict):
                raise pytest.UsageError(f"{file}: '{key}' must map metric names to numbers")
            items = [f"{name}={value}" for name, value in section.items()]
            target.update(_bounds(items, f"{file} {key}", known))
    minimum.update(_bounds(config.getoption("drift_min"), "--drift-min", known))
    maximum.update(_bounds(config.getoption("drift_max"), "--drift-max", known))
    return Thresholds(minimum, maximum)


def _backend_config(text: str | None, backends: Sequence[str]) -> dict[str, dict[str, Any]]:
    from drift_pipeline.pipeline import REFERENCE_ARM

    if not text:
        return {}
    path = _path(text, "--drift-backend-config", must_exist=True)
    assert path is not None
    data = _mapping_file(path, "--drift-backend-config")
    if not all(isinstance(value, dict) for value in data.values()):
        raise pytest.UsageError(f"{path}: expected a mapping of backend name to options")
    # As drift run: a misspelt backend name would leave its backend on its defaults unsaid.
    run = list(dict.fromkeys([*backends, REFERENCE_ARM.backend]))
    for name in data:
        if name not in run:
            raise pytest.UsageError(
                f"{path}: {str(name)!r} names no backend of this run (backends run: "
                f"{', '.join(run)})"
            )
    return {str(name): dict(value) for name, value in data.items()}


def _mapping_file(path: Path, option: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        first = str(error).splitlines()[0]
        raise pytest.UsageError(f"{option} {path}: cannot read it: {first}") from None
    if not isinstance(data, dict):
        raise pytest.UsageError(f"{option} {path}: expected a mapping")
    return data


def _path(text: str | None, option: str, must_exist: bool = False) -> Path | None:
    if not text:
        return None
    path = Path(text).expanduser().resolve()
    if must_exist and not path.is_file():
        raise pytest.UsageError(f"{option} {text}: no such file")
    return path
