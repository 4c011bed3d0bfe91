"""Word-bounded, normalised phrase matching: the one definition of "this text mentions X".

World generation uses it to prove probes are answerable; the context judge uses the same
definition to decide whether retrieved text contains an answer, so the two can never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Set
from functools import lru_cache

__all__ = ["PhraseIndex", "contains_any", "normalise", "phrase_pattern"]

_DASHES = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
_QUOTES = {ord("‘"): "'", ord("’"): "'", ord("“"): '"', ord("”"): '"'}


def normalise(text: str) -> str:
    """Lower-case, NFKC-fold, unify dashes and quotes, and collapse whitespace."""
    folded = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES).lower()
    return " ".join(folded.split())


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


# A maximal run of letters and digits: the unit word boundaries are defined by.
_RUN = re.compile(r"[^\W_]+")


class PhraseIndex:
    """Which of a fixed set of phrases occur in a text, by exactly the rule of :func:`contains_any`.

    Searching many texts for many phrases one pattern at a time is quadratic; the index splits
    the text once into letter-and-digit runs and looks phrases up by their first run. A phrase
    whose normalised form starts and ends with a letter or digit matches exactly where a span of
    whole runs equals it, which is what its word-bounded pattern accepts. Other phrases (rare:
    ``"(net)"``, ``"/docs/api/*"``) fall back to their pattern.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        # first run → (normalised phrase, number of runs, the phrases normalising to it)
        by_key: dict[str, set[str]] = {}
        self._irregular: list[str] = []
        for phrase in phrases:
            if not phrase:
                continue  # an empty phrase never matches (as in contains_any)
            key = normalise(phrase)
            runs = _RUN.findall(key)
            if runs and key.startswith(runs[0]) and key.endswith(runs[-1]):
                by_key.setdefault(key, set()).add(phrase)
            elif phrase not in self._irregular:
                self._irregular.append(phrase)
        self._starts: dict[str, list[tuple[str, int, frozenset[str]]]] = {}
        for key, originals in sorted(by_key.items()):
            runs = _RUN.findall(key)
            self._starts.setdefault(runs[0], []).append((key, len(runs), frozenset(originals)))

    def find(self, text: str, *, normalised: bool = False) -> Set[str]:
        """The indexed phrases (as given) that occur word-bounded in ``text``.

        Args:
            text: Text to search.
            normalised: Pass True when ``text`` is already the output of :func:`normalise`.
        """
        haystack = text if normalised else normalise(text)
        found: set[str] = set()
        starts = self._starts
        runs: list[re.Match[str]] | None = None
        for index, token in enumerate(_RUN.findall(haystack)):
            entries = starts.get(token)
            if entries is None:
                continue
            if runs is None:
                runs = list(_RUN.finditer(haystack))
            begin = runs[index].start()
            for key, length, originals in entries:
                last = index + length - 1
                if last >= len(runs):
                    continue
                span = haystack[begin : runs[last].end()]
                # Whitespace inside a span may be any run of it when the text was not folded.
                if span == key or " ".join(span.split()) == key:
                    found |= originals
        for phrase in self._irregular:
            if phrase_pattern(phrase).search(haystack):
                found.add(phrase)
        return found
