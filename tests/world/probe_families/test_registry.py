"""The probe family registry: built-ins in order, lazy targets, entry points, clear errors."""

from __future__ import annotations

from pathlib import Path

import probe_family_example
import pytest

from drift_pipeline._lazy import RegistryError
from drift_pipeline.evaluation import METRICS
from drift_pipeline.world.probe_families import (
    ENTRY_POINT_GROUP,
    _registry,
    get_probe_family,
    probe_families,
    probe_family_names,
    register_probe_family,
)

MULTI_PEER = ("canary", "consistency", "attribution", "handoff")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The single-principal built-in families only (the example takes the canary's name)."""
    copy = _registry._FAMILIES.copy()
    for name in MULTI_PEER:
        copy.unregister(name)
    monkeypatch.setattr(_registry, "_FAMILIES", copy)


def test_the_built_in_families_in_generation_order() -> None:
    # The multi-peer families come last: their draws never move the others' probes.
    assert probe_family_names()[:7] == ("recall", "action", "revision", *MULTI_PEER)
    assert [family.name for family in probe_families()][:3] == ["recall", "action", "revision"]


def test_every_fed_metric_is_a_metric_of_the_suite() -> None:
    for family in probe_families():
        assert set(family.feeds) <= set(METRICS), family.name


def test_a_registered_family_is_imported_on_first_use(registry: None) -> None:
    register_probe_family("canary", "probe_family_example:CANARY")
    assert probe_family_names() == ("recall", "action", "revision", "canary")
    assert get_probe_family("canary") is probe_family_example.CANARY


def test_bad_registrations_are_refused_in_one_line(registry: None) -> None:
    with pytest.raises(RegistryError, match="probe family 'recall' is already registered to"):
        register_probe_family("recall", "probe_family_example:CANARY")
    with pytest.raises(RegistryError, match=r"is not 'package\.module:Name'"):
        register_probe_family("canary", "probe_family_example.CANARY")
    register_probe_family("canary", "probe_family_example:CANARY")
    register_probe_family("other", "probe_family_example:CANARY")
    with pytest.raises(RegistryError, match="is not a ProbeFamily named 'other'"):
        get_probe_family("other")
    with pytest.raises(KeyError, match="unknown probe family 'frontier'; registered: recall"):
        get_probe_family("frontier")


def test_an_installed_package_is_found_through_its_entry_point(
    registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installed distribution, as pip leaves it: metadata and entry points on sys.path.
    info = tmp_path / "drift_canary_family-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: drift-canary-family\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ncanary = probe_family_example:CANARY\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert probe_family_names() == ("recall", "action", "revision", "canary")
    assert get_probe_family("canary") is probe_family_example.CANARY
