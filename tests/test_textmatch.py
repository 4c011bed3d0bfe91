"""Word-bounded, normalised phrase matching (shared by the audit and the context judge)."""

from __future__ import annotations

import random
import unicodedata

import pytest

from drift_pipeline.textmatch import (
    PhraseIndex,
    contains_any,
    fold,
    normalise,
    normalise_lines,
    occurs_in,
    phrase_pattern,
    runs_of,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Hello   World \n", "hello world"),
        ("Long–haul — flights", "long-haul - flights"),  # en and em dashes fold to '-'
        ("non‑breaking‐hyphen−minus", "non-breaking-hyphen-minus"),
        ("It’s “quoted” ‘here’", "it's \"quoted\" 'here'"),
        ("Ｌｉｓｂｏｎ ﬁnal", "lisbon final"),  # NFKC: full-width letters, ligatures
        ("tabs\tand\r\nnewlines", "tabs and newlines"),
        ("ÉCOLE", "école"),
        ("", ""),
    ],
)
def test_normalise(raw: str, expected: str):
    assert normalise(raw) == expected


CASES = [
    ("I started running before work", "running", True),
    ("I like to run", "running", False),
    ("I'm running late", "run", False),  # word-bounded: no match inside a word
    ("Rerun it", "run", False),
    ("We moved to LISBON!", "Lisbon", True),
    ("Lisbon's trams", "lisbon", True),
    ("Lisbon’s trams", "lisbon's", True),  # curly apostrophe folds
    ("start with a TL;DR: done", "TL;DR", True),
    ("no long–haul flights", "long-haul", True),  # en dash in the text
    ("no long-haul flights", "long–haul", True),  # en dash in the phrase
    ("Northwind\n  Traders signed", "Northwind Traders", True),  # any whitespace between
    ("Northwind-Traders", "Northwind Traders", False),
    ("no meetings before 10am please", "before 10am", True),
    ("before 10am5", "before 10am", False),
    ("ask before running code", "ask before running", True),
    ("use tables for comparisons", "table", False),
    ("gluten-free", "gluten", True),  # '-' is a boundary
    ("test_login_lockout failing", "test_login_lockout", True),
    ("crawl /docs/api/* next", "/docs/api/*", True),
    ("Ｌｉｓｂｏｎ", "Lisbon", True),
    # Word boundaries hold for letters outside ASCII too.
    ("Zürich is lovely", "rich", False),
    ("a café nearby", "caf", False),
    ("Kraków", "krak", False),
    ("Ljubljana, Kraków and Porto", "Kraków", True),
    ("naïve plan", "na", False),
    ("München ist schön", "münchen", True),
]


@pytest.mark.parametrize(("text", "phrase", "found"), CASES)
def test_contains_any_is_word_bounded_and_normalised(text: str, phrase: str, found: bool):
    assert contains_any(text, [phrase]) is found


def test_any_of_several_phrases():
    assert contains_any("Joined Contoso last week", ["Contoso Health", "Contoso"])
    assert not contains_any("Joined Contosoft last week", ["Contoso Health", "Contoso"])
    assert not contains_any("anything", [])
    assert not contains_any("anything", [""])  # an empty alias never matches


def test_prenormalised_text_is_searched_as_is():
    text = normalise("We signed with NORTHWIND")
    assert contains_any(text, ["Northwind"], normalised=True)
    # normalised=True skips folding the text: raw upper-case text is not found then.
    assert not contains_any("NORTHWIND", ["northwind"], normalised=True)


def test_patterns_are_cached_and_escape_regex_characters():
    assert phrase_pattern("a.b") is phrase_pattern("a.b")
    assert not contains_any("axb", ["a.b"])
    assert contains_any("a.b", ["a.b"])
    assert contains_any("cost (net) rose", ["(net)"])


@pytest.mark.parametrize(("text", "phrase", "found"), CASES)
def test_phrase_index_agrees_on_every_case(text: str, phrase: str, found: bool):
    index = PhraseIndex([phrase, "unrelated words"])
    assert (phrase in index.find(text)) is found
    assert (phrase in index.find(normalise(text))) is found


def test_phrase_index_finds_every_phrase_present_and_reports_it_as_given():
    index = PhraseIndex(["Contoso", "Contoso Health", "contoso", "health", "(net)", ""])
    assert index.find("Joined CONTOSO Health (net) today") == {
        "Contoso",
        "Contoso Health",
        "contoso",
        "health",
        "(net)",
    }
    assert index.find("Contosoft") == set()
    assert PhraseIndex([]).find("anything") == set()


