from __future__ import annotations

from drift_pipeline.memory.backends import BM25Backend

from ._sessions import PRINCIPAL, agent, ask, chat, run, store_all, user


def _history() -> list[list]:  # type: ignore[type-arg]
    return [
        chat("2027-03-14", "I work at Acme Corp as a welder.", "The canteen serves soup."),
        chat("2027-03-20", "My cat knocked over a plant.", "We watched a film about volcanoes."),
        chat("2027-04-02", "I adopted a greyhound named Biscuit.", "Biscuit loves the beach."),
        chat("2027-04-10", "The volcano documentary was long."),
    ]


def test_ranks_the_matching_turn_first_with_date_and_speaker() -> None:
    backend = BM25Backend()
    store_all(backend, _history())
    lines = ask(backend, "What is the name of the greyhound?").split("\n")
    assert lines[0] == "[2027-04-02] principal: I adopted a greyhound named Biscuit."
    welder = ask(backend, "welder job at Acme").split("\n")[0]
    assert welder == "[2027-03-14] principal: I work at Acme Corp as a welder."


def test_top_k_and_only_positive_scores() -> None:
    backend = BM25Backend(top_k=2)
    store_all(backend, _history())
    assert len(ask(backend, "volcano documentary film").split("\n")) == 2
    assert ask(backend, "submarine") == ""
    assert ask(backend, "the and of") == ""  # stop words only
    single = BM25Backend(top_k=8)
    store_all(single, _history())
    assert len(ask(single, "Biscuit").split("\n")) == 2


def test_index_is_rebuilt_lazily() -> None:
    backend = BM25Backend()
    store_all(backend, _history())
    assert backend.rebuilds == 0
    ask(backend, "greyhound")
    ask(backend, "volcano")
    assert backend.rebuilds == 1
    run(backend.store("late", [user("I bought a kayak.", "2027-05-01"), agent("Fun!")]))
    assert ask(backend, "kayak").startswith("[2027-05-01] principal: I bought a kayak.")
    ask(backend, "kayak")
    assert backend.rebuilds == 2


def test_ties_are_broken_towards_newer_turns() -> None:
    backend = BM25Backend(top_k=1)
    store_all(backend, [chat("2027-01-01", "Pineapple."), chat("2027-02-01", "Pineapple.")])
    assert ask(backend, "pineapple") == "[2027-02-01] principal: Pineapple."


def test_scope_hides_sessions_the_entity_was_not_in() -> None:
    backend = BM25Backend()
    store_all(
        backend,
        [
            chat("2027-03-14", "My safe combination is 1234.", helper="assistant_a"),
            chat("2027-03-15", "My bike combination is 9876.", helper="assistant_b"),
        ],
    )
    seen_by_b = ask(backend, "combination", entity="assistant_b")
    assert "9876" in seen_by_b
    assert "1234" not in seen_by_b
    assert "1234" in ask(backend, "safe combination", entity="assistant_a")
    assert ask(backend, "combination", entity="stranger") == ""
    both = ask(backend, "combination", entity=PRINCIPAL)
    assert "1234" in both and "9876" in both
