"""The metric registry: the suite's metrics described once, views, errors, entry points."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from metric_registry import EXAMPLE_MODULE, example_importable, install_example, registered

from drift_pipeline._lazy import RegistryError
from drift_pipeline.evaluation import (
    METRICS,
    MetricSpec,
    _metric_registry,
    discover_metrics,
    metric_spec,
    metric_specs,
    register_metric,
    unregister_metric,
)


def _spec(name: str = "example_rate", **changes: object) -> MetricSpec:
    spec = MetricSpec(
        name=name,
        label="Example",
        unit="share",
        direction="higher",
        description="An example rate",
        compute=f"{EXAMPLE_MODULE}:recall_accuracy",
    )
    return replace(spec, **changes)


def _names(view: str | None = None) -> list[str]:
    return [spec.name for spec in metric_specs(view)]  # type: ignore[arg-type]


# --- the suite's metrics, as the reports have always shown them --------------------------------


def test_suite_metrics_are_registered_once_in_row_order() -> None:
    suite = [spec for spec in metric_specs() if spec.name in METRICS]
    assert [spec.name for spec in suite] == list(METRICS)
    assert all(spec.description == METRICS[spec.name] for spec in suite)
    assert all(spec.compute is None for spec in suite)


def test_views_give_the_reports_their_columns() -> None:
    # Privacy is not a headline column: the leaderboard adds it beside DRIFT-C where a canary
    # measured it (spec §7.5: reported, never inside DRIFT-C).
    capability = ["mvot", "selectivity", "revision_accuracy", "action_alignment", "tes", "lps"]
    composite = ["drift_c", "drift_c_lift", "drift_e"]
    peers = ["consistency", "consistency_agreement", "attribution", "handoff_sessions"]
    headline = [*composite, *capability]
    assert _names("headline") == headline
    assert [metric_spec(n).label for n in headline] == [
        "DRIFT-C",
        "Lift",
        "DRIFT-E",
        "MVOT",
        "Select.",
        "Revision",
        "Action",
        "TES",
        "LPS",
    ]
    assert _names("json") == [*capability, "privacy", *peers, *composite]
    assert _names("compare") == [*composite, *capability, "read_ms_p99", "storage_per_session"]
    assert _names("metadata") == [
        *capability,
        *composite,
        "privacy",
        *peers,
        "storage_per_session",
        "token_cost_per_session",
        *(f"{kind}_ms_p{p}" for kind in ("read", "write") for p in (50, 95, 99)),
    ]
    assert [s.name for s in metric_specs() if s.null_when_undefined] == ["privacy", *peers]
    assert [s.name for s in metric_specs() if s.geometric] == ["tes"]


def test_a_view_orders_by_section_then_registration() -> None:
    example_a = _spec("example_a", section="capability", headline=True)
    example_b = _spec("example_b", section="composite", headline=True, json=True)
    example_c = _spec("example_c", headline=True, json=True)
    with registered(example_a, example_b, example_c):
        headline, json = _names("headline"), _names("json")
    # Each joins the end of its section; one of no section follows the suite's.
    assert headline == [
        "drift_c",
        "drift_c_lift",
        "drift_e",
        "example_b",
        "mvot",
        "selectivity",
        "revision_accuracy",
        "action_alignment",
        "tes",
        "lps",
        "example_a",
        "example_c",
    ]
    assert json[-3:] == ["drift_e", "example_b", "example_c"]


# --- registering --------------------------------------------------------------------------------


def test_a_registered_metric_follows_the_suite_and_goes_away() -> None:
    spec = _spec(headline=True)
    with registered(spec):
        assert metric_spec("example_rate") is spec
        assert _names()[-1] == "example_rate"
        assert _names("headline")[-1] == "example_rate"
        assert "example_rate" not in _names("json")
    assert "example_rate" not in _names()


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"metric 'mvot' is already registered; pick another name"):
        register_metric(_spec("mvot"))
    with (
        registered(_spec()),
        pytest.raises(ValueError, match=r"metric 'example_rate' is already registered; pick"),
    ):
        register_metric(_spec(label="Other"))


def test_replacing_needs_a_registered_name_and_keeps_the_suite_computing() -> None:
    with pytest.raises(ValueError, match="'example_rate' is not registered; nothing to replace"):
        register_metric(_spec(), replace=True)
    with pytest.raises(ValueError, match="'tes' is computed by the suite; compute must be None"):
        register_metric(_spec("tes"), replace=True)
    with pytest.raises(ValueError, match=r"'example_rate' has no compute"):
        register_metric(_spec(compute=None))


def test_suite_metrics_cannot_be_removed_and_unknown_names_are_named() -> None:
    with pytest.raises(ValueError, match="'lps' is one of the suite's own"):
        unregister_metric("lps")
    with pytest.raises(KeyError, match="unknown metric 'nope'; registered: mvot, mvot_skipped"):
        metric_spec("nope")
    with pytest.raises(KeyError, match="unknown metric 'nope'"):
        unregister_metric("nope")
    with pytest.raises(ValueError, match="unknown metric view 'table'; views: headline, json"):
        metric_specs("table")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Bad-Name"}, "'Bad-Name': name must be lowercase"),
        ({"label": ""}, "label must be one non-empty line"),
        ({"description": "two\nlines"}, "description must be one non-empty line"),
        ({"direction": "up"}, "direction 'up' is not one of higher, lower, neutral"),
        ({"headline": 1}, "headline must be True or False"),
        ({"json": "yes"}, "json must be True or False"),
        ({"section": "speed"}, "section 'speed' is not one of composite, capability"),
        ({"digits": 9}, "digits must be an int from 0 to 6"),
        ({"compute": "no_colon"}, "compute 'no_colon' is not 'package.module:function'"),
        ({"compute": 42}, "compute must be 'module:function' or a callable"),
    ],
)
def test_malformed_attributes_name_the_metric_and_the_attribute(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _spec(**changes)


def test_unknown_attributes_are_refused() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        MetricSpec(  # type: ignore[call-arg]
            name="x", label="X", unit="share", direction="higher", description="X", colour="red"
        )


def test_a_spec_is_declared_by_keyword() -> None:
    with pytest.raises(TypeError, match="positional"):
        MetricSpec("x", "X", "share", "higher", "X")  # type: ignore[misc]


# --- computations are imported when first needed ------------------------------------------------


def test_compute_targets_resolve_lazily_with_clear_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example_importable(monkeypatch)
    monkeypatch.delitem(sys.modules, EXAMPLE_MODULE, raising=False)
    spec = _spec()
    assert EXAMPLE_MODULE not in sys.modules  # describing a metric imports nothing
    assert spec.computation().__name__ == "recall_accuracy"
    assert EXAMPLE_MODULE in sys.modules
    with pytest.raises(
        RegistryError,
        match="metric 'example_rate' compute: cannot import module 'no_such_module'",
    ):
        _spec(compute="no_such_module:f").computation()
    with pytest.raises(
        RegistryError, match=f"module '{EXAMPLE_MODULE}' has no attribute 'missing'"
    ):
        _spec(compute=f"{EXAMPLE_MODULE}:missing").computation()
    with pytest.raises(RegistryError, match="is not callable"):
        _spec(compute=f"{EXAMPLE_MODULE}:RECALL_ACCURACY").computation()
    with pytest.raises(ValueError, match="'mvot' is computed by the suite"):
        metric_spec("mvot").computation()


# --- installed packages -----------------------------------------------------------------------


def test_an_installed_package_registers_its_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = install_example(tmp_path, monkeypatch)
    try:
        added = discover_metrics()
        assert sorted(spec.name for spec in added) == sorted(names)
        assert metric_spec("recall_accuracy").label == "Recall"
        assert _names()[-2:] == ["empty_reads", "recall_accuracy"]  # entry points by name
        assert discover_metrics() == ()  # a second scan adds nothing
    finally:
        for name in names:
            unregister_metric(name)


def _site_with_entry(site: Path, entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = site / "broken_metrics-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-metrics\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[drift_pipeline.metrics]\n{entry}\n")
    (site / "broken_metrics.py").write_text(
        "from drift_pipeline.evaluation import metric_spec\n"
        "NOT_A_SPEC = 3\n"
        "MVOT = metric_spec('mvot')\n"
    )
    monkeypatch.delitem(sys.modules, "broken_metrics", raising=False)
    monkeypatch.syspath_prepend(str(site))


@pytest.mark.parametrize(
    ("entry", "error", "message"),
    [
        ("gone = no_such_package:SPEC", RegistryError, "entry point gone = no_such_package:SPEC"),
        ("three = broken_metrics:NOT_A_SPEC", RegistryError, "is a int, not a MetricSpec"),
        ("other = broken_metrics:MVOT", RegistryError, "names metric 'mvot'; the names must match"),
        ("mvot = broken_metrics:MVOT", RegistryError, "'mvot' is already registered by code$"),
    ],
)
def test_broken_entry_points_name_themselves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entry: str,
    error: type[Exception],
    message: str,
) -> None:
    # A registry of its own: a broken package stays listed (and failing) in the one it joins.
    monkeypatch.setattr(_metric_registry, "_METRICS", _metric_registry._METRICS.copy())
    _site_with_entry(tmp_path, entry, monkeypatch)
    with pytest.raises(error, match=message):
        discover_metrics()
