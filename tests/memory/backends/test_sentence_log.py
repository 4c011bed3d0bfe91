"""The sentence log keeps every dated first-person user sentence and hands all of them over."""

from __future__ import annotations

from drift_pipeline.memory.backends import default_backend_names, get_backend_factory
from drift_pipeline.memory.backends.sentence_log import SentenceLogBackend
from drift_pipeline.tokens import count_tokens_lines

from ._sessions import agent, ask, chat, store_all, user

SESSIONS = [
    chat("2027-03-14", "I work at Acme Corp. The weather is lovely.", "Is Lisbon nice?"),
    chat("2027-05-09", "My sister moved to Lisbon.", "We moved to Porto last week!"),
]


def test_it_keeps_first_person_user_sentences_with_the_session_date_and_returns_all() -> None:
    backend = SentenceLogBackend()
    store_all(backend, SESSIONS)
    assert ask(backend, "where does the user work?").splitlines() == [
        "[2027-03-14] principal: I work at Acme Corp.",
        "[2027-05-09] principal: My sister moved to Lisbon.",
        "[2027-05-09] principal: We moved to Porto last week!",
    ]
    # The query changes nothing: the whole log is returned whatever is asked.
    assert ask(backend, "x") == ask(backend, "where does the user work?")


def test_assistant_turns_are_not_logged_and_lines_carry_the_session_date() -> None:
    backend = SentenceLogBackend()
    session = [
        user("I prefer tea.", "2027-06-01"),
        agent("I think you prefer coffee.", "2027-06-01"),
        user("I now live in Oslo.", "2027-06-02"),
    ]
    store_all(backend, [session])
    assert backend.snapshot().splitlines() == [
        "[2027-06-01] principal: I prefer tea.",
        "[2027-06-01] principal: I now live in Oslo.",
    ]
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())


def test_an_entity_sees_only_sessions_it_took_part_in() -> None:
    backend = SentenceLogBackend()
    store_all(
        backend,
        [chat("2027-03-14", "I work at Acme.", helper="planner"), chat("2027-03-15", "I run.")],
    )
    assert ask(backend, "q", entity="assistant") == "[2027-03-15] principal: I run."
    assert ask(backend, "q", entity="planner") == "[2027-03-14] principal: I work at Acme."
    assert ask(backend, "q", entity="stranger") == ""


def test_it_is_a_default_arm_by_name() -> None:
    assert "sentence_log" in default_backend_names()
    assert get_backend_factory("sentence_log").inner is SentenceLogBackend  # type: ignore[attr-defined]


def test_a_read_between_sessions_then_after_more_sessions_returns_the_whole_log() -> None:
    # Reads join only what arrived since the last one; what they return is still every line.
    backend = SentenceLogBackend()
    store_all(backend, SESSIONS[:1])
    assert ask(backend, "x") == "[2027-03-14] principal: I work at Acme Corp."
    store_all(backend, SESSIONS[1:])
    assert ask(backend, "x") == backend.snapshot()
    assert ask(backend, "x").count("\n") == 2
