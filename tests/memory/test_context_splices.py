"""A memory that repeats most of its last answer costs the worker pipe what changed, exactly.

The worker sends a retrieve's text as a splice of its previous answer when it is one (see
``drift_pipeline.tokens.splice_of``); the harness must rebuild every text exactly, whatever the
sequence of answers, and the read counter must count each exactly.
"""

from __future__ import annotations

import asyncio
from typing import Any

from drift_pipeline.memory._client import BackendWorker, CallResult
from drift_pipeline.tokens import LineCounter, count_tokens_lines

from .plugins.window import window

WINDOW = "memory.plugins.window:Window"


def _retrieve(query: str) -> dict[str, Any]:
    return {"op": "retrieve", "session_id": "s", "entity_id": "e", "query": query}


def _queries() -> list[str]:
    """A sliding window, a growing log, repeats, a rewrite and answers too short to splice."""
    queries = [f"{first} {first + 300} {first % 13}" for first in range(0, 120, 3)]
    queries += [f"500 {last} 0" for last in range(700, 760, 7)]
    queries += ["500 759 0", "unrelated", "500 800 0", "0 3 0", "0 600 11", "0 600 11"]
    return queries


def test_every_answer_is_rebuilt_exactly_and_most_cross_as_a_splice() -> None:
    replies: list[int] = []

    async def go() -> list[CallResult]:
        worker = BackendWorker(WINDOW, {}, [], 20.0)
        read_line = worker._read_line

        async def measured(process: Any) -> bytes:
            line = await read_line(process)
            replies.append(len(line))
            return line

        worker._read_line = measured  # type: ignore[method-assign]
        try:
            assert (await worker.start()).ok
            replies.clear()
            answers = [await worker.call(_retrieve(query)) for query in _queries()]
            # The same answers again, as reads between stores in one run of messages.
            run: list[dict[str, Any]] = []
            for query in _queries():
                run += [_retrieve(query), {"session_id": "s", "messages": [], "snapshot": False}]
            async for result in worker.store_many(run):
                answers.append(result)
            asked = [True] * len(_queries()) + ["query" in item for item in run]
            return [answer for answer, read in zip(answers, asked, strict=True) if read]
        finally:
            await worker.close()

    answers = asyncio.run(go())
    expected = [window(query) for query in _queries()] * 2
    assert [a.error for a in answers] == [None] * len(expected)
    assert [a.data["context"] for a in answers] == expected
    # A full answer is ~17 KB; a splice carries the few lines that changed.
    sliding = replies[1:40]
    assert max(sliding) < 2_000 < min(len(text) for text in expected[1:40])


def test_the_read_counter_counts_each_answer_as_a_whole_recount_would() -> None:
    counter = LineCounter()
    for query in _queries() * 2:
        text = window(query)
        assert counter.count(text) == count_tokens_lines(text)


def test_a_splice_with_broken_text_in_what_it_adds_is_refused() -> None:
    # Only the new part of a splice is checked for lone surrogates (the kept part passed when
    # it was sent): broken text added at either end is still refused, and what was last sent
    # stays the base of the next splice.
    whole = window("0 300 0")
    queries = [whole, whole + "\n[bad] \ud800", "[bad] \udfff\n" + whole, window("0 310 0")]

    async def go() -> list[CallResult]:
        worker = BackendWorker(WINDOW, {}, [], 20.0)
        try:
            assert (await worker.start()).ok
            return [await worker.call(_retrieve(query)) for query in queries]
        finally:
            await worker.close()

    first, tail, head, after = asyncio.run(go())
    assert first.data["context"] == whole
    for refused in (tail, head):
        assert refused.error == "retrieve() returned text that is not valid Unicode (surrogates)"
    assert after.error is None and after.data["context"] == window("0 310 0")
