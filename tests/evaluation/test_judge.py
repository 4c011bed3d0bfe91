"""The context judge's phrase search: the word-run prefilter never changes a verdict."""

from __future__ import annotations

import random

import pyarrow as pa

from drift_pipeline.evaluation import judge
from drift_pipeline.evaluation._judge import _found, _prepare
from drift_pipeline.pipeline._cells import _contexts
from drift_pipeline.textmatch import phrase_pattern

WORDS = ["lisbon", "new", "york", "tl;dr", "(net)", "c++", "zürich", "rich", "run", "running"]
PHRASES = [*WORDS, "new york", "New  York", "tl;dr:", "ich", "-", "", "york city", "Zürich"]


def _plain(haystack: str, phrases: list[str]) -> str | None:
    return next((p for p in phrases if p and phrase_pattern(p).search(haystack)), None)


def test_prefilter_agrees_with_the_pattern_on_random_texts() -> None:
    draw = random.Random(7)
    for _ in range(400):
        text = " ".join(draw.choice([*WORDS, ",", "\n", "Lisbon.", "NEW-YORK"]) for _ in range(12))
        prepared = _prepare(text)
        phrases = draw.sample(PHRASES, 4)
        assert _found(prepared.text, prepared.text_runs, phrases) == _plain(prepared.text, phrases)
        assert _found(prepared.asserted, prepared.asserted_runs, phrases) == _plain(
            prepared.asserted, phrases
        )


def test_retracted_lines_are_not_asserted() -> None:
    probe = {
        "probe_type": "recall",
        "polarity": "negative",
        "aliases": ["Lisbon"],
    }
    assert judge(probe, "moved to Lisbon (no longer true since 2027-03-01)").correct
    assert not judge(probe, "moved to Lisbon").correct


def test_contexts_decode_each_distinct_text_once() -> None:
    texts = ["a long tail " * 50, "other", "a long tail " * 50]
    plain = pa.table({"context": texts})
    encoded = pa.table({"context": pa.array(texts).dictionary_encode()})
    assert _contexts(plain) == texts == _contexts(encoded)
    decoded = _contexts(encoded)
    assert decoded[0] is decoded[2]  # one string object, not one copy per row
    nulls = pa.table({"context": pa.array(["x", None]).dictionary_encode()})
    assert _contexts(nulls) == ["x", ""]
