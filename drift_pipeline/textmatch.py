"""Word-bounded, normalised phrase matching: the one definition of "this text mentions X".

World generation uses it to prove probes are answerable; the context judge uses the same
definition to decide whether retrieved text contains an answer, so the two can never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Set
from functools import lru_cache

__all__ = [
    "PhraseIndex",
    "contains_any",
    "fold",
    "normalise",
    "normalise_lines",
    "occurs_in",
    "phrase_pattern",
    "runs_of",
]

# Each dash and curly quote with its plain replacement. ``str.replace`` per character scans
# in C; ``str.translate`` with a mapping looks every character of the text up in Python.
_UNIFIED = (*((dash, "-") for dash in "‐‑‒–—―−"), ("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'))


def fold(text: str) -> str:
    """NFKC-fold, unify dashes and quotes, and collapse whitespace, keeping case."""
    if not text.isascii():  # NFKC and the dash and quote tables change nothing in ASCII
        text = unicodedata.normalize("NFKC", text)
        for special, plain in _UNIFIED:
            if special in text:
                text = text.replace(special, plain)
    return " ".join(text.split())


def normalise(text: str) -> str:
    """Lower-case, NFKC-fold, unify dashes and quotes, and collapse whitespace."""
    return fold(text).lower()


def normalise_lines(text: str) -> str:
    """Each line of ``text`` normalised as a text of its own, joined by newlines again."""
    if text.isascii():  # then normalising is lowering and joining words: once for the whole
        return "\n".join(" ".join(line.split()) for line in text.lower().split("\n"))
    return "\n".join(normalise(line) for line in text.split("\n"))


@lru_cache(maxsize=8192)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A compiled pattern matching ``phrase`` word-bounded in normalised text.

    Inner whitespace matches any run of whitespace; word boundaries are "not a letter or digit"
    on each side, so ``"run"`` does not match ``"running"`` but ``"tl;dr"`` matches ``"TL;DR:"``.
    Letters and digits are Unicode ones, so ``"rich"`` does not match ``"Zürich"`` either.
    """
    words = normalise(phrase).split(" ")
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])")


def contains_any(text: str, phrases: Iterable[str], *, normalised: bool = False) -> bool:
    """Whether any of ``phrases`` occurs word-bounded in ``text``.

    Args:
        text: Text to search.
        phrases: Candidate phrases (aliases of one value).
        normalised: Pass True when ``text`` is already the output of :func:`normalise`.
    """
    haystack = text if normalised else normalise(text)
    return any(phrase and phrase_pattern(phrase).search(haystack) for phrase in phrases)


# Letters and digits in maximal runs: word boundaries are defined by them.
_RUNS = re.compile(r"[^\W_]+")
# The same split for ASCII text by byte translation, many times faster than ``re``: every
# byte that is not a letter or digit ([^\W_] is exactly ``isalnum``) becomes a space.
_ASCII_SEPARATORS = bytes(c if chr(c).isalnum() else 0x20 for c in range(128)) + b" " * 128


def runs_of(text: str) -> frozenset[str]:
    """The runs of letters and digits in ``text`` (what word-bounded phrases respect)."""
    if text.isascii():
        return frozenset(text.encode().translate(_ASCII_SEPARATORS).decode().split())
    return frozenset(_RUNS.findall(text))


class PhraseIndex:
    """Which of a fixed set of phrases occur in a text, by exactly the rule of :func:`contains_any`.

    Searching many texts for many phrases one pattern at a time is quadratic, and each pattern
    starts with a look-behind, so it is tried at every position of the text. In normalised text a
    phrase whose normalised form starts and ends with a letter or digit matches exactly where
    that form occurs as a substring with no letter or digit on either side; and it can only
    occur where its first run of letters and digits is a whole run of the text. So the index
    splits the text into runs once and checks only the phrases whose first run is among them,
    with plain substring search. The few other phrases (``"(net)"``, ``"/docs/api/*"``) keep
    their pattern.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        by_first: dict[str, dict[str, list[str]]] = {}  # first run → normalised → phrases
        irregular: dict[str, list[str]] = {}
        for phrase in phrases:
            if not phrase:
                continue  # an empty phrase never matches (as in contains_any)
            key = normalise(phrase)
            runs = _RUNS.findall(key)
            if runs and key.startswith(runs[0]) and key.endswith(runs[-1]):
                by_first.setdefault(runs[0], {}).setdefault(key, []).append(phrase)
            else:
                irregular.setdefault(key, []).append(phrase)
        # Each phrase with the set of its runs (all must be in the text for it to be there).
        self._by_first = {
            run: [
                (key, frozenset(_RUNS.findall(key)), frozenset(found))
                for key, found in sorted(keys.items())
            ]
            for run, keys in by_first.items()
        }
        self._firsts = frozenset(self._by_first)
        # Each of them with its runs too: a match holds every run of the phrase as a run of
        # the text (the phrase's own edges bound its inner runs), so most are never searched.
        self._irregular = [
            (phrase_pattern(key), frozenset(_RUNS.findall(key)), frozenset(found))
            for key, found in sorted(irregular.items())
        ]

    def find(self, text: str) -> Set[str]:
        """The indexed phrases (as given) that occur word-bounded in ``text`` (normalised first)."""
        haystack = normalise(text)
        present = runs_of(haystack)
        found: set[str] = set()
        for first in self._firsts & present:
            for key, needed, phrases in self._by_first[first]:
                if needed <= present and _bounded_in(key, haystack):
                    found |= phrases
        for pattern, runs, phrases in self._irregular:
            if runs <= present and pattern.search(haystack):
                found |= phrases
        return found


@lru_cache(maxsize=65536)
def _plain_key(phrase: str) -> str | None:
    """``phrase`` normalised when it starts and ends with a letter or digit, else ``None``."""
    key = normalise(phrase)
    runs = _RUNS.findall(key)
    if runs and key.startswith(runs[0]) and key.endswith(runs[-1]):
        return key
    return None


def occurs_in(phrase: str, haystack: str) -> bool:
    """Whether ``phrase_pattern(phrase)`` matches the already normalised ``haystack``.

    The same rule as :class:`PhraseIndex`: a phrase that starts and ends with a letter or digit
    is found by plain substring search with its edges checked (the pattern's look-behind would
    be tried at every position of a long text); the others keep their pattern.
    """
    key = _plain_key(phrase)
    if key is None:
        return phrase_pattern(phrase).search(haystack) is not None
    return _bounded_in(key, haystack)


def _bounded_in(key: str, haystack: str) -> bool:
    """Whether ``key`` occurs in ``haystack`` with no letter or digit right before or after."""
    at = haystack.find(key)
    while at >= 0:
        end = at + len(key)
        if (at == 0 or not haystack[at - 1].isalnum()) and (
            end == len(haystack) or not haystack[end].isalnum()
        ):
            return True
        at = haystack.find(key, at + 1)
    return False
