"""Sentence skeletons: a sentence with its values, names, dates and numbers masked.

Two sentences with one skeleton differ only in what a template would fill in, so counting
skeletons counts phrasings, and a skeleton seen in one world set and again in another is a
phrasing a pattern fitted to the first would also match in the second.
"""

from __future__ import annotations

import re
from functools import lru_cache

from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.entities import entity_types
from drift_pipeline.textmatch import normalise

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MONTHS = (
    *("january", "february", "march", "april", "may", "june", "july", "august"),
    *("september", "october", "november", "december", "monday", "tuesday", "wednesday"),
    *("thursday", "friday", "saturday", "sunday"),
)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|(?<![^\W_])(?:" + "|".join(_MONTHS) + r")(?![^\W_])")
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
# Names a transcript may use: the built-in name pools and the routine tasks' people.
_EXTRA_NAMES = ("Priya", "Marcus", "Elena", "Tobias", "Grace", "Omar", "Lena", "Felix", "Hana")


def _alternation(phrases: set[str]) -> re.Pattern[str]:
    ordered = sorted({normalise(p) for p in phrases if p}, key=len, reverse=True)
    body = "|".join(
        r"\s+".join(re.escape(word) for word in phrase.split(" ")) for phrase in ordered
    )
    return re.compile(rf"(?<![^\W_])(?:{body})(?![^\W_])")


@lru_cache(maxsize=1)
def _maskers() -> tuple[re.Pattern[str], re.Pattern[str]]:
    values: set[str] = set()
    for definition in entity_types():
        for slot in definition.slots:
            for value in slot.values:
                values.update(value.all_aliases())
    values.update(vocab.OPINION_TOPICS.values())
    names = {*vocab.FIRST_NAMES, *vocab.SURNAMES, *_EXTRA_NAMES, "Diego"}
    names.update(value.text for value in vocab.NICKNAMES)
    return _alternation(values), _alternation(names)


def sentences(text: str) -> list[str]:
    """The sentences of a turn (split after ``.``, ``!`` and ``?``).

    A token without letters or digits right after a sentence end (an emoji, ``/s``) closes the
    sentence before it rather than opening the next one.
    """
    found: list[str] = []
    for part in _SENTENCE_END.split(text.strip()):
        head, _, rest = part.partition(" ")
        if found and head and not any(char.isalnum() for char in head):
            found[-1] = f"{found[-1]} {head}"
            part = rest
        if part:
            found.append(part)
    return found


def skeleton(sentence: str, extra_names: tuple[str, ...] = ()) -> str:
    """The sentence normalised, with values, names, dates and numbers masked.

    Args:
        sentence: One sentence.
        extra_names: Further names to mask (the world's own entity names).
    """
    values, names = _maskers()
    text = normalise(sentence)
    text = values.sub("<v>", text)
    text = names.sub("<name>", text)
    for name in extra_names:
        text = text.replace(normalise(name), "<name>")
    text = _DATE.sub("<date>", text)
    return _NUMBER.sub("<n>", text)
