"""The sanity arms do exactly their one trivial thing (that the metrics must rank low)."""

from __future__ import annotations

from drift_pipeline.memory.backends import (
    backend_names,
    default_backend_names,
    get_backend_factory,
)
from drift_pipeline.memory.backends.sanity import (
    OUTDATED_TAG,
    ExamOnlyBackend,
    KeywordLinesBackend,
    RecencyBufferBackend,
    SessionDatesBackend,
    TaggedBufferBackend,
)

from ._sessions import ask, chat, store_all

SESSIONS = [
    chat("2027-03-14", "I work at Acme Corp.", "I always take the train."),
    chat("2027-04-02", "Is Lisbon nice in spring?"),
    chat("2027-05-09", "I prefer tea over coffee.", "The meeting moved to Friday."),
]


def test_the_recency_buffer_keeps_the_last_user_lines_and_returns_them_all() -> None:
    backend = RecencyBufferBackend(lines=3)
    store_all(backend, SESSIONS)
    context = ask(backend, "anything at all")
    assert context.splitlines() == [
        "[2027-04-02] principal: Is Lisbon nice in spring?",
        "[2027-05-09] principal: I prefer tea over coffee.",
        "[2027-05-09] principal: The meeting moved to Friday.",
    ]
    assert "Thanks" not in backend.snapshot() and backend.storage_tokens() > 0


def test_the_buffer_snapshot_holds_every_line_some_entity_still_reads() -> None:
    # "travel" attends once, early: its buffer keeps that line after the others' moved on.
    backend = RecencyBufferBackend(lines=2)
    store_all(backend, [chat("2027-03-01", "I booked Porto.", helper="travel"), *SESSIONS])
    early = "[2027-03-01] principal: I booked Porto."
    assert ask(backend, "q", entity="travel") == early
    assert early not in ask(backend, "q", entity="principal")  # its own buffer moved on
    assert backend.snapshot().splitlines()[0] == early


def test_the_tagged_buffer_tags_the_older_half() -> None:
    backend = TaggedBufferBackend(lines=4)
    store_all(backend, SESSIONS)
    lines = ask(backend, "q").splitlines()
    assert [line.endswith(OUTDATED_TAG) for line in lines] == [True, True, False, False]


def test_keyword_lines_keep_first_person_preference_lines_only() -> None:
    backend = KeywordLinesBackend()
    store_all(backend, SESSIONS)
    assert ask(backend, "q").splitlines() == [
        "[2027-03-14] principal: I always take the train.",
        "[2027-05-09] principal: I prefer tea over coffee.",
    ]


def test_session_dates_keep_nothing_but_dates() -> None:
    backend = SessionDatesBackend()
    store_all(backend, SESSIONS)
    context = ask(backend, "q")
    assert context.splitlines()[0] == "[2027-03-14] session with assistant, principal"
    assert "Acme" not in context and len(context.splitlines()) == 3


def test_exam_only_hands_its_sentence_log_to_third_person_questions_only() -> None:
    backend = ExamOnlyBackend()
    store_all(backend, SESSIONS)
    log = ask(backend, "Where does the principal work?")
    assert log.splitlines() == [
        "[2027-03-14] principal: I work at Acme Corp.",
        "[2027-03-14] principal: I always take the train.",
        "[2027-05-09] principal: I prefer tea over coffee.",
    ]
    assert ask(backend, "I need a train to Porto tomorrow.") == ""  # the agent's own read
    assert backend.snapshot() == log


def test_they_are_registered_but_not_default_arms() -> None:
    names = {"recency_buffer", "tagged_buffer", "keyword_lines", "session_dates", "exam_only"}
    assert names <= set(backend_names())
    assert not names & set(default_backend_names())
    assert get_backend_factory("session_dates").inner is SessionDatesBackend  # type: ignore[attr-defined]
