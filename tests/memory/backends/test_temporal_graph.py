from __future__ import annotations

from drift_pipeline.memory.backends import SUPERSEDED_MARKER, TemporalGraphBackend
from drift_pipeline.memory.backends._extract import Operation

from ._sessions import NOISE, ask, chat, random_history, store_all, store_counting


def _career() -> TemporalGraphBackend:
    backend = TemporalGraphBackend()
    store_all(
        backend,
        [
            chat("2027-01-10", "I work at Acme Corp.", "I'm vegetarian."),
            chat("2027-03-01", "I joined Globex last week."),
            chat("2027-06-15", "I started at Initech!", "I'm no longer vegetarian."),
        ],
    )
    return backend


def test_updates_close_the_old_fact_and_keep_it_with_its_interval() -> None:
    backend = _career()
    assert backend.history("principal", "works at") == [
        ("Acme Corp", "2027-01-10", "2027-03-01"),
        ("Globex", "2027-03-01", "2027-06-15"),
        ("Initech", "2027-06-15", None),
    ]
    assert backend.history("principal", "diet") == [("vegetarian", "2027-01-10", "2027-06-15")]


def test_snapshot_lists_current_then_superseded_facts() -> None:
    assert _career().snapshot().split("\n") == [
        "principal: works at Initech (since 2027-06-15)",
        "principal: works at Acme Corp (valid 2027-01-10 to 2027-03-01; superseded, "
        "no longer true since 2027-03-01)",
        "principal: is vegetarian (valid 2027-01-10 to 2027-06-15; superseded, "
        "no longer true since 2027-06-15)",
        "principal: works at Globex (valid 2027-03-01 to 2027-06-15; superseded, "
        "no longer true since 2027-06-15)",
    ]


def test_retrieve_gives_current_facts_first_then_a_few_marked_superseded() -> None:
    lines = ask(_career(), "Where does the principal work?").split("\n")
    assert lines[0] == "principal: works at Initech (since 2027-06-15)"
    assert lines[1:] == [
        f"principal: works at Globex ({SUPERSEDED_MARKER} 2027-06-15)",
        f"principal: works at Acme Corp ({SUPERSEDED_MARKER} 2027-03-01)",
    ]
    backend = TemporalGraphBackend(max_superseded=1)
    store_all(
        backend,
        [chat("2027-01-01", "I work at Acme Corp."), chat("2027-02-01", "I work at Globex.")],
    )
    store_all(backend, [chat("2027-03-01", "I work at Initech.")])
    lines = ask(backend, "work").split("\n")
    assert len(lines) == 2 and SUPERSEDED_MARKER in lines[1] and "Globex" in lines[1]


def test_irrelevant_superseded_facts_stay_out() -> None:
    text = ask(_career(), "What does the principal eat? diet")
    assert f"is vegetarian ({SUPERSEDED_MARKER} 2027-06-15)" in text
    assert "Globex" not in text  # superseded and unrelated to the query


def test_noise_adds_nothing_and_scope_holds() -> None:
    backend = TemporalGraphBackend()
    store_all(backend, [chat("2027-01-01", "I live in Leeds.", helper="assistant_a")])
    before = backend.snapshot()
    store_all(backend, NOISE)
    assert backend.snapshot() == before
    assert ask(backend, "Where does the principal live?", entity="assistant") == ""
    assert "Leeds" in ask(backend, "Where does the principal live?", entity="assistant_a")


def test_superseded_only_for_those_who_heard_and_not_when_current_again() -> None:
    backend = TemporalGraphBackend()
    store_all(
        backend,
        [
            chat("2027-01-01", "I live in Leeds.", helper="assistant_a"),
            chat("2027-02-01", "I moved to York.", helper="assistant_b"),
        ],
    )
    question = "Where does the principal live?"
    leeds = "principal: lives in Leeds (since 2027-01-01)"
    assert ask(backend, question, entity="assistant_a") == leeds
    york = "principal: lives in York (since 2027-02-01)"
    assert ask(backend, question, entity="assistant_b") == york
    assert ask(backend, question, entity="principal").split("\n") == [
        york,
        f"principal: lives in Leeds ({SUPERSEDED_MARKER} 2027-02-01)",
    ]
    assert backend.history("principal", "lives in")[0] == ("Leeds", "2027-01-01", None)
    store_all(backend, [chat("2027-03-01", "I moved back to Leeds.", helper="assistant_b")])
    lines = ask(backend, question, entity="principal").split("\n")
    assert lines[0] == "principal: lives in Leeds (since 2027-03-01)"
    assert f"Leeds ({SUPERSEDED_MARKER}" not in "\n".join(lines)
    assert f"York ({SUPERSEDED_MARKER} 2027-03-01)" in lines[1]


def test_a_value_superseded_twice_is_listed_once_with_its_latest_end() -> None:
    backend = TemporalGraphBackend()
    store_all(
        backend,
        [
            chat("2027-01-01", "I work at Acme Corp."),
            chat("2027-02-01", "I work at Globex."),
            chat("2027-03-01", "I work at Acme Corp."),
            chat("2027-04-01", "I work at Initech."),
        ],
    )
    assert ask(backend, "work").split("\n") == [
        "principal: works at Initech (since 2027-04-01)",
        f"principal: works at Acme Corp ({SUPERSEDED_MARKER} 2027-04-01)",
        f"principal: works at Globex ({SUPERSEDED_MARKER} 2027-03-01)",
    ]


def test_storage_tokens_are_the_snapshot_count_after_every_change() -> None:
    """Edges added and closed, by two people before two assistants, closed out of id order."""
    for seed in range(3):
        backend = TemporalGraphBackend()
        history = random_history(seed, 70, ("principal", "partner"), ("assistant_a", "assistant_b"))
        snapshots = store_counting(backend, history)
        assert all(backend.operation_counts[operation] for operation in Operation)
        assert "superseded" in snapshots[-1].split("\n")[-1]
        assert backend.snapshot_tail() == snapshots[-1].split("\n")[-1]
