"""Imported worlds: rows conformed to the world tables, evidence audited, written like any world."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.pipeline import world_is_current
from drift_pipeline.sources import SourceError, TableSource, write_worlds
from drift_pipeline.storage import PROBES, WORLD_TABLES, StorageRoot
from drift_pipeline.world import world_manifest_path

from .conftest import EXAMPLE_FILE
from .example_importer import open_example


def _world(**changes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """A minimal valid world (two sessions, one probe) with some tables replaced."""
    world: dict[str, list[dict[str, Any]]] = {
        "latent_profiles": [
            {
                "entity_id": "u",
                "entity_type": "human",
                "name": "u",
                "stable_attributes": "{}",
                "initial_state": "{}",
            }
        ],
        "event_schedules": [
            {
                "session_index": i,
                "sim_time": f"2024-01-0{i + 1}T10:00:00",
                "tier": "signal",
                "participants": ["u", "a"],
                "pattern": "dialogue",
            }
            for i in range(2)
        ],
        "transcripts": [
            {
                "session_index": i,
                "turn_index": 0,
                "speaker": "u",
                "role": "user",
                "content": f"I live in Town{i}.",
                "label_kind": "event",
            }
            for i in range(2)
        ],
        "ground_truth": [],
        "probes": [
            {
                "checkpoint": 2,
                "probe_id": "p1",
                "probe_type": "recall",
                "subtype": "fact",
                "asker": "a",
                "subject": "u",
                "question": "Where does u live?",
                "answer": "Town1",
                "evidence_sessions": [1],
                "polarity": "positive",
                "slot": "home_city",
            }
        ],
    }
    world.update(changes)
    return world


def _source(world: dict[str, list[dict[str, Any]]]) -> TableSource:
    return TableSource(
        kind="test",
        source_id="tiny",
        version="1",
        content_hash="0" * 64,
        origin="tiny.jsonl",
        audit="test rows",
        worlds={"short": world},
    )


def test_the_example_dataset_becomes_five_tables() -> None:
    source = open_example(str(EXAMPLE_FILE))
    tables = source.tables("short")
    assert [t.name for t in WORLD_TABLES] == list(tables)
    assert all(tables[t.name].schema == t.schema for t in WORLD_TABLES)
    assert (source.replicates, source.sessions("short")) == (1, 6)
    assert source.checkpoints("short") == [3, 6]
    schedule = tables["event_schedules"].to_pylist()
    assert [s["session_id"] for s in schedule][:2] == ["short-r0-s00000", "short-r0-s00001"]
    assert [s["n_turns"] for s in schedule] == [2] * 6
    turns = tables["transcripts"].to_pylist()
    assert turns[0]["sim_time"] == schedule[0]["sim_time"]
    probes = {p["probe_id"]: p for p in tables["probes"].to_pylist()}
    assert probes["q-city-6"]["deprecated"] == ["Lisbon"] and probes["q-city-6"]["options"] == []
    truth = [r for r in tables["ground_truth"].to_pylist() if r["fact_id"] == "f-city"]
    assert [(r["checkpoint"], r["current"], r["valid_to"]) for r in truth] == [
        (3, True, None),
        (6, False, 4),
    ]
    assert source.manifest_entry()["source"] == "example"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"transcripts": [{"session_index": 0, "turn_index": 0, "speaker": "u"}]},
            "tiny.jsonl: transcripts row 0 has no 'role'",
        ),
        (
            {"memory": []},
            "tiny.jsonl: 'memory' is not a world table",
        ),
        (
            {"latent_profiles": [{"entity_id": "u", "colour": "blue"}]},
            "tiny.jsonl: latent_profiles row 0 has no 'entity_type'",
        ),
        (
            {"event_schedules": []},
            "tiny.jsonl: horizon short has no sessions",
        ),
        (
            {"ground_truth": [{"checkpoint": "two"}]},
            "tiny.jsonl: ground_truth row 0 has no 'fact_id'",
        ),
    ],
)
def test_rows_that_do_not_fit_are_one_line(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(SourceError) as caught:
        _source(_world(**changes))
    assert caught.value.lines() == [message]


@pytest.mark.parametrize(
    ("evidence", "why"),
    [
        ([], "names no evidence session"),
        ([2], "evidence session 2 is not before its checkpoint"),
        ([-1], "evidence session -1 is not in the schedule"),
    ],
)
def test_probes_whose_evidence_is_not_in_the_data_are_refused(
    evidence: list[int], why: str
) -> None:
    world = _world()
    world["probes"][0]["evidence_sessions"] = evidence
    with pytest.raises(SourceError) as caught:
        _source(world)
    assert caught.value.lines() == [f"tiny.jsonl: short probe 'p1' {why}"]


def test_an_imported_world_is_written_with_its_manifest(tmp_path: Path) -> None:
    source = _source(_world())
    assert not world_is_current(tmp_path, source, "short")
    (summary,) = write_worlds([source], tmp_path)
    assert (summary.sessions, summary.turns, summary.probes) == (2, 2, 1)
    root = StorageRoot.from_url(tmp_path)
    assert root.read_table(PROBES, source.world("short")).column("probe_id").to_pylist() == ["p1"]
    manifest = json.loads(root.read_text(world_manifest_path("tiny", "short")))
    assert manifest["source"] == "test" and manifest["scenario_sha256"] == "0" * 64
    assert world_is_current(tmp_path, source, "short")
    changed = TableSource(
        kind="test",
        source_id="tiny",
        version="2",
        content_hash="1" * 64,
        origin="tiny.jsonl",
        audit="test rows",
        worlds={"short": _world()},
    )
    assert not world_is_current(tmp_path, changed, "short")


def test_a_column_no_table_has_is_refused() -> None:
    world = _world()
    world["latent_profiles"][0]["colour"] = "blue"
    with pytest.raises(SourceError, match="latent_profiles row 0: no column 'colour'"):
        _source(world)


def test_a_value_of_the_wrong_type_names_the_table() -> None:
    world = _world()
    world["probes"][0]["checkpoint"] = "two"
    with pytest.raises(SourceError, match=r"tiny\.jsonl: probes does not fit its schema"):
        _source(world)
