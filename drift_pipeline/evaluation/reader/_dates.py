"""Dates and periods as memories write them and as answers name them, read into ISO text.

Full dates: ``2027-03-01`` (with an optional ``T09:00`` or `` 09:00``), ``2027/03/01``, ``1 March
2027``, ``1st of March 2027``, ``March 1, 2027``, ``Mar 1st 2027``, ``01.03.2027`` (day first)
and a bare month ``2027-03`` or ``March 2027`` (read as its first day). Slash dates with the year
last are read when one part cannot be a month (``18/09/2027``); ``03/01/2027`` is not read.

People date events by the day they speak: "I went to a support group yesterday", said on 8 May
2023, dates the event 7 May; "my school talk last week", said on 9 June 2023, dates it to the
week before. A day and month without a year, and such time words, are read only from the date
of the line they were said on: a context without dates is not guessed at.

A period travels as text: a day as ``YYYY-MM-DD``, a span as the ISO 8601 interval
``YYYY-MM-DD/YYYY-MM-DD`` (both ends included), so a span sorts by its first day among dates.
An answer may name a day or a period ("7 May 2023", "June 2023", "the week before 9 June 2023"),
and :func:`period_credited` decides whether a reading's period names the answer's, with the one
tolerance of :data:`COARSEST_CREDITED_DAYS`.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final, Literal

from ._rules import RULES, Alternative, TimeUnit

__all__ = [
    "COARSEST_CREDITED_DAYS",
    "DATE_PATTERN",
    "Period",
    "answer_period",
    "answer_periods",
    "dates_in",
    "find_dates",
    "find_periods",
    "find_relative",
    "is_period",
    "parse_date",
    "period_credited",
]

_R = RULES.patterns
DATE_PATTERN = RULES.pattern("date-pattern")
_MONTHS, _COUNTS = RULES.offsets("month-names"), RULES.offsets("count-words")
_WEEKDAYS = RULES.offsets("weekdays")
# Time words of a table ("yesterday", "last week", "a few days ago"): the unit they name, how
# many units from the speaking day they point and a span's far end; the units a count may go
# with ("two weekends ago"); seasons by their months.
_NAMED = {
    word: row
    for table in ("day-words", "relative-words", "few-days")
    for row in RULES.tables[table]
    for word in row.spellings
}
_COUNTED = {w: r.unit or "day" for r in RULES.tables["counted-units"] for w in r.spellings}
_DAY_UNITS = RULES.offsets("day-units")  # days and weeks a count of days goes with, in days
_SEASONS = {w: (r.offset, r.to or r.offset) for r in RULES.tables["seasons"] for w in r.spellings}

COARSEST_CREDITED_DAYS: Final = 7
"""The one tolerance of the temporal judge.

A reading is credited when it lies inside the answer's period, or when it is at most this many
days long and either holds the answer or, the answer being week-scale too, shares a day with
it. So "last week" said on 8 May is credited for an event on 7 May, a day inside "the week
before 9 June" is credited for it, and the calendar week before 9 June (Monday to Sunday) is
credited for "the week before 9 June" (the seven days before it): people count weeks from
different days. "Last month" or "this year" is not an answer to a question whose answer is a
day, however right it may be, and a week that straddles the end of a month is not that month.
A week is the coarsest a careful grader accepts for a dated event: it is what the speaker gave
when all they said was "last week", and finer than any month or season.
"""


def iso_day(year: str, month: int | str, day: str) -> str | None:
    """The ISO date of a year, month and day (``None`` when there is no such day)."""
    try:
        return date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def _parts(match: re.Match[str]) -> dict[str, str]:
    """The groups a match found, by name without the number that tells a pattern's forms apart."""
    return {name.rstrip("0123456789"): text for name, text in match.groupdict().items() if text}


def _from_match(match: re.Match[str]) -> str | None:
    part = _parts(match)
    if "a" in part:  # day first or month first: only when one cannot be a month
        first, second = int(part["a"]), int(part["b"])
        if first > 12 >= second:
            return iso_day(part["y"], second, str(first))
        return iso_day(part["y"], first, str(second)) if second > 12 >= first else None
    number = part["m"] if part["m"].isdigit() else _MONTHS[part["m"].lower()]
    return iso_day(part["y"], number, part.get("d", "1"))


def find_dates(text: str) -> list[tuple[int, int, str]]:
    """Every readable date in ``text`` as ``(start, end, iso)``, in order."""
    if not _R["year"].search(text):
        return []
    found = ((m.start(), m.end(), _from_match(m)) for m in DATE_PATTERN.finditer(text))
    return [(start, end, iso) for start, end, iso in found if iso is not None]


