"""Mending everyday words that were mistyped, before the extraction rules read a sentence.

A rule that looks for "that", "my" or "moved" misses "taht", "ym" or "moevd"; people slip in
many ways (two letters swapped, one dropped, one doubled or added, one struck for its neighbour),
so a typed word is mended to an everyday word when it is one such slip away from exactly one of
them (Damerau-Levenshtein distance 1). It is left as typed when it could be a word in its own
right: an everyday word, a common English word one slip from one ("form", "knot", "wit", read
from ``words/near_everyday.txt``), a name (capitalised inside a sentence, or one the memory has
seen capitalised), a word in capitals ("AWS"), or a short word whose slip is not a swap ("th"
could be "the", "to" or "oh").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from importlib import resources

__all__ = ["EVERYDAY_WORDS", "build_tables", "mend_slips"]

# Words a rule reads: function words that frame a statement and the verbs and adverbs that say a
# fact changed. A slip inside one of them hides the statement from every rule.
EVERYDAY_WORDS = frozenset(
    [
        "the",
        "that",
        "this",
        "these",
        "those",
        "with",
        "which",
        "what",
        "when",
        "where",
        "about",
        "because",
        "since",
        "know",
        "just",
        "now",
        "have",
        "they",
        "their",
        "there",
        "then",
        "than",
        "your",
        "would",
        "could",
        "should",
        "after",
        "before",
        "been",
        "into",
        "over",
        "some",
        "also",
        "only",
        "still",
        "very",
        "and",
        "but",
        "not",
        "you",
        "are",
        "was",
        "our",
        "how",
        "who",
        "her",
        "she",
        "said",
        "think",
        "like",
        "will",
        "well",
        "want",
        "went",
        "work",
        "going",
        "doing",
        "really",
        "always",
        "never",
        "anyway",
        "actually",
        "though",
        "my",
        "from",
        "moved",
        "moving",
        "living",
        "lives",
        "working",
        "prefer",
        "preferred",
        "rather",
        "started",
        "stopped",
        "switched",
        "changed",
        "anymore",
        "instead",
        "longer",
        "favourite",
        "favorite",
        "usually",
        "live",
    ]
)

# Below this length only a swap is mended: a dropped, added or struck letter turns a two- or
# three-letter word into too many others ("th", "teh" but also "tho", "thy") to guess which.
_SHORTEST_OTHER_SLIP = 4
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_LETTERS = re.compile(r"[A-Za-z]+")


def _swaps(word: str) -> Iterator[str]:
    for index in range(len(word) - 1):
        if word[index] != word[index + 1]:
            yield word[:index] + word[index + 1] + word[index] + word[index + 2 :]


def _other_slips(word: str) -> Iterator[str]:
    """Each way of typing ``word`` with one letter dropped, added or struck for another."""
    for index in range(len(word) + 1):
        head, tail = word[:index], word[index:]
        if tail:
            yield head + tail[1:]
        for letter in _ALPHABET:
            yield head + letter + tail
            if tail and letter != tail[0]:
                yield head + letter + tail[1:]


@cache
def _near_everyday() -> frozenset[str]:
    source = resources.files("drift_pipeline.memory.backends") / "words" / "near_everyday.txt"
    return frozenset(
        line.strip()
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    )


@cache
def _slip_table() -> dict[str, str]:
    """Each slip of an everyday word that no other everyday word shares, mapped to the word."""
    meant: dict[str, set[str]] = {}
    for word in EVERYDAY_WORDS:
        for typed in _swaps(word):
            meant.setdefault(typed, set()).add(word)
        for typed in _other_slips(word):
            if len(typed) >= _SHORTEST_OTHER_SLIP:
                meant.setdefault(typed, set()).add(word)
    real = _near_everyday()
    return {
        typed: next(iter(words))
        for typed, words in meant.items()
        if len(words) == 1 and typed not in EVERYDAY_WORDS and typed not in real
    }


def build_tables() -> None:
    """Build the slip table now rather than at the first message mended.

    A worker template calls it, so that every worker forked from it starts with the table.
    """
    _slip_table()


def mend_slips(text: str, is_name: Callable[[str], bool] | None = None) -> str:
    """Mend everyday words typed with one slip ("teh" → "the", "Moevd" → "Moved", "realy").

    Args:
        text: A message as typed.
        is_name: Whether the memory knows a word as a name; a name is never mended.
    """
    table = _slip_table()
    if table.keys().isdisjoint(_LETTERS.findall(text.lower())):
        return text  # the common case, checked in one pass

    def mend(match: re.Match[str]) -> str:
        typed = match.group(0)
        meant = table.get(typed.lower())
        if meant is None or (len(typed) > 1 and typed.isupper()):
            return typed
        if _CONTRACTED.match(text, match.end()):
            return typed  # "shouldn't", "aren't": the stem of a contraction, no slip
        if typed[0].isupper():
            opening = _opens_sentence(text, match.start())
            if not opening or (is_name is not None and is_name(typed)):
                return typed
            return meant.capitalize()
        return meant

    return _LETTERS.sub(mend, text)


_CONTRACTED = re.compile(r"['’][a-z]", re.IGNORECASE)
_SENTENCE_OPENING = re.compile(r"(?:^|[.!?:;…\"(]\s*|\n\s*)$")


def _opens_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence, where a capital says nothing of a name."""
    return _SENTENCE_OPENING.search(text[max(0, start - 4) : start]) is not None
