"""The value lexicon: phrasings that name the same value (synonyms, abbreviations, units).

A probe's own aliases come first; the shipped groups (kept in the rules file) add the common
paraphrases a careful reader knows without being told ("NYC" is New York, "veggie" is
vegetarian). A group applies to a value when one of the value's phrases is in the group
(compared normalised), and then every phrase of the group names that value. Groups are kept
small and unambiguous on purpose: a phrase that could name two values of one slot ("LA",
"Georgia") is left out, because a wrong paraphrase turns into a false accept.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from drift_pipeline.textmatch import normalise

from ._rules import RULES

_R = RULES.patterns
_WORDS = RULES.word_sets

__all__ = ["LEXICON_GROUPS", "expand_phrases"]

LEXICON_GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(group) for group in RULES.spec.lexicon)
"""The shipped groups (from the rules file), each a tuple of phrasings of one value."""


_NUMBER_WORDS = RULES.rule("number-words").phrases or []
# Units a careful reader converts: each with its spellings and its size in the first unit.
_UNITS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("distance", ("km", "kilometres", "kilometers", "k"), 1.0),
    ("distance", ("miles", "mi", "mile"), 1.609344),
    ("weight", ("kg", "kilos", "kilograms"), 1.0),
    ("weight", ("lb", "lbs", "pounds"), 0.45359237),
    ("duration", ("minutes", "minute", "min", "mins"), 1.0),
    ("duration", ("hours", "hour", "h", "hr", "hrs"), 60.0),
)
_CURRENCIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("$", "USD", ("dollars", "bucks")),
    ("€", "EUR", ("euros",)),
    ("£", "GBP", ("pounds", "quid", "sterling")),
)


def _unit_variants(phrase: str) -> list[str]:
    """The same quantity in the other unit of its kind ("10 km" → "6.2 miles").

    A converted amount is given to one decimal, and as a whole number only when that is
    within 1% (so "6 miles" is not taken for 10 km, but "62 miles" is 100 km).
    """
    match = _R["quantity"].match(phrase)
    if not match:
        return []
    amount, unit = float(match.group(1)), match.group(2).lower()
    own = next((u for u in _UNITS if unit in u[1]), None)
    if own is None:
        return []
    variants: list[str] = []
    if amount.is_integer() and amount <= 20:  # "2 km" is also "two kilometres"
        word = _NUMBER_WORDS[int(amount)]
        variants.extend(f"{word} {spelling}" for spelling in own[1] if spelling != "k")
    base = amount * own[2]
    for kind, spellings, size in _UNITS:
        if kind != own[0] or spellings == own[1]:
            continue
        converted = base / size
        numbers = {f"{converted:.1f}"}
        if converted < 10:  # "45 minutes" is "0.75 hours", not "0.8"
            numbers.add(f"{converted:.2f}".rstrip("0").rstrip("."))
        if abs(converted - round(converted)) <= 0.01 * converted:
            numbers.add(str(round(converted)))
        for number in sorted(numbers):
            variants.extend(f"{number} {spelling}" for spelling in spellings if spelling != "k")
    return variants


def _money_variants(phrase: str) -> list[str]:
    """A sum of money in its other spellings ("$2,000" → "2000 dollars", "two grand", "2k")."""
    match = _R["money"].match(phrase)
    if not match:
        return []
    symbol, digits = match.group(1), match.group(2).replace(",", "")
    amount = int(digits)
    code, words = next((c[1], c[2]) for c in _CURRENCIES if c[0] == symbol)
    plain = {digits, f"{amount:,}"}
    spoken: set[str] = set()
    grand: list[str] = []  # "two grand" names the sum with no currency word after it
    if amount % 1000 == 0:
        plain.add(f"{amount // 1000}k")
    if amount % 1000 == 0 and amount // 1000 <= 20:
        thousands = amount // 1000
        spoken.add(f"{_NUMBER_WORDS[thousands]} thousand")
        grand = [f"{_NUMBER_WORDS[thousands]} grand", f"{thousands} grand"]
    elif amount % 100 == 0 and amount // 100 <= 20:
        spoken.add(f"{_NUMBER_WORDS[amount // 100]} hundred")
        if amount > 1000:
            plain.add(f"{amount / 1000:.1f}k")
    variants = [f"{symbol}{p}" for p in sorted(plain)]
    variants += [f"{p} {code}" for p in sorted(plain)] + [f"{code} {p}" for p in sorted(plain)]
    for word in words:
        variants += [f"{p} {word}" for p in sorted(plain | spoken)]
    return variants + grand


@lru_cache(maxsize=1)
def _by_phrase() -> dict[str, tuple[str, ...]]:
    index: dict[str, tuple[str, ...]] = {}
    for group in LEXICON_GROUPS:
        for phrase in group:
            index[normalise(phrase)] = index.get(normalise(phrase), ()) + group
    return index


def expand_phrases(phrases: Iterable[str]) -> tuple[str, ...]:
    """``phrases`` followed by every lexicon paraphrase of them, without duplicates, in order.

    Args:
        phrases: One value's spellings (its text and aliases).
    """
    index = _by_phrase()
    seen: dict[str, str] = {}
    given = [p for p in phrases if p and p.strip()]
    for phrase in given:
        seen.setdefault(normalise(phrase), phrase)
    for phrase in given:
        for other in index.get(normalise(phrase), ()):
            seen.setdefault(normalise(other), other)
    for phrase in list(seen.values()):
        for other in _third_person(phrase):
            seen.setdefault(normalise(other), other)
    # A sum of money is never a weight: "3000 pounds" beside "£3,000" is sterling.
    money = any(_R["money"].match(p) for p in seen.values())
    for phrase in list(seen.values()):
        units = [] if money else _unit_variants(phrase)
        for other in (*units, *_money_variants(phrase), *_acronyms(phrase)):
            if normalise(other):
                seen.setdefault(normalise(other), other)
    return tuple(seen.values())


def _acronyms(phrase: str) -> list[str]:
    """The initials of a name of three or more capitalised words.

    "National Health Service" → "NHS"; shorter initials are too often another name's.
    """
    words = [w for w in phrase.replace("-", " ").split() if w.lower() not in _WORDS["acronym-skip"]]
    if len(words) < 3 or not all(w[:1].isupper() and w[1:2].islower() for w in words):
        return []
    return ["".join(w[0] for w in words)]


def _third_person(phrase: str) -> list[str]:
    """A first-person negative habit as said of someone else.

    "don't eat meat" → "doesn't eat meat", "does not eat meat", "never eats meat".
    """
    match = _R["plain-negative"].match(phrase.strip())
    if not match:
        return []
    verb, rest = match.group(1), match.group(2)
    verb_s = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")
    return [f"doesn't {verb}{rest}", f"does not {verb}{rest}", f"never {verb_s}{rest}"]
