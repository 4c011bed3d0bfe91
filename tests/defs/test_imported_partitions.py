"""Imported data as Dagster world partitions: the catalog takes ``PREFIX:PATH`` like drift run."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift_pipeline.keys import WorldKey
from drift_pipeline.orchestration.partitions import scenario_worlds
from drift_pipeline.orchestration.resources import ScenarioCatalog, catalog_paths

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sources"
SCENARIOS = Path(__file__).parents[2] / "scenarios"


def test_the_catalog_holds_scenarios_and_imported_worlds_side_by_side() -> None:
    catalog = ScenarioCatalog(
        paths=[str(SCENARIOS), f"locomo:{FIXTURES / 'locomo_small.json'}?midpoint=true"]
    )
    sources = catalog.scenarios()
    kinds = {s.id: s.kind for s in sources}
    assert kinds["locomo-conv-7"] == kinds["locomo-conv-8"] == "locomo"
    assert "scenario" in kinds.values()
    worlds = scenario_worlds(sources)
    assert WorldKey("locomo-conv-7", "long") in worlds
    loaded = catalog.load("locomo-conv-8")
    assert loaded.kind == "locomo" and loaded.checkpoints("long") == [1, 2]


def test_a_missing_imported_world_names_the_catalog() -> None:
    catalog = ScenarioCatalog(paths=[f"longmemeval:{FIXTURES / 'longmemeval_small.json'}"])
    assert catalog.load("longmemeval-e47becba").kind == "longmemeval"
    with pytest.raises(LookupError, match="no scenario with id 'locomo-conv-1'"):
        catalog.load("locomo-conv-1")


@pytest.mark.parametrize(
    ("value", "entries"),
    [
        ("locomo:/data/l.json", ["locomo:/data/l.json"]),
        (
            "a.yaml:longmemeval:/d/s.json?x=1:b.yaml",
            ["a.yaml", "longmemeval:/d/s.json?x=1", "b.yaml"],
        ),
        ("", []),
    ],
)
def test_the_environment_list_keeps_prefixes_with_their_paths(
    value: str, entries: list[str]
) -> None:
    assert catalog_paths(value) == entries


def test_a_run_via_dagster_names_imported_data_by_absolute_path_with_its_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from drift_pipeline.orchestration.launch import _absolute

    monkeypatch.chdir(FIXTURES)
    assert _absolute("locomo:./locomo_small.json?midpoint=true") == (
        f"locomo:{FIXTURES.resolve() / 'locomo_small.json'}?midpoint=true"
    )
    assert _absolute("longmemeval:longmemeval_small.json") == (
        f"longmemeval:{FIXTURES.resolve() / 'longmemeval_small.json'}"
    )
