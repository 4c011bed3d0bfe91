from __future__ import annotations

import time

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import TokenCounts
from drift_pipeline.memory.backends import FullContextBackend

from ._sessions import PRINCIPAL, agent, ask, chat, store_all, user


def test_stores_every_turn_verbatim_with_its_date() -> None:
    backend = FullContextBackend()
    store_all(
        backend,
        [
            [user("I work at Acme Corp.", "2027-03-14"), agent("Noted!", "2027-03-14")],
            [user("I moved to Leeds.", "2027-04-02")],
        ],
    )
    expected = (
        "[2027-03-14] principal: I work at Acme Corp.\n"
        "[2027-03-14] assistant: Noted!\n"
        "[2027-04-02] principal: I moved to Leeds."
    )
    assert backend.snapshot() == expected
    assert ask(backend, "anything", entity=PRINCIPAL) == expected
    assert backend.token_counts() == TokenCounts()


def test_retrieve_keeps_the_most_recent_tokens_within_budget() -> None:
    sessions = [
        chat(f"2027-03-{day:02d}", f"Note number {day}: I counted {day * 7} birds today.")
        for day in range(1, 29)
    ]
    full = FullContextBackend()
    store_all(full, sessions)
    everything = ask(full, "birds")
    total = tokens.count_tokens(everything)

    for budget in (1, 7, 40, 123, total - 1):
        backend = FullContextBackend(budget_tokens=budget)
        store_all(backend, sessions)
        text = ask(backend, "birds")
        assert tokens.count_tokens(text) <= budget
        assert everything.endswith(text)
        if budget >= 40:
            assert text.endswith("assistant: Thanks for letting me know.")
    assert ask(FullContextBackend(budget_tokens=0), "birds") == ""


def test_cut_happens_inside_the_oldest_line_it_reaches() -> None:
    backend = FullContextBackend(budget_tokens=30)
    store_all(backend, [chat("2027-03-14", "one two three four five six seven eight nine ten")])
    text = ask(backend, "q")
    assert text.endswith("[2027-03-14] assistant: Thanks for letting me know.")
    first_line = text.split("\n")[0]
    assert not first_line.startswith("[")  # the older line was cut from the front
    assert first_line.endswith("nine ten")
    assert tokens.count_tokens(text) <= 30


def test_whole_history_is_returned_when_it_fits() -> None:
    backend = FullContextBackend(budget_tokens=10_000)
    sessions = [chat("2027-03-14", "I work at Acme Corp."), chat("2027-03-15", "I live in Leeds.")]
    store_all(backend, sessions)
    assert ask(backend, "q") == backend.snapshot()


def test_an_entity_sees_only_sessions_it_spoke_in() -> None:
    backend = FullContextBackend()
    store_all(
        backend,
        [
            chat("2027-03-14", "My PIN hint is the blue heron.", helper="assistant_a"),
            chat("2027-03-15", "I live in Leeds.", helper="assistant_b"),
        ],
    )
    seen_by_b = ask(backend, "q", entity="assistant_b")
    assert "Leeds" in seen_by_b
    assert "heron" not in seen_by_b
    assert "heron" in ask(backend, "q", entity="assistant_a")
    assert ask(backend, "q", entity="stranger") == ""
    assert "heron" in ask(backend, "q", entity=PRINCIPAL)


def test_retrieve_does_not_retokenise_the_history() -> None:
    backend = FullContextBackend(budget_tokens=2_000)
    sessions = [chat(f"2027-01-{1 + n % 28:02d}", f"Line {n} about things.") for n in range(2000)]
    store_all(backend, sessions)
    started = time.perf_counter()
    for _ in range(50):
        ask(backend, "q")
    assert (time.perf_counter() - started) / 50 < 0.02
