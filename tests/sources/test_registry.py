"""The source registry: PREFIX:PATH dispatches to an importer, a plain path is a scenario."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import COMMUTER, HABIT_LOOP, write_entry_point, write_scenario

from drift_pipeline._lazy import Registry
from drift_pipeline.sources import (
    SOURCE_GROUP,
    ScenarioSource,
    SourceError,
    TableSource,
    imported_source_name,
    open_source,
    open_sources,
    register_source,
    source_prefixes,
    unregister_source,
)
from drift_pipeline.sources import _registry as registry_module

from .conftest import EXAMPLE_FILE, EXAMPLE_TARGET


def test_a_plain_path_or_the_scenario_prefix_is_a_scenario_source(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, HABIT_LOOP)
    for text in (str(path), f"scenario:{path}"):
        (source,) = open_source(text)
        assert isinstance(source, ScenarioSource)
        assert source.id == "test-habit-loop-c" and source.origin == str(path)


def test_a_folder_holds_every_scenario_in_it(tmp_path: Path) -> None:
    write_scenario(tmp_path, HABIT_LOOP)
    write_scenario(tmp_path, COMMUTER)
    assert [s.id for s in open_source(str(tmp_path))] == ["test-commuter-a", "test-habit-loop-c"]


def test_a_prefix_dispatches_to_its_importer(example: str) -> None:
    (source,) = open_source(example)
    assert isinstance(source, TableSource)
    assert (source.kind, source.id, source.horizons) == ("example", "example-chat-001", ("short",))
    assert "example" in source_prefixes() and "scenario" in source_prefixes()


def test_an_unknown_prefix_is_one_line_listing_the_known_ones(example: str) -> None:
    with pytest.raises(SourceError) as caught:
        open_source("lcm:data/locomo10.json")
    assert caught.value.lines() == [
        "source 'lcm:data/locomo10.json': unknown prefix 'lcm' (known: braincore, example, "
        "locomo, longmemeval, scenario; a plain path is a scenario file)"
    ]


def test_a_missing_file_is_one_line(example: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(SourceError) as caught:
        open_source(f"example:{missing}")
    assert caught.value.lines() == [f"source 'example:{missing}': no such file or folder {missing}"]
    with pytest.raises(SourceError, match="cannot read file"):
        open_source(str(tmp_path / "nowhere.yaml"))


def test_an_importer_that_fails_is_one_line_naming_the_source(tmp_path: Path) -> None:
    def broken(path: str) -> TableSource:
        raise ValueError(f"line 3 of {path} is not JSON\nExpecting value")

    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n", encoding="utf-8")
    register_source("broken", broken)
    try:
        with pytest.raises(SourceError) as caught:
            open_source(f"broken:{bad}")
    finally:
        unregister_source("broken")
    assert caught.value.lines() == [f"source 'broken:{bad}': line 3 of {bad} is not JSON"]


def test_every_problem_is_reported_and_ids_stay_unique(tmp_path: Path) -> None:
    good = write_scenario(tmp_path / "a", HABIT_LOOP)
    again = write_scenario(tmp_path / "b", HABIT_LOOP)
    with pytest.raises(SourceError, match="'test-habit-loop-c' is used by more than one file"):
        open_sources([good, again])
    with pytest.raises(SourceError) as caught:
        open_sources([str(good), "nope:x", str(tmp_path / "missing.yaml")])
    assert len(caught.value.lines()) == 2
    assert "unknown prefix 'nope'" in caught.value.lines()[0]


def test_registration_rules() -> None:
    with pytest.raises(ValueError, match="use lower-case"):
        register_source("X", EXAMPLE_TARGET)
    with pytest.raises(ValueError, match="use lower-case"):
        register_source("c", EXAMPLE_TARGET)  # one letter reads as a drive letter
    register_source("example", EXAMPLE_TARGET)
    try:
        register_source("example", EXAMPLE_TARGET)  # the same target again is harmless
        with pytest.raises(ValueError, match="source 'example' is already registered to"):
            register_source("example", "elsewhere:open")
    finally:
        unregister_source("example")


def test_a_registration_is_imported_only_when_used(tmp_path: Path) -> None:
    register_source("ghost", "no_such_package.importer:open_ghost")
    try:
        assert "ghost" in source_prefixes()  # registering imported nothing
        with pytest.raises(SourceError, match=r"cannot import module 'no_such_package\.importer'"):
            open_source(f"ghost:{EXAMPLE_FILE}")
    finally:
        unregister_source("ghost")


def test_an_installed_package_registers_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh registry, so the entry points are read after the package is "installed".
    fresh = Registry("source", SOURCE_GROUP, registry_module._loader)
    fresh.register("scenario", "drift_pipeline.sources._registry:open_scenarios")
    monkeypatch.setattr(registry_module, "_SOURCES", fresh)
    write_entry_point(tmp_path, SOURCE_GROUP, "installed", EXAMPLE_TARGET)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert source_prefixes() == ["installed", "scenario"]
    (source,) = open_source(f"installed:{EXAMPLE_FILE}")
    assert source.id == "example-chat-001"


def test_imported_source_names_are_told_from_scenario_paths(
    example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert imported_source_name("example:data/chat.jsonl") == ("example", "data/chat.jsonl")
    assert imported_source_name("braincore:bc.jsonl") == ("braincore", "bc.jsonl")
    assert imported_source_name("scenario:scenarios/") is None
    assert imported_source_name("nosuch:x.json") is None
    assert imported_source_name("scenarios/ua.yaml") is None
    monkeypatch.chdir(tmp_path)
    assert imported_source_name("example:odd.yaml") == ("example", "odd.yaml")
    Path("example:odd.yaml").write_text("")  # an existing file is a scenario path, colon or not
    assert imported_source_name("example:odd.yaml") is None
