"""What the careful reader is told about each probe, computed from the world's tables."""

from __future__ import annotations

import pyarrow as pa

from drift_pipeline.evaluation import judge_all, reader_probe, with_reader_columns


def _probe(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "replicate": 0,
        "checkpoint": 4,
        "probe_id": "p1",
        "probe_type": "recall",
        "subtype": "fact",
        "polarity": "positive",
        "subject": "principal",
        "question": "Which city does Rhiannon live in now?",
        "answer": "Lisbon",
        "aliases": ["Lisbon"],
        "deprecated": [],
        "options": [],
        "correct_option": None,
        "default_option": None,
        "slot": "city",
        "evidence_terms": ["Lisbon"],
    }
    return {**base, **fields}


def _world(probes: list[dict[str, object]]) -> pa.Table:
    principal = {"entity_id": "principal", "name": "Rhiannon Price", "entity_type": "human"}
    profiles = pa.Table.from_pylist([{"replicate": 0, **principal}])
    truth = pa.Table.from_pylist(
        [
            {"replicate": 0, "slot": "city", "slot_kind": "functional", "value": "Lisbon"},
            {"replicate": 0, "slot": "city", "slot_kind": "functional", "value": "Porto"},
            {"replicate": 0, "slot": "habits", "slot_kind": "set", "value": "runs every morning"},
            # Another replicate's world: not this probe's candidates.
            {"replicate": 1, "slot": "city", "slot_kind": "functional", "value": "Tallinn"},
        ]
    )
    return with_reader_columns(pa.Table.from_pylist(probes), profiles, truth)


def test_candidates_names_and_slot_kind_come_from_the_world() -> None:
    row = _world([_probe(), _probe(probe_id="p2", slot="habits")]).to_pylist()
    assert row[0]["reader_names"] == ["Rhiannon Price", "Rhiannon"]
    assert row[0]["reader_others"] == [["Lisbon"], ["Porto"]]
    assert row[0]["reader_exclusive"] is True and row[1]["reader_exclusive"] is False
    view = reader_probe(row[0])
    assert {c.value: c.role for c in view.candidates} == {"Lisbon": "current", "Porto": "other"}


def test_another_value_of_the_slot_stated_later_is_read_as_the_answer() -> None:
    probes = _world([_probe()])
    context = "[2027-01-04] user: I live in Lisbon.\n[2027-06-01] user: I moved to Porto."
    # The world knows Porto is a value of the slot: the later move replaces Lisbon.
    assert judge_all(probes, {(0, "p1"): context})["correct"] == [False]
    # Without the world's columns Porto is not a candidate, and Lisbon would stand.
    bare = pa.Table.from_pylist([_probe()])
    assert judge_all(bare, {(0, "p1"): context})["correct"] == [True]


def test_views_are_kept_per_row_and_equal_a_fresh_build() -> None:
    from drift_pipeline.evaluation import _reader_probes

    row = _probe(reader_names=["Rhiannon"], reader_others=[["Porto"]], reader_exclusive=True)
    first = reader_probe(row)
    assert reader_probe(dict(row)) is first  # an equal row: the kept view
    assert first == _reader_probes._build_reader_probe(row)
    # Any field the view could depend on is part of the key, nested ones and types included.
    changed = [
        {**row, "question": "Which city does Rhiannon live in?"},
        {**row, "aliases": ["Lisbon", "Lisboa"]},
        {**row, "reader_others": [["Porto"], ["Faro"]]},
        {**row, "reader_exclusive": None},
        {
            **row,
            "probe_type": "action",
            "options": [{"text": "go", "terms": ["Lisbon"], "utility": 1}],
        },
        {
            **row,
            "probe_type": "action",
            "options": [{"text": "go", "terms": ["Porto"], "utility": 1}],
        },
    ]
    keys = {_reader_probes._row_key(r) for r in [row, *changed]}
    assert len(keys) == len(changed) + 1
    for other in changed:
        assert reader_probe(other) == _reader_probes._build_reader_probe(other)
    assert _reader_probes._row_key({"x": True}) != _reader_probes._row_key({"x": 1})
    # Rows that cannot be keyed safely are built every time, never kept.
    assert _reader_probes._row_key({**row, "extra": object()}) is None


def test_in_a_world_of_several_people_another_person_s_words_are_theirs() -> None:
    people = pa.Table.from_pylist(
        [
            {"replicate": 0, "entity_id": "rosa", "name": "Rosa Albescu", "entity_type": "human"},
            {"replicate": 0, "entity_id": "tomas", "name": "Tomas Lund", "entity_type": "human"},
            {"replicate": 0, "entity_id": "desk", "name": "Desk", "entity_type": "assistant_agent"},
        ]
    )
    truth = pa.Table.from_pylist(
        [
            {"replicate": 0, "slot": "city", "slot_kind": "functional", "value": "Lisbon"},
            {"replicate": 0, "slot": "city", "slot_kind": "functional", "value": "Porto"},
        ]
    )
    probes = pa.Table.from_pylist(
        [_probe(subject="rosa", question="Which city does Rosa live in now?")]
    )
    row = with_reader_columns(probes, people, truth).to_pylist()[0]
    assert row["reader_people"] == ["tomas", "Tomas Lund", "Tomas"]
    context = "[2027-01-04] rosa: I live in Lisbon now.\n[2027-01-06] tomas: I live in Porto now."
    [verdict] = judge_all(pa.Table.from_pylist([row]), {(0, "p1"): context})["correct"]
    assert verdict is True
    # A world of one person lists nobody else: its readings are what they always were.
    assert _world([_probe()]).column("reader_people").to_pylist() == [[]]
