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
from datetime import date, timedelta

from ._rules import RULES

_R = RULES.patterns

__all__ = [
    "DATE_PATTERN",
    "count_of",
    "find_dates",
    "find_relative",
    "find_yearless",
    "iso_day",
    "last_weekday",
    "next_weekday",
    "parse_date",
]

_MONTHS, _COUNTS = RULES.offsets("month-names"), RULES.offsets("count-words")
_WEEKDAYS, _DAY_WORDS = RULES.offsets("weekdays"), RULES.offsets("day-words")
DATE_PATTERN = RULES.pattern("date-pattern")


def iso_day(year: str, month: int | str, day: str) -> str | None:
    """The ISO date of a year, month and day (``None`` when there is no such day)."""
    try:
        return date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


# Each form of the date pattern: its group, then the groups of its year, month and day. A
# month alone ("2026-09", "03/2025", "since March 2027") is dated by its first day.
_FORMS = (
    ("iso", "y1", "m1", "d1"),
    ("dmy", "y2", "m2", "d2"),
    ("mdy", "y3", "m3", "d3"),
    ("dots", "y4", "m4", "d4"),
    ("ym", "y5", "m5", ""),
    ("my", "y7", "m7", ""),
    ("mmy", "y8", "m8", ""),
)


def _from_match(match: re.Match[str]) -> str | None:
    if match.group("slash"):
        # Day first or month first: read only when one of the two cannot be a month.
        first, second = int(match.group("a6")), int(match.group("b6"))
        if first > 12 >= second:
            return iso_day(match.group("y6"), second, str(first))
        if second > 12 >= first:
            return iso_day(match.group("y6"), first, str(second))
        return None
    _, year, month, day = next(form for form in _FORMS if match.group(form[0]))
    named = match.group(month)
    number = named if named.isdigit() else _MONTHS[named.lower()]
    return iso_day(match.group(year), number, match.group(day) if day else "1")


def last_weekday(day: date, weekday: int) -> date:
    """The latest ``weekday`` (Monday 0) strictly before ``day``."""
    return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def next_weekday(day: date, weekday: int) -> date:
    """The first ``weekday`` (Monday 0) strictly after ``day``."""
    return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def find_yearless(text: str, year: str) -> list[tuple[int, int, str]]:
    """Day-and-month dates without a year in ``text``, given the year they fall in."""
    found = []
    for match in _R["yearless"].finditer(text):
        month = match.group("m") or match.group("m2")
        day = match.group("d") or match.group("d2")
        iso = iso_day(year, _MONTHS[month.lower()], day)
        if iso is not None:
            found.append((match.start(), match.end(), iso))
    return found


_RELATIVE = RULES.pattern("relative-day")


def count_of(text: str) -> int:
    """The number a count is written as: digits, or a word of the ``count-words`` table."""
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
            size = count_of(match.group("n") or match.group("n2")) * (
                7 if unit.lower().startswith("week") else 1
            )
            back = (match.group("dir") or "").lower() in ("ago", "before", "earlier")
            shift = -size if back else size
            found.append((match.start(), match.end(), date.fromordinal(base.toordinal() + shift)))
            continue
        if match.group("weekday"):
            target = _WEEKDAYS[match.group("weekday").lower()]
            which = match.group("which").lower()
            if which == "on":
                continue  # "on Sunday" may be the last one or the next: not read
            # "this coming Tuesday", "next Tuesday", "this Tuesday": the next one
            step = last_weekday if which == "last" else next_weekday
            found.append((match.start(), match.end(), step(base, target)))
            continue
        day = int(match.group("day"))
        year, month = base.year, base.month
        if day < base.day:
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        iso = iso_day(str(year), month, str(day))
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
