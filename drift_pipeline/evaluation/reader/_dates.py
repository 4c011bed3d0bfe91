"""Dates as memories write them, read into ISO ``YYYY-MM-DD`` strings.

Forms understood: ``2027-03-01`` (with an optional ``T09:00`` or `` 09:00``), ``2027/03/01``,
``1 March 2027``, ``1st of March 2027``, ``March 1, 2027``, ``Mar 1st 2027``, ``01.03.2027``
(day first, the European order) and a bare month ``2027-03`` or ``March 2027`` (read as its
first day). Slash dates with the year last are read when one part cannot be a month
(``18/09/2027``, ``09/18/2027``); ``03/01/2027`` is ambiguous and is not read. A date without
a year is read only where the line's own date gives the year (:func:`find_yearless`).
"""

from __future__ import annotations

import re
from datetime import date

from ._rules import RULES

_R = RULES.patterns

__all__ = [
    "DATE_PATTERN",
    "DATE_TEXT",
    "find_dates",
    "find_relative",
    "find_yearless",
    "parse_date",
]

_MONTHS = {word: row.offset for row in RULES.tables["month-names"] for word in row.spellings}
DATE_PATTERN = RULES.pattern("date-pattern")
DATE_TEXT = re.sub(r"\(\?P<\w+>", "(?:", DATE_PATTERN.pattern)
"""The same pattern without group names, for embedding in other patterns (case-insensitive)."""


def _iso(year: str, month: int | str, day: str) -> str | None:
    try:
        return date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def _from_match(match: re.Match[str]) -> str | None:
    if match.group("iso"):
        return _iso(match.group("y1"), match.group("m1"), match.group("d1"))
    if match.group("dmy"):
        return _iso(match.group("y2"), _MONTHS[match.group("m2").lower()], match.group("d2"))
    if match.group("mdy"):
        return _iso(match.group("y3"), _MONTHS[match.group("m3").lower()], match.group("d3"))
    if match.group("slash"):
        # Day first or month first: read only when one of the two cannot be a month.
        first, second = int(match.group("a6")), int(match.group("b6"))
        if first > 12 >= second:
            return _iso(match.group("y6"), second, str(first))
        if second > 12 >= first:
            return _iso(match.group("y6"), first, str(second))
        return None
    if match.group("ym"):  # a month ("valid 2026-09 → 2027-02") is dated by its first day
        return _iso(match.group("y5"), match.group("m5"), "1")
    if match.group("mmy"):  # "03/2025": a month written as numbers
        return _iso(match.group("y8"), match.group("m8"), "1")
    if match.group("my"):  # "since March 2027", "Oct 2026 — …": the month's first day
        return _iso(match.group("y7"), _MONTHS[match.group("m7").lower()], "1")
    return _iso(match.group("y4"), match.group("m4"), match.group("d4"))


def find_yearless(text: str, year: str) -> list[tuple[int, int, str]]:
    """Day-and-month dates without a year in ``text``, given the year they fall in."""
    found = []
    for match in _R["yearless"].finditer(text):
        month = match.group("m") or match.group("m2")
        day = match.group("d") or match.group("d2")
        iso = _iso(year, _MONTHS[month.lower()], day)
        if iso is not None:
            found.append((match.start(), match.end(), iso))
    return found


_COUNTS = {word: row.offset for row in RULES.tables["count-words"] for word in row.spellings}
_WEEKDAYS = {word: row.offset for row in RULES.tables["weekdays"] for word in row.spellings}
_DAY_WORDS = {word: row.offset for row in RULES.tables["day-words"] for word in row.spellings}
_RELATIVE = RULES.pattern("relative-day")


def _count(text: str) -> int:
    key = text.lower()
    return int(key) if key.isdigit() else _COUNTS[key]


def find_relative(text: str, today: str) -> list[tuple[int, int, str]]:
    """Dates given relative to the line's own date ``today`` (ISO).

    "tomorrow", "yesterday", "today", "three days ago", "a week from today", "in two weeks",
    "next Tuesday", "last Friday", and "on the 9th" (this month, or the next when the day has
    passed).
    """
    try:
        base = date.fromisoformat(today)
    except ValueError:
        return []
    found = []
    for match in _RELATIVE.finditer(text):
        word = (match.group("word") or "").lower()
        if word:
            shift = _DAY_WORDS[word]
            found.append((match.start(), match.end(), date.fromordinal(base.toordinal() + shift)))
            continue
        if match.group("unit") or match.group("unit2"):
            unit = match.group("unit") or match.group("unit2")
            size = _count(match.group("n") or match.group("n2")) * (
                7 if unit.lower().startswith("week") else 1
            )
            back = (match.group("dir") or "").lower() in ("ago", "before", "earlier")
            shift = -size if back else size
            found.append((match.start(), match.end(), date.fromordinal(base.toordinal() + shift)))
            continue
        if match.group("weekday"):
            target = _WEEKDAYS[match.group("weekday").lower()]
            which = match.group("which").lower()
            if which == "last":
                shift = -((base.weekday() - target - 1) % 7 + 1)
            elif which == "on":
                continue  # "on Sunday" may be the last one or the next: not read
            else:  # "this coming Tuesday", "next Tuesday", "this Tuesday": the next one
                shift = (target - base.weekday() - 1) % 7 + 1
            found.append((match.start(), match.end(), date.fromordinal(base.toordinal() + shift)))
            continue
        day = int(match.group("day"))
        year, month = base.year, base.month
        if day < base.day:
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        iso = _iso(str(year), month, str(day))
        if iso is not None:
            found.append((match.start(), match.end(), date.fromisoformat(iso)))
    return [(start, end, day.isoformat()) for start, end, day in found]


def find_dates(text: str) -> list[tuple[int, int, str]]:
    """Every readable date in ``text`` as ``(start, end, iso)``, in order."""
    if not _R["year"].search(text):
        return []
    found = []
    for match in DATE_PATTERN.finditer(text):
        iso = _from_match(match)
        if iso is not None:
            found.append((match.start(), match.end(), iso))
    return found


def parse_date(text: str) -> str | None:
    """The first readable date in ``text`` as ``YYYY-MM-DD``, or ``None``."""
    dates = find_dates(text)
    return dates[0][2] if dates else None
