from __future__ import annotations

import random

import bm25s
import numpy as np

from drift_pipeline.memory.backends import BM25Backend
from drift_pipeline.memory.backends._bm25_index import BM25Index
from drift_pipeline.tokens import count_tokens_lines

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


def test_turns_stored_between_queries_are_searchable_at_once() -> None:
    backend = BM25Backend()
    store_all(backend, _history())
    ask(backend, "greyhound")
    run(backend.store("late", [user("I bought a kayak.", "2027-05-01"), agent("Fun!")]))
    assert ask(backend, "kayak").startswith("[2027-05-01] principal: I bought a kayak.")


def test_scores_equal_the_bm25s_library_bit_for_bit() -> None:
    """The incremental index computes Lucene BM25 exactly as bm25s (which it replaced) does,
    after every added document, so rankings and tie-breaks cannot drift from version 1."""
    rng = random.Random(7)
    documents = [[rng.randrange(1, 40) for _ in range(rng.randrange(1, 12))] for _ in range(300)]
    index = BM25Index()
    for count, document in enumerate(documents, start=1):
        index.add(document)
        if count % 60:
            continue
        reference = bm25s.BM25()
        vocabulary = {str(term): term for term in range(40)}
        reference.index((documents[:count], vocabulary), show_progress=False)
        for _ in range(20):
            query = sorted({rng.randrange(0, 45) for _ in range(rng.randrange(1, 6))})
            known = [term for term in query if term < 40]
            expected = reference.get_scores_from_ids(known) if known else np.zeros(count)
            assert np.array_equal(index.scores(query), expected.astype(np.float32))


def test_storage_tokens_match_the_count_of_the_snapshot() -> None:
    backend = BM25Backend()
    assert backend.storage_tokens() == 0
    for session in _history():
        store_all(backend, [session])
        assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())


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
