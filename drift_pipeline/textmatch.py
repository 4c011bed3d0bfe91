"""Word-bounded, normalised phrase matching: the one definition of "this text mentions X".

World generation uses it to prove probes are answerable; the context judge uses the same
definition to decide whether retrieved text contains an answer, so the two can never disagree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["contains_any", "normalise", "phrase_pattern"]

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