def parse_date(text: str) -> str | None:
    """The first readable date in ``text`` as ``YYYY-MM-DD``, or ``None``."""
    dates = find_dates(text)
    return dates[0][2] if dates else None


def _yearless(text: str, year: str) -> list[tuple[int, int, str]]:
    """Day-and-month dates without a year in ``text``, given the year they fall in."""
    found = []
    for match in _R["yearless"].finditer(text):
        part = _parts(match)
        iso = iso_day(year, _MONTHS[part["m"].lower()], part["d"])
        if iso is not None:
            found.append((match.start(), match.end(), iso))
    return found


def _count(text: str) -> int:
    """The number a count is written as: digits, or a word of the ``count-words`` table."""
    return int(text) if text.isdigit() else _COUNTS[text.lower()]


def _weekday(day: date, weekday: int, back: bool) -> date:
    """The nearest ``weekday`` (Monday 0) strictly before ``day`` (``back``), else after it."""
    if back:
        return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)
    return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


@dataclass(frozen=True, order=True)
class Period:
    """A day or a span of days, both ends included."""

    first: date
    last: date

    @property
    def days(self) -> int:
        """How many days it spans."""
        return (self.last - self.first).days + 1

    def text(self) -> str:
        """``YYYY-MM-DD`` for a day, ``YYYY-MM-DD/YYYY-MM-DD`` for a span."""
        first = self.first.isoformat()
        return first if self.first == self.last else f"{first}/{self.last.isoformat()}"

    @classmethod
    def parse(cls, text: str) -> Period | None:
        """Read :meth:`text`'s form back (``None`` when it is neither a day nor a span)."""
        first, _, last = text.partition("/")
        try:
            start = date.fromisoformat(first)
            end = date.fromisoformat(last) if last else start
        except ValueError:
            return None
        return cls(start, end) if start <= end else None


def _day(day: date) -> Period:
    return Period(day, day)


def _month(year: int, month: int, shift: int = 0) -> Period:
    year, month = divmod(year * 12 + month - 1 + shift, 12)
    return Period(
        date(year, month + 1, 1), date(year, month + 1, calendar.monthrange(year, month + 1)[1])
    )


def _season(name: str, year: int) -> Period:
    """The season ``name`` of ``year`` (a winter is the one that ends in ``year``)."""
    start, end = _SEASONS[name]
    return Period(_month(year - 1 if start > end else year, start).first, _month(year, end).last)


def _unit_period(unit: TimeUnit, day: date, shift: int, to: int | None = None) -> Period:
    """The ``unit`` (day, calendar week, weekend, month, year, season) ``shift`` from ``day``.

    A weekend ``-1`` is the last one over before ``day``, ``0`` the one of its week; a season
    ``-1`` is the last such season ended before ``day``, ``+1`` the first to begin after it.
    """
    if unit == "day":  # the days from ``shift`` to ``to`` (one day when there is no ``to``)
        end = shift if to is None else to
        return Period(day + timedelta(days=shift), day + timedelta(days=end))
    monday = day - timedelta(days=day.weekday())
    if unit == "week":
        return Period(monday + timedelta(weeks=shift), monday + timedelta(weeks=shift, days=6))
    if unit == "weekend":
        saturday = monday + timedelta(days=5)
        if shift < 0:  # this week's when it has ended before the day, else earlier
            last = saturday if saturday + timedelta(days=1) < day else saturday - timedelta(weeks=1)
            saturday = last + timedelta(weeks=shift + 1)
        else:
            saturday += timedelta(weeks=shift)
        return Period(saturday, saturday + timedelta(days=1))
    if unit == "month":
        return _month(day.year, day.month, shift)
    if unit == "year":
        return Period(date(day.year + shift, 1, 1), date(day.year + shift, 12, 31))
    if shift == 0:
        return _season(unit, day.year + (unit == "winter" and day.month == 12))
    year = day.year + 1
    while _season(unit, year).last >= day:
        year -= 1
    if shift < 0:
        return _season(unit, year + shift + 1)
    while _season(unit, year).first <= day:
        year += 1
    return _season(unit, year + shift - 1)