def test_phrase_index_agrees_with_contains_any_on_random_text():
    # Texts and phrases built from a small alphabet of words and separators, so that overlaps,
    # shared prefixes, repeated words and odd whitespace all occur often.
    rng = random.Random(7)
    words = ["a", "ab", "b", "new", "york", "new-york", "ça", "x1", "1", "tl;dr", "(n)", "_u"]
    seps = [" ", "  ", "-", ", ", "\t", ".", "", "_", "\n"]

    def text(n: int) -> str:
        return "".join(rng.choice(words) + rng.choice(seps) for _ in range(n)).strip()

    phrases = list({text(rng.randint(1, 3)) for _ in range(60)} | {"A", "NEW York", " "})
    index = PhraseIndex(phrases)
    for _ in range(400):
        sample = text(rng.randint(0, 12))
        found = index.find(sample)
        assert found == {p for p in phrases if contains_any(sample, [p])}, sample


@pytest.mark.parametrize(("text", "phrase", "found"), CASES)
def test_occurs_in_is_the_phrase_pattern_on_normalised_text(text: str, phrase: str, found: bool):
    haystack = normalise(text)
    assert occurs_in(phrase, haystack) is found
    assert occurs_in(phrase, haystack) is bool(phrase_pattern(phrase).search(haystack))


def test_occurs_in_agrees_with_the_pattern_on_random_text():
    rng = random.Random(11)
    words = ["a", "ab", "b", "new", "york", "new-york", "ça", "x1", "1", "tl;dr", "(n)", "_u", "é"]
    seps = [" ", "  ", "-", ", ", "\t", ".", "", "_", "\n", "—"]

    def text(n: int) -> str:
        return "".join(rng.choice(words) + rng.choice(seps) for _ in range(n)).strip()

    phrases = list({text(rng.randint(1, 3)) for _ in range(60)} | {"A", "NEW York", "(n)"})
    for _ in range(400):
        haystack = normalise(text(rng.randint(0, 12)))
        for phrase in phrases:
            expected = bool(phrase_pattern(phrase).search(haystack))
            assert occurs_in(phrase, haystack) is expected, (phrase, haystack)


def test_normalise_unifies_dashes_and_quotes_as_a_translation_table_does():
    dashes = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
    quotes = {ord("‘"): "'", ord("’"): "'", ord("“"): '"', ord("”"): '"'}

    def reference(text: str) -> str:
        if text.isascii():
            return " ".join(text.lower().split())
        folded = unicodedata.normalize("NFKC", text).translate(dashes).translate(quotes)
        return " ".join(folded.lower().split())

    rng = random.Random(3)
    alphabet = "aB -–—―−‐‑‒‘’“”'\"\tÉ\u00a0ﬁＬ"
    for _ in range(500):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert normalise(sample) == reference(sample), repr(sample)


def test_runs_are_letters_and_digits_alike_in_ascii_and_unicode_text() -> None:
    assert runs_of("tl;dr: 10 km_run") == {"tl", "dr", "10", "km", "run"}
    assert runs_of("Zürich—café 3k_x") == {"Zürich", "café", "3k", "x"}


def test_folding_is_normalising_with_the_case_kept() -> None:
    text = "  Zürich — “Café”\n\tﬁne  "
    assert fold(text) == 'Zürich - "Café" fine'
    assert fold(text).lower() == normalise(text)


def test_normalising_lines_normalises_each_line_as_a_text_of_its_own() -> None:
    pieces = ["Moved", "TO", "Lisbon", " ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\n", "\n\n"]
    pieces += ["Zürich", "İstanbul", "ﬁne", "—", "’", "\u00a0", "\u2028", "Ⅻ"]
    rng = random.Random(7)
    for length in range(60):
        text = "".join(rng.choice(pieces) for _ in range(length))
        for sample in (text, text.encode("ascii", "ignore").decode()):  # the ASCII path too
            wanted = "\n".join(normalise(line) for line in sample.split("\n"))
            assert normalise_lines(sample) == wanted
    assert normalise_lines("") == ""


def test_normalising_normalised_lines_gives_them_back() -> None:
    # The rule judges split a prepared context's lines instead of normalising them again.
    alphabet = "aZé İß\t\r\n\u2028\u00a0’“—-ﬁＡ.;?\x0b\u200b\u0301"
    rng = random.Random(11)
    for _ in range(3000):
        sample = "".join(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        once = normalise_lines(sample)
        assert normalise_lines(once) == once, repr(sample)
