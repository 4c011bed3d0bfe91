"""The labelled context set and the per-category scoring of readers on it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from drift_pipeline.evaluation import load_context_set, score_reader
from drift_pipeline.evaluation.reader import ReaderProbe, Reading
from drift_pipeline.textmatch import contains_any

REQUIRED_CATEGORIES = {
    "plain",
    "paraphrase",
    "vague",
    "hypothetical",
    "question",
    "third_party",
    "sarcasm",
    "negated",
    "retracted",
    "dated_supersession_ordered",
    "dated_supersession_reversed",
    "temporal_elsewhere",
    "generic_word",
    "mixture",
    "future_plan",
    "reported_past",
    "correction",
    "assistant_restates_or_corrected",
    "dated_supersession",
    "records",
    "long_chat",
}


def test_the_shipped_set_is_large_and_covers_every_required_category() -> None:
    items = load_context_set()
    assert len(items) >= 300
    counts = Counter(item.category for item in items)
    assert set(counts) >= REQUIRED_CATEGORIES
    labels = Counter(item.label for item in items)
    assert labels["accept"] >= 50 and labels["reject"] >= 50
    assert {item.kind for item in items} == {"recall", "negative", "revision", "temporal", "action"}


def test_the_careful_reader_meets_the_targets_on_the_shipped_set() -> None:
    report = score_reader(load_context_set())
    assert report.accuracy is not None and report.accuracy >= 0.90, report.render()
    assert report.false_accept_rate is not None and report.false_accept_rate <= 0.05


def _substring_reader(context: str, probe: ReaderProbe) -> Reading:
    """Substring presence, the reader the careful one replaces: credits any mention."""
    found = [c.value for c in probe.candidates if contains_any(context, c.phrases)]
    option = next(
        (c.option for c in probe.candidates if c.value in found and c.option is not None),
        probe.default_option,
    )
    polarity = ("yes" if found else "no") if probe.kind == "yes_no" else None
    current = tuple(found[:1])
    return Reading(
        current[0] if current else None, polarity, current, False, option, None, (), "substring"
    )


def test_the_scorer_reports_a_lenient_reader_per_category() -> None:
    report = score_reader(load_context_set(), _substring_reader, "substring")
    assert report.false_accept_rate is not None and report.false_accept_rate > 0.3
    rows = {row["category"]: row for row in report.categories()}
    assert rows["hypothetical"]["false_accepts"] >= 5
    assert rows["sarcasm"]["false_accepts"] >= 4
    assert "substring" in report.render() and report.to_dict()["items"] == len(report.outcomes)


def _write(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


GOOD = {
    "id": "a1",
    "category": "mine",
    "kind": "recall",
    "question": "Which city does Ana live in?",
    "reference": "Lisbon",
    "aliases": ["Lisbon"],
    "deprecated": [],
    "context": "user: I live in Lisbon.",
    "label": "accept",
}


def test_a_set_written_elsewhere_loads_and_scores(tmp_path: Path) -> None:
    second = {**GOOD, "id": "a2", "context": "user: Is Lisbon nice?", "label": "reject"}
    report = score_reader(load_context_set(_write(tmp_path, [GOOD, second])))
    assert report.accuracy == 1.0 and report.categories()[0]["items"] == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"context": None}, r"missing field\(s\) context"),
        ({"kind": "essay"}, "kind 'essay' is not one of"),
        ({"label": "maybe"}, "label 'maybe' is not accept or reject"),
        ({"aliases": "Lisbon"}, "aliases must be a list of strings"),
        ({"kind": "temporal", "question": "When was it?"}, "a temporal item needs evidence_terms"),
    ],
)
def test_a_bad_item_is_named_in_one_line(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    record = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=message) as error:
        load_context_set(_write(tmp_path, [record]))
    assert "set.jsonl:1" in str(error.value) and "\n" not in str(error.value)


def test_a_set_in_another_writer_s_shape_loads(tmp_path: Path) -> None:
    """Grouped deprecated values, a temporal item without evidence terms, options not given."""
    records = [
        {**GOOD, "id": "g1", "kind": "revision", "deprecated": [["Porto"], ["Faro"]]},
        {
            **GOOD,
            "id": "g2",
            "kind": "temporal",
            "subject": "Ana",
            "question": "When did Ana move to Lisbon?",
            "reference": "2027-03-01",
            "aliases": ["2027-03-01"],
            "context": "[2027-03-01] user: We moved to Lisbon today.",
        },
        {**GOOD, "id": "g3", "kind": "action", "others": [["Porto"]]},
    ]
    items = load_context_set(_write(tmp_path, records))
    assert [c.value for c in items[0].probe.candidates] == ["Lisbon", "Porto", "Faro"]
    assert items[1].probe.event_value == "Lisbon"
    assert [o.text for o in items[2].probe.options] == ["Lisbon", "Porto", "Ask first"]
    assert score_reader(items).accuracy == 1.0


def test_a_repeated_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'a1' is used twice"):
        load_context_set(_write(tmp_path, [GOOD, GOOD]))


def test_options_without_indices_take_the_reference_s_as_right(tmp_path: Path) -> None:
    item = {
        "id": "o1",
        "category": "action",
        "label": "accept",
        "kind": "action",
        "subject": "Priya",
        "question": "Which dish should you order for Priya?",
        "reference": "mushroom risotto",
        "aliases": ["risotto"],
        "deprecated": [],
        "context": "user: I'm off red meat now, risotto for me please",
        "options": [
            {"text": "lamb shank", "terms": ["lamb"], "utility": -1},
            {"text": "mushroom risotto", "terms": ["risotto"], "utility": 1},
            {"text": "ask first", "terms": [], "utility": 0},
        ],
    }
    path = tmp_path / "actions.jsonl"
    path.write_text(json.dumps(item) + "\n", encoding="utf-8")
    (loaded,) = load_context_set(path)
    assert (loaded.probe.correct_option, loaded.probe.default_option) == (1, 2)
    assert score_reader([loaded]).accuracy == 1.0


def test_the_sets_written_by_others_load_and_hold_the_reader_s_level() -> None:
    items = load_context_set(others=True)
    assert len(items) >= 1600
    assert len({item.id[:2] for item in items}) >= 11  # eleven sets' id prefixes
    report = score_reader(items)
    # Not the targets: a floor at the level measured when these sets were shipped, so that a
    # rule change that loses ground on other authors' text fails here.
    assert report.accuracy is not None and report.accuracy >= 0.87, report.render()
    assert report.false_accept_rate is not None and report.false_accept_rate <= 0.06