def _resolved(match: re.Match[str], day: date) -> Period | None:
    """The day or period a match of ``relative-day`` or ``time-words`` names from ``day``.

    Each named group says how: a word of a table (``word``, ``fixed``, ``few``), a count of
    units (``n`` with ``counted``, or with ``unit``: days or weeks, back when ``back``), a
    weekday after ``which`` ("on Sunday" may be either way: not read) or an ordinal day.
    """
    found = {name: text.lower() for name, text in _parts(match).items()}
    if named := found.get("word") or found.get("fixed") or found.get("few"):
        row = _NAMED[named]
        return _unit_period(row.unit or "day", day, row.offset, row.to)
    if "counted" in found:
        return _unit_period(_COUNTED[found["counted"]], day, -_count(found["n"]))
    if "unit" in found:
        size = _count(found["n"]) * _DAY_UNITS[found["unit"]]
        return _unit_period("day", day, -size if "back" in found else size)
    if "weekday" in found:
        which = found.get("which", "last")
        back = which in ("last", "this past")
        return None if which == "on" else _day(_weekday(day, _WEEKDAYS[found["weekday"]], back))
    # The next such day: this month's, or next month's when it has passed.
    month = _month(day.year, day.month, int(found["day"]) < day.day).first
    iso = iso_day(str(month.year), month.month, found["day"])
    return _day(date.fromisoformat(iso)) if iso else None


def _find_from(rule_id: str, text: str, today: str) -> list[tuple[int, int, str]]:
    """The matches of a time-word rule in ``text``, resolved against ``today`` (a day)."""
    spoken = Period.parse(today)
    if spoken is None or spoken.days != 1:
        return []
    found = ((m, _resolved(m, spoken.first)) for m in _R[rule_id].finditer(text))
    return [(m.start(), m.end(), period.text()) for m, period in found if period is not None]


def find_relative(text: str, today: str) -> list[tuple[int, int, str]]:
    """Days given relative to the line's own date ``today`` (ISO).

    "tomorrow", "yesterday", "three days ago", "a week from today", "in two weeks", "next
    Tuesday", "last Friday", and "on the 9th" (this month, or the next when the day has passed).
    "On Sunday" may be the last one or the next: it is not read.
    """
    return _find_from("relative-day", text, today)


def find_periods(text: str, today: str) -> list[tuple[int, int, str]]:
    """Time words in ``text`` resolved against the day it was said, ``today`` (ISO).

    Returns ``(start, end, period)`` for each, in order, the period as :meth:`Period.text`
    writes it; nothing when ``today`` is not a day.
    """
    return _find_from("time-words", text, today)


def dates_in(
    text: str, known: str, year: str = "", more: Literal["", "ordinal", "period"] = "ordinal"
) -> list[tuple[int, int, str]]:
    """Full dates in ``text``, else those read with the date ``known`` (or only its ``year``).

    A day and month take the year ("started on Feb 1"), "tomorrow" is read from the day; then,
    as ``more`` says, a bare ordinal ("on the 9th") falls in the same month, or a period ("last
    week", "two weekends ago") is read from the day.
    """
    found = find_dates(text)
    if not found and (known or year):
        found = _yearless(text, known[:4] or year)
    if not found and known:
        found = find_relative(text, known)
    if not found and known and more == "period":
        found = find_periods(text, known)
    if not found and known and more == "ordinal":
        found = [
            (m.start(), m.end(), iso)
            for m in _R["bare-ordinal"].finditer(text)
            if (iso := iso_day(known[:4], known[5:7], m.group(1))) is not None
        ]
    return found


def _rows(rule_id: str) -> list[tuple[re.Pattern[str], Alternative]]:
    """Each phrase of a rule, to be matched whole, with its row."""
    rows = RULES.rule(rule_id).alternatives or []
    return [(re.compile(rf"^(?:{RULES.expand(row.p)})\s*$", re.IGNORECASE), row) for row in rows]


_MONTH_PARTS, _RELATIONS = _rows("answer-month-part"), _rows("answer-relation")


def _relative_to(row: Alternative, match: re.Match[str], anchor: date) -> Period | None:
    """The period a row of ``answer-relation`` takes from the answer's day ``anchor``."""
    groups = _parts(match)
    count = 1
    if "n" in groups:
        key = groups["n"].lower()
        if not (key.isdigit() or key in _COUNTS):
            return None
        # "0 weekends before" is read as the last one, "0 days before" as the day itself.
        count = _count(key) or (1 if row.unit == "weekend" else 0)
    shift = row.offset * count
    if row.unit in ("day", "week", "weekend"):
        return _unit_period(row.unit, anchor, shift, row.to)
    if row.unit == "next-weekend":
        saturday = _weekday(anchor, 5, False)
        return Period(saturday, saturday + timedelta(days=1))
    return _day(_weekday(anchor, _WEEKDAYS[groups["weekday"].lower()], shift < 0))


