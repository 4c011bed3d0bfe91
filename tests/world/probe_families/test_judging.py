"""What rule judges work with: the word-run prefilter never changes a phrase search."""

from __future__ import annotations

import random

from drift_pipeline.textmatch import normalise, occurs_in, phrase_pattern
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


def test_lines_with_finds_every_line_a_phrase_occurs_in() -> None:
    # The substring search over the joined lines must never miss a line a word-bounded search
    # of that line finds, nor give one twice or out of order.
    draw = random.Random(11)
    pieces = [*WORDS, ",", "\n", "Lisbon.", "NEW-YORK", "Ⅻ", "ﬁle", "\u2014", " ", "İstanbul"]
    for _ in range(400):
        text = "".join(draw.choice(pieces) + draw.choice(["", " ", "\n"]) for _ in range(16))
        prepared = prepare_context(text)
        for phrase in draw.sample([*PHRASES, "ⅻ", "file", "i̇stanbul", "york\nnew"], 5):
            found = list(prepared.lines_with(phrase))
            assert found == sorted(set(found))
            wanted = [i for i, line in enumerate(prepared.lines) if occurs_in(phrase, line)]
            assert set(wanted) <= set(found), (text, phrase)


def test_lines_are_each_line_normalised_again() -> None:
    text = "Moved to  ZÜRICH\n\n  Ⅻ o'clock — “fine”\nplain ascii LINE\tend"
    prepared = prepare_context(text)
    assert prepared.lines == tuple(normalise(line) for line in prepared.text.split("\n"))


def test_text_is_each_line_normalised() -> None:
    draw = random.Random(5)
    pieces = [
        "Lisbon",
        "NEW",
        "york",
        " ",
        "  ",
        "\t",
        "\r",
        "\x0b",
        "\x0c",
        "\x1c",
        "\n",
        "Zürich",
        "—",
    ]
    for _ in range(300):
        text = "".join(draw.choice(pieces) for _ in range(14))
        wanted = "\n".join(normalise(line) for line in text.split("\n"))
        assert prepare_context(text).text == wanted, repr(text)
