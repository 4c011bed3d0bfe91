"""The LongMemEval importer on a small file in LongMemEval's format."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.sources import SourceError, TableSource, open_source, write_worlds
from drift_pipeline.sources.replays.longmemeval import open_longmemeval, parse_longmemeval_date

LONGMEMEVAL_FILE = Path(__file__).parents[1] / "fixtures" / "sources" / "longmemeval_small.json"
"""Three instances: an answer session among fillers, a knowledge update in an unsorted
(oracle-style) haystack with a session after the question and a numeric answer, and an
abstention question with a dangling evidence id."""


def _sources() -> dict[str, TableSource]:
    return {s.id: s for s in open_longmemeval(str(LONGMEMEVAL_FILE))}


def _probe(source: TableSource) -> dict[str, Any]:
    rows = source.tables("long")["probes"].to_pylist()
    assert len(rows) == 1
    return rows[0]


def test_each_instance_is_one_world_asked_once_after_its_history() -> None:
    sources = _sources()
    assert sorted(sources) == [
        "longmemeval-6a1eabeb",
        "longmemeval-e47becba",
        "longmemeval-gpt4_2655b836_abs",
    ]
    plain = sources["longmemeval-e47becba"]
    probe = _probe(plain)
    assert (probe["probe_type"], probe["subtype"], probe["checkpoint"]) == (
        "recall",
        "single_session_user",
        3,
    )
    assert probe["question"] == "What degree did I graduate with? (asked on 2023-05-30)"
    assert probe["evidence_sessions"] == [1] and probe["aliases"] == ["Business Administration"]
    schedule = plain.tables("long")["event_schedules"].to_pylist()
    assert [s["tier"] for s in schedule] == ["noise", "signal", "noise"]
    turns = plain.tables("long")["transcripts"].to_pylist()
    assert [(t["speaker"], t["role"]) for t in turns[:2]] == [
        ("user", "user"),
        ("assistant", "assistant"),
    ]
    assert [t["label_kind"] for t in turns if t["session_index"] == 1] == ["evidence", "dialogue"]
    assert plain.not_applicable == {"action_alignment", "privacy", "selectivity", "drift_c"}


def test_sessions_are_put_in_date_order_and_later_ones_left_out() -> None:
    update = _sources()["longmemeval-6a1eabeb"]
    schedule = update.tables("long")["event_schedules"].to_pylist()
    assert [s["sim_time"] for s in schedule] == [
        datetime(2023, 6, 1, 8, 30),
        datetime(2023, 7, 2, 12, 0),
    ]
    contents = update.tables("long")["transcripts"].column("content").to_pylist()
    assert contents[0].startswith("I own 3 bikes")
    assert not any("LATE-SESSION" in c for c in contents)
    probe = _probe(update)
    assert (probe["probe_type"], probe["subtype"], probe["answer"]) == (
        "revision",
        "knowledge_update",
        "4",
    )
    assert probe["evidence_sessions"] == [0, 1]


def test_an_abstention_question_is_a_negative_probe() -> None:
    probe = _probe(_sources()["longmemeval-gpt4_2655b836_abs"])
    assert (probe["probe_type"], probe["subtype"], probe["polarity"]) == (
        "recall",
        "abstention",
        "negative",
    )
    assert probe["aliases"] == [] and probe["slot"] == "longmemeval/temporal_reasoning"
    assert probe["evidence_sessions"] == [0]  # the dangling id is left out


def test_dates_parse_with_or_without_the_weekday() -> None:
    assert parse_longmemeval_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40)
    assert parse_longmemeval_date("2023/05/30 23:40") == datetime(2023, 5, 30, 23, 40)
    for bad in ("30 May 2023", "2023/02/30 (Thu) 10:00"):
        with pytest.raises(ValueError):
            parse_longmemeval_date(bad)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[0].pop("question"), "e47becba: has no 'question'"),
        (lambda d: d[1].update(answer=[4]), "6a1eabeb: field 'answer' is list"),
        (lambda d: d[1].update(answer=True), "6a1eabeb: field 'answer' is bool"),
        (lambda d: d[0].update(question_type="trivia"), "question_type 'trivia' is not one of"),
        (
            lambda d: d[0].update(question_date="yesterday"),
            "e47becba: field 'question_date': 'yesterday' is not a date",
        ),
        (
            lambda d: d[0]["haystack_dates"].__setitem__(1, "2023-05-22"),
            "e47becba: field 'haystack_dates[1]'",
        ),
        (lambda d: d[0]["haystack_dates"].pop(), "have different lengths (3, 2, 3)"),
        (
            lambda d: d[0]["haystack_sessions"][2][1].update(role="system"),
            "e47becba haystack_sessions[2][1]: role 'system' is neither",
        ),
        (
            lambda d: d[0]["haystack_sessions"][0][0].pop("content"),
            "e47becba haystack_sessions[0][0]: has no 'content'",
        ),
        (lambda d: d[2].update(question_id="e47becba"), "is used by more than one record"),
        (
            lambda d: d[0].update(question_date="2020/01/01 (Wed) 00:00"),
            "no haystack session dated at or before its question_date",
        ),
    ],
)
def test_malformed_instances_are_one_line_errors(tmp_path: Path, change: Any, message: str) -> None:
    data = json.loads(LONGMEMEVAL_FILE.read_text())
    change(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SourceError) as caught:
        open_source(f"longmemeval:{path}")
    assert len(caught.value.lines()) == 1 and "\n" not in str(caught.value)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_importing_the_same_file_twice_gives_byte_identical_worlds(tmp_path: Path) -> None:
    for out in ("a", "b"):
        write_worlds(open_source(f"longmemeval:{LONGMEMEVAL_FILE}"), tmp_path / out)
    first = tmp_path / "a"
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len(files) == 3 * 6
    for name in files:
        assert (first / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
