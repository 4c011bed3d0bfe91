"""The LoCoMo importer on a small file in LoCoMo's format: mapping, irregular records, errors."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.sources import SourceError, TableSource, open_source, write_worlds
from drift_pipeline.sources.replays.locomo import (
    ADVERSARIAL_ANSWER,
    event_terms,
    evidence_sessions,
    open_locomo,
    parse_locomo_date,
    render_turn_text,
)

LOCOMO_FILE = Path(__file__).parents[1] / "fixtures" / "sources" / "locomo_small.json"
"""Two conversations: sessions keyed out of order, an orphan date key, an image turn, malformed
and dangling evidence ids, an integer answer, adversarial rows with and without an answer."""


def _by_id(sources: list[TableSource]) -> dict[str, TableSource]:
    return {s.id: s for s in sources}


def _probes(source: TableSource) -> dict[str, dict[str, Any]]:
    rows = source.tables("long")["probes"].to_pylist()
    return {row["probe_id"]: row for row in rows}


def test_each_conversation_is_one_world_with_its_sessions_turns_and_questions() -> None:
    sources = _by_id(open_locomo(str(LOCOMO_FILE)))
    assert sorted(sources) == ["locomo-conv-7", "locomo-conv-8"]
    first = sources["locomo-conv-7"]
    assert first.horizons == ("long",) and first.sessions("long") == 4
    assert first.checkpoints("long") == [4]
    tables = first.tables("long")
    assert tables["transcripts"].num_rows == 9
    subtypes = Counter(tables["probes"].column("subtype").to_pylist())
    assert subtypes == {
        "single_hop": 4,
        "temporal": 2,
        "multi_hop": 2,
        "open_domain": 1,
        "adversarial": 2,
    }
    assert first.kind == "locomo" and first.not_applicable >= {"drift_c", "revision_accuracy"}


def test_sessions_follow_their_numbers_and_dates_become_timestamps() -> None:
    source = _by_id(open_locomo(str(LOCOMO_FILE)))["locomo-conv-7"]
    schedule = source.tables("long")["event_schedules"].to_pylist()
    # session_10 is the first key of the file; it is the fourth session, and session_11's
    # orphan date key adds nothing.
    assert [row["sim_time"] for row in schedule] == [
        datetime(2023, 5, 8, 13, 56),
        datetime(2023, 5, 25, 19, 5),
        datetime(2023, 7, 12, 10, 30),
        datetime(2024, 2, 3, 9, 15),
    ]
    turns = source.tables("long")["transcripts"].to_pylist()
    assert next(t["content"] for t in turns if t["session_index"] == 3).startswith(
        "I finally adopted a greyhound"
    )
    # The dataset's event summary labels sessions for the harness only.
    assert [row["tier"] for row in schedule] == ["signal", "signal", "noise", "signal"]


def test_image_turns_are_rendered_as_locomo_renders_them() -> None:
    source = _by_id(open_locomo(str(LOCOMO_FILE)))["locomo-conv-7"]
    contents = source.tables("long")["transcripts"].column("content").to_pylist()
    assert "Here is my first bowl. and shared a photo of a blue ceramic bowl." in contents


def test_observations_and_summaries_never_reach_the_tables() -> None:
    text = LOCOMO_FILE.read_text()
    assert "OBSERVATION-ONLY" in text and "SUMMARY-ONLY" in text and "adopts Pixel" in text
    for source in open_locomo(str(LOCOMO_FILE)):
        for table in source.tables("long").values():
            dumped = json.dumps(table.to_pylist(), default=str)
            assert "OBSERVATION-ONLY" not in dumped and "SUMMARY-ONLY" not in dumped
            assert "adopts Pixel" not in dumped


def test_questions_become_probes_by_category() -> None:
    probes = _probes(_by_id(open_locomo(str(LOCOMO_FILE)))["locomo-conv-7"])
    marathon = probes["qa-0001"]
    assert marathon["subtype"] == "single_hop" and marathon["subject"] == "Ben"
    assert marathon["asker"] == "Ava" and marathon["evidence_sessions"] == [0, 1]
    assert probes["qa-0005"]["answer"] == "2023"  # an integer answer, as text
    assert probes["qa-0006"]["aliases"] == [
        "pottery, volunteering at the animal shelter",
        "pottery",
        "volunteering at the animal shelter",
    ]
    assert probes["qa-0007"]["aliases"] == ["Likely yes"]  # the rationale after ';' is left out
    adversarial = probes["qa-0009"]
    assert adversarial["polarity"] == "negative" and adversarial["aliases"] == ["cello"]
    assert adversarial["answer"] == ADVERSARIAL_ANSWER
    # A row with both answer and adversarial_answer is adversarial by its category.
    assert probes["qa-0010"]["answer"] == ADVERSARIAL_ANSWER
    assert all(p["checkpoint"] == 4 and p["probe_type"] == "recall" for p in probes.values())


def test_a_temporal_question_names_its_event_by_the_words_of_its_evidence() -> None:
    probes = _probes(_by_id(open_locomo(str(LOCOMO_FILE)))["locomo-conv-7"])
    assert probes["qa-0004"]["question"] == "When did Ben run the marathon?"
    assert probes["qa-0004"]["evidence_terms"] == ["marathon"]
    assert probes["qa-0005"]["evidence_terms"] == ["bowl"]
    # Other categories name values, not events.
    assert probes["qa-0001"]["evidence_terms"] == []


@pytest.mark.parametrize(
    ("question", "evidence", "terms"),
    [
        (
            "When did Caroline go to the LGBTQ support group?",
            ["I went to a LGBTQ support group yesterday and it was so powerful."],
            ["LGBTQ support group"],
        ),
        # A stem meets its forms; the speaker's name and time words are not the event.
        (
            "When did Melanie paint a sunrise in June?",
            ["Yeah, I painted that lake sunrise last year!"],
            ["painted", "sunrise"],
        ),
        (
            "When did Melanie's friend adopt a child?",
            ["My friend adopted a child last year."],
            ["friend adopted a child"],
        ),
        # Linking words are kept only between two of the question's words.
        (
            "When did Melanie run a charity race?",
            ["I ran a charity race for mental health last Saturday."],
            ["charity race"],
        ),
        ("When did Caroline go there?", ["We went camping."], []),
    ],
)
def test_event_terms_are_the_runs_of_question_words_in_the_evidence(
    question: str, evidence: list[str], terms: list[str]
) -> None:
    assert event_terms(question, evidence, ["Caroline", "Melanie"]) == terms


def test_a_caption_stays_on_the_line_of_its_turn() -> None:
    turn = {"text": "Good luck with work, see ya!\n\n", "blip_caption": "a photo of a couch"}
    assert render_turn_text(turn) == "Good luck with work, see ya! and shared a photo of a couch."


@pytest.mark.parametrize(
    ("evidence", "sessions", "unresolved"),
    [
        (["D1:1"], [0], []),
        (["D8:6; D2:1"], [1], ["D8:6; D2:1"]),
        (["D2:1 D1:1 D1:2"], [0, 1], []),
        (["D:2:1"], [1], []),
        (["D2:01"], [1], []),
        (["D"], [], ["D"]),
        ([], [], []),
        ("D1:2", [0], []),
    ],
)
def test_evidence_ids_are_read_leniently(
    evidence: object, sessions: list[int], unresolved: list[str]
) -> None:
    dialogue = {"D1:1": 0, "D1:2": 0, "D2:1": 1}
    assert evidence_sessions(evidence, dialogue) == (sessions, unresolved)


def test_a_question_without_resolvable_evidence_rests_on_every_session() -> None:
    probes = _probes(_by_id(open_locomo(str(LOCOMO_FILE)))["locomo-conv-7"])
    assert probes["qa-0008"]["evidence_sessions"] == [0, 1, 2, 3]
    assert probes["qa-0003"]["evidence_sessions"] == [3]  # "D:10:1" is D10:1


def test_the_midpoint_asks_first_half_questions_again() -> None:
    probes = _probes(_by_id(open_locomo(str(LOCOMO_FILE), midpoint=True))["locomo-conv-7"])
    middle = {pid for pid, p in probes.items() if p["checkpoint"] == 2}
    # Evidence wholly in sessions 0-1 (the first half of four): asked after session 2 as well.
    assert middle == {
        "qa-0000@mid",
        "qa-0001@mid",
        "qa-0004@mid",
        "qa-0005@mid",
        "qa-0006@mid",
        "qa-0010@mid",
    }
    assert sum(p["checkpoint"] == 4 for p in probes.values()) == 11


def test_dates_parse_in_locomo_form() -> None:
    assert parse_locomo_date("10:04 am on 19 October, 2023") == datetime(2023, 10, 19, 10, 4)
    with pytest.raises(ValueError):
        parse_locomo_date("2023-10-19")


def _broken(tmp_path: Path, change: Any) -> str:
    data = json.loads(LOCOMO_FILE.read_text())
    change(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[0]["qa"][2].pop("question"), "conv-7 qa[2]: has no 'question'"),
        (lambda d: d[0]["qa"][0].pop("answer"), "conv-7 qa[0]: has no 'answer'"),
        (lambda d: d[0]["qa"][0].update(answer=["a"]), "qa[0]: field 'answer' is list"),
        (lambda d: d[0]["qa"][0].update(category=7), "qa[0]: category 7 is not one of 1-5"),
        (lambda d: d[0]["qa"][0].update(category="4"), "field 'category' is str, expected int"),
        (
            lambda d: d[0]["conversation"].update(session_2_date_time="sometime in May"),
            "conv-7 conversation: field 'session_2_date_time' 'sometime in May' is not a date",
        ),
        (
            lambda d: d[0]["conversation"].pop("session_3_date_time"),
            "conv-7 conversation: has no 'session_3_date_time'",
        ),
        (
            lambda d: d[0]["conversation"]["session_1"][0].pop("text"),
            "conv-7 conversation session_1[0]: has no 'text'",
        ),
        (
            lambda d: d[0]["conversation"]["session_1"][0].update(speaker="Zed"),
            "speaker 'Zed' is neither 'Ava' nor 'Ben'",
        ),
        (lambda d: d[1].pop("sample_id"), "record 1: has no 'sample_id'"),
        (lambda d: d[1].update(sample_id="conv-7"), "sample_id 'locomo-conv-7' is used by"),
        (
            lambda d: d[1]["conversation"].pop("speaker_b"),
            "conv-8 conversation: has no 'speaker_b'",
        ),
    ],
)
def test_malformed_records_are_one_line_errors(tmp_path: Path, change: Any, message: str) -> None:
    path = _broken(tmp_path, change)
    with pytest.raises(SourceError) as caught:
        open_source(f"locomo:{path}")
    assert len(caught.value.lines()) == 1 and "\n" not in str(caught.value)
    assert message in str(caught.value) and path in str(caught.value)


@pytest.mark.parametrize(("text", "what"), [("{}", "non-empty JSON array"), ("[1", "invalid JSON")])
def test_a_file_that_is_not_locomo_is_one_line(tmp_path: Path, text: str, what: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(SourceError, match=what):
        open_source(f"locomo:{path}")


def test_importing_the_same_file_twice_gives_byte_identical_worlds(tmp_path: Path) -> None:
    for out in ("a", "b"):
        write_worlds(open_source(f"locomo:{LOCOMO_FILE}"), tmp_path / out)
    files = sorted(
        p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file()
    )
    assert len(files) == 2 * 6  # five tables and a manifest per conversation
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