def _month_part(row: Alternative, month: Period) -> Period:
    """The days of ``month`` that a row of ``answer-month-part`` names."""
    if row.unit == "weekend":
        days = range(1, month.last.day)
        saturdays = [d for d in days if month.first.replace(day=d).weekday() == 5]
        saturday = month.first.replace(day=saturdays[row.offset])
        return Period(saturday, saturday + timedelta(days=1))

    def day(number: int) -> date:
        return month.first.replace(day=number) if number > 0 else month.last + timedelta(number)

    return Period(day(row.offset), day(row.to or 0))


def _only_date(text: str) -> tuple[re.Match[str], Period, bool] | None:
    """The only date in ``text``: its match, its period (a day or a month) and whether a day."""
    found = [(m, iso) for m in DATE_PATTERN.finditer(text) for iso in find_dates(m.group(0))[:1]]
    if len(found) != 1:
        return None
    match, (_, _, iso) = found[0]
    day = date.fromisoformat(iso)
    month = not {"d", "a"} & _parts(match).keys()  # a month form, else a day or slash date
    return match, _month(day.year, day.month) if month else _day(day), not month


def answer_period(text: str) -> Period | None:
    """The day or period an answer names, or ``None`` when it names none this module reads.

    A day ("7 May 2023", "May 7, 2022"), a month ("June 2023", "early August, 2023", "the last
    week of May 2023"), a season or a year ("summer 2022", "in 2022"), a span ("between 26 March
    and 20 April 2023", "November 5-6, 2022"), or a period told from a day ("the week before
    9 June 2023", "the Friday before 15 July 2023", "two weekends before 17 July 2023", "a few
    days before 19 August, 2023"). An answer with words around its date that it does not
    understand names nothing: "the week before 9 June" is never read as 9 June.
    """
    cleaned = " ".join(str(text).split()).strip(" .;:!?`'\"")
    cleaned = _R["answer-glued-year"].sub(", ", cleaned.replace("`", ""))  # "24 August,2023"
    cleaned = _R["answer-glued-month"].sub(" ", cleaned)  # "24June, 2022"
    body = cleaned[_R["answer-lead"].match(cleaned).end() :]  # type: ignore[union-attr]
    if not body:
        return None
    if year := _R["answer-year"].match(body):
        value = int(year.group("year"))
        return Period(date(value, 1, 1), date(value, 12, 31))
    if season := _R["answer-season"].match(body):
        return _season(season.group("season").lower(), int(season.group("year")))
    if span := _R["answer-range"].match(body):
        part = _parts(span)
        first = find_dates(f"{part['first']} {part['m']} {part['y']}")
        last = find_dates(f"{part['last']} {part['m']} {part['y']}")
        if first and last and first[0][2] <= last[0][2]:
            return Period(date.fromisoformat(first[0][2]), date.fromisoformat(last[0][2]))
        return None
    if between := _R["answer-between"].match(body):
        end = answer_period(between.group("b"))
        start = end and (
            answer_period(between.group("a"))
            or answer_period(f"{between.group('a')} {end.last.year}")
        )
        return Period(start.first, end.last) if end and start and start.first <= end.last else None
    found = _only_date(body)
    if found is None or body[found[0].end() :].strip(" ,"):
        return None
    match, period, is_day = found
    before = body[: match.start()].strip(" ,")
    before = before[_R["answer-lead"].match(before).end() :]  # type: ignore[union-attr]
    if not before:
        return period
    for pattern, row in _RELATIONS if is_day else _MONTH_PARTS:
        if words := pattern.match(before):
            return _relative_to(row, words, period.first) if is_day else _month_part(row, period)
    return None


def is_period(text: str | None) -> bool:
    """Whether ``text`` is a span of days as :meth:`Period.text` writes it (not a single day)."""
    return bool(text) and "/" in str(text) and Period.parse(str(text)) is not None


def answer_periods(texts: Iterable[str]) -> frozenset[str]:
    """The periods (as text) that the answer and its spellings name."""
    return frozenset(p.text() for p in map(answer_period, texts) if p is not None)


def period_credited(reading: str, answers: Iterable[str]) -> bool:
    """Whether the reading's day or period names one of the answers' periods.

    Credited when it lies inside an answer's period, or when it is week-scale and holds the
    answer or shares a day with a week-scale answer (:data:`COARSEST_CREDITED_DAYS` says why).
    """
    read = Period.parse(reading)
    if read is None:
        return False
    week_scale = read.days <= COARSEST_CREDITED_DAYS
    for answer in filter(None, map(Period.parse, answers)):
        inside = answer.first <= read.first and read.last <= answer.last
        shared = read.first <= answer.last and answer.first <= read.last
        holds = read.first <= answer.first and answer.last <= read.last
        if inside or (week_scale and (holds or (shared and answer.days <= COARSEST_CREDITED_DAYS))):
            return True
    return False
