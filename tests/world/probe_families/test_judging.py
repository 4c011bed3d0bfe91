"""What rule judges work with: the word-run prefilter never changes a phrase search."""

from __future__ import annotations

import random

from drift_pipeline.textmatch import phrase_pattern
from drift_pipeline.world.probe_families import prepare_context

WORDS = ["lisbon", "new", "york", "tl;dr", "(net)", "c++", "zürich", "rich", "run", "running"]
PHRASES = [*WORDS, "new york", "New  York", "tl;dr:", "ich", "-", "", "york city", "Zürich"]


def _plain(haystack: str, phrases: list[str]) -> str | None:
    return next((p for p in phrases if p and phrase_pattern(p).search(haystack)), None)


def test_prefilter_agrees_with_the_pattern_on_random_texts() -> None:
    draw = random.Random(7)
    for _ in range(400):
        text = " ".join(draw.choice([*WORDS, ",", "\n", "Lisbon.", "NEW-YORK"]) for _ in range(12))
        prepared = prepare_context(text)
        phrases = draw.sample(PHRASES, 4)
        assert prepared.find(phrases) == _plain(prepared.text, phrases)
        assert prepared.find_asserted(phrases) == _plain(prepared.asserted, phrases)


def test_retracting_lines_are_said_but_not_asserted() -> None:
    prepared = prepare_context("Lives in Lisbon\nPorto (no longer true since 2027-03-01)")
    assert prepared.find(["Porto"]) == "Porto"
    assert prepared.find_asserted(["Porto"]) is None
    assert prepared.find_asserted(["Lisbon"]) == "Lisbon"
