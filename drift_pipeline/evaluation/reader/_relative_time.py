"""Time words resolved against the day a line was said, and answers that name a period.

People date events by the day they speak: "I went to a support group yesterday", said on
8 May 2023, dates the event 7 May 2023; "my school talk last week", said on 9 June 2023, dates it
to the week before. :func:`find_periods` reads such words in a line, given the line's own date,
into a :class:`Period` (a day or a span of days). :func:`answer_period` reads an answer that
names a date or a period ("7 May 2023", "June 2023", "2022", "the week before 9 June 2023",
"the Friday before 15 July 2023"), and :func:`period_credited` decides whether a reading's
period names the answer's, with the one tolerance of :data:`COARSEST_CREDITED_DAYS`.

A period travels as text: a day as ``YYYY-MM-DD``, a span as the ISO 8601 interval
``YYYY-MM-DD/YYYY-MM-DD`` (both ends included), so a span sorts by its first day among dates.

The word tables below are plain data: each row names the words, the unit they count in and how
many units from the speaking day they point (``-1`` the one before, ``0`` the current one,
``+1`` the next). Nothing is resolved without the line's own date: a context without dates is
not guessed at.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final

from ._dates import DATE_PATTERN, count_of, find_dates, last_weekday, next_weekday
from ._rules import RULES, Alternative, TimeUnit, TimeWord

__all__ = [
    "COARSEST_CREDITED_DAYS",
    "RELATIVE_WORDS",
    "Period",
    "answer_period",
    "answer_periods",
    "find_periods",
    "is_period",
    "period_credited",
]

Unit = TimeUnit


def _by_word(rule_id: str) -> dict[str, TimeWord]:
    """A table rule's rows by each of their spellings."""
    return {word: row for row in RULES.tables[rule_id] for word in row.spellings}


def _unit(row: TimeWord) -> Unit:
    assert row.unit is not None, row  # the rules file gives every such row its unit
    return row.unit


RELATIVE_WORDS: Final = {w: (_unit(r), r.offset) for w, r in _by_word("relative-words").items()}
"""Fixed time words ("last week"): the unit they name and how many units from the speaking day."""
COUNTED_UNITS: Final = {w: _unit(r) for w, r in _by_word("counted-units").items()}
"""Units a count may go with ("two weekends ago"); days and weeks counted back are dates."""
COUNT_WORDS: Final = RULES.offsets("count-words")
_FEW = RULES.tables["few-days"][0]
FEW_DAYS: Final = (-(_FEW.to or 0), -_FEW.offset)
""""A few days ago": from six days before the speaking day to two days before."""
WEEKDAYS: Final = RULES.offsets("weekdays")
SEASON_MONTHS: Final = {w: (r.offset, r.to or r.offset) for w, r in _by_word("seasons").items()}
"""Seasons by their first and last months (winter runs from December into February)."""

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
        if self.first == self.last:
            return self.first.isoformat()
        return f"{self.first.isoformat()}/{self.last.isoformat()}"

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


def _week(day: date, shift: int) -> Period:
    """The calendar week (Monday to Sunday) ``shift`` weeks from the one holding ``day``."""
    monday = day - timedelta(days=day.weekday()) + timedelta(weeks=shift)
    return Period(monday, monday + timedelta(days=6))


def _weekend(day: date, shift: int) -> Period:
    """A Saturday and Sunday counted from ``day``.

    ``-1`` is the last one over before ``day``, ``0`` the one of its week (the coming one, or
    the one under way), ``+1`` the one after that.
    """
    saturday = day - timedelta(days=day.weekday()) + timedelta(days=5)  # this week's Saturday
    if shift < 0:
        # The last weekend over: this week's when it has ended before the day, else earlier.
        last = saturday if saturday + timedelta(days=1) < day else saturday - timedelta(weeks=1)
        saturday = last + timedelta(weeks=shift + 1)
    else:
        saturday += timedelta(weeks=shift)
    return Period(saturday, saturday + timedelta(days=1))


def _month(year: int, month: int, shift: int = 0) -> Period:
    index = year * 12 + (month - 1) + shift
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return Period(date(year, month + 1, 1), date(year, month + 1, last))


def _season(name: str, year: int) -> Period:
    """The season ``name`` of ``year`` (a winter is the one that ends in ``year``)."""
    start, end = SEASON_MONTHS[name]
    first_year = year - 1 if start > end else year
    return Period(_month(first_year, start).first, _month(year, end).last)


def _season_from(name: str, day: date, shift: int) -> Period:
    """The season ``name`` counted from ``day``.

    ``-1`` is the last such season ended before ``day``, ``0`` the one of its year, ``+1`` the
    first one to begin after it.
    """
    if shift == 0:
        current = _season(name, day.year)
        if name == "winter" and day.month == 12:
            current = _season(name, day.year + 1)
        return current
    year = day.year + 1
    while _season(name, year).last >= day:
        year -= 1
    if shift < 0:
        return _season(name, year + shift + 1)
    while _season(name, year).first <= day:
        year += 1
    return _season(name, year + shift - 1)


def _unit_period(unit: Unit, day: date, shift: int) -> Period:
    if unit == "day":
        return _day(day + timedelta(days=shift))
    if unit == "week":
        return _week(day, shift)
    if unit == "weekend":
        return _weekend(day, shift)
    if unit == "month":
        return _month(day.year, day.month, shift)
    if unit == "year":
        return Period(date(day.year + shift, 1, 1), date(day.year + shift, 12, 31))
    return _season_from(unit, day, shift)


_FIXED = RELATIVE_WORDS
_WORDS = RULES.pattern("time-words")


def find_periods(text: str, today: str) -> list[tuple[int, int, str]]:
    """Time words in ``text`` resolved against the day it was said, ``today`` (ISO).

    Returns ``(start, end, period)`` for each, in order, the period as :meth:`Period.text`
    writes it; nothing when ``today`` is not a date.
    """
    spoken = Period.parse(today)
    if spoken is None or spoken.days != 1:
        return []
    day = spoken.first
    found: list[tuple[int, int, str]] = []
    for match in _WORDS.finditer(text):
        if match.group("fixed"):
            unit, shift = _FIXED[match.group("fixed").lower()]
            period = _unit_period(unit, day, shift)
        elif match.group("unit"):
            period = _unit_period(
                COUNTED_UNITS[match.group("unit").lower()], day, -count_of(match.group("n"))
            )
        elif match.group("few"):
            period = Period(day - timedelta(days=FEW_DAYS[1]), day - timedelta(days=FEW_DAYS[0]))
        else:
            period = _day(last_weekday(day, WEEKDAYS[match.group("weekday").lower()]))
        found.append((match.start(), match.end(), period.text()))
    return found


# Answers: a date, or a period told relative to one ("the week before 9 June 2023").
_GLUED_MONTH, _LEAD = RULES.pattern("answer-glued-month"), RULES.pattern("answer-lead")
_YEAR_ONLY, _SEASON = RULES.pattern("answer-year"), RULES.pattern("answer-season")
_RANGE_SAME_MONTH, _BETWEEN = RULES.pattern("answer-range"), RULES.pattern("answer-between")


def _rows(rule_id: str) -> list[tuple[re.Pattern[str], Alternative]]:
    """Each phrase of a rule, to be matched whole, with its row."""
    rows = RULES.rule(rule_id).alternatives or []
    return [(re.compile(rf"^(?:{RULES.expand(row.p)})\s*$", re.IGNORECASE), row) for row in rows]


_MONTH_PARTS, _RELATIONS = _rows("answer-month-part"), _rows("answer-relation")
_DAY_FORMS = ("iso", "dmy", "mdy", "dots", "slash")
_MONTH_FORMS = ("my", "ym", "mmy")


def _clean(text: str) -> str:
    text = " ".join(str(text).split()).strip(" .;:!?`'\"")
    text = re.sub(r",(?=\d)", ", ", text.replace("`", ""))  # "24 August,2023"
    return _GLUED_MONTH.sub(" ", text)  # "24June, 2022"


def _relative_to(row: Alternative, match: re.Match[str], anchor: date) -> Period | None:
    """The period a row of ``answer-relation`` takes from the answer's day ``anchor``."""
    groups = {name.rstrip("0123456789"): text for name, text in match.groupdict().items() if text}
    count = 1
    if "n" in groups:
        key = groups["n"].lower()
        if not (key.isdigit() or key in COUNT_WORDS):
            return None
        # "0 weekends before" is read as the last one, "0 days before" as the day itself.
        count = count_of(key) or (1 if row.unit == "weekend" else 0)
    shift = row.offset * count
    if row.unit == "day":
        last = shift if row.to is None else row.to
        return Period(anchor + timedelta(days=shift), anchor + timedelta(days=last))
    if row.unit in ("week", "weekend"):
        return _unit_period(row.unit, anchor, shift)
    if row.unit == "next-weekend":
        saturday = next_weekday(anchor, 5)
        return Period(saturday, saturday + timedelta(days=1))
    weekday = WEEKDAYS[groups["weekday"].lower()]
    step = last_weekday if shift < 0 else next_weekday
    return _day(step(anchor, weekday))


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


def _one_date(text: str) -> tuple[re.Match[str], Period, bool] | None:
    """The only date in ``text``: its match, its period and whether it is a day."""
    matches = [m for m in DATE_PATTERN.finditer(text) if _match_period(m) is not None]
    if len(matches) != 1:
        return None
    period = _match_period(matches[0])
    assert period is not None
    return matches[0], period, any(matches[0].group(form) for form in _DAY_FORMS)


def _match_period(match: re.Match[str]) -> Period | None:
    found = find_dates(match.group(0))
    if not found:
        return None
    day = date.fromisoformat(found[0][2])
    if any(match.group(form) for form in _MONTH_FORMS):
        return _month(day.year, day.month)
    return _day(day)


def answer_period(text: str) -> Period | None:
    """The day or period an answer names, or ``None`` when it names none this module reads.

    A day ("7 May 2023", "May 7, 2022"), a month ("June 2023", "early August, 2023", "the last
    week of May 2023"), a season or a year ("summer 2022", "in 2022"), a span ("between 26 March
    and 20 April 2023", "November 5-6, 2022"), or a period told from a day ("the week before
    9 June 2023", "the Friday before 15 July 2023", "two weekends before 17 July 2023", "a few
    days before 19 August, 2023"). An answer with words around its date that it does not
    understand names nothing: "the week before 9 June" is never read as 9 June.
    """
    cleaned = _clean(text)
    body = cleaned[_LEAD.match(cleaned).end() :] if cleaned else ""  # type: ignore[union-attr]
    if not body:
        return None
    if year := _YEAR_ONLY.match(body):
        value = int(year.group("year"))
        return Period(date(value, 1, 1), date(value, 12, 31))
    if season := _SEASON.match(body):
        return _season(season.group("season").lower(), int(season.group("year")))
    if spans := _RANGE_SAME_MONTH.match(body):
        month_name = spans.group("m") or spans.group("m2")
        year_text = spans.group("y") or spans.group("y2")
        first = find_dates(f"{spans.group('d1') or spans.group('d3')} {month_name} {year_text}")
        last = find_dates(f"{spans.group('d2') or spans.group('d4')} {month_name} {year_text}")
        if first and last and first[0][2] <= last[0][2]:
            return Period(date.fromisoformat(first[0][2]), date.fromisoformat(last[0][2]))
        return None
    if between := _BETWEEN.match(body):
        end = answer_period(between.group("b"))
        if end is None:
            return None
        start = answer_period(between.group("a")) or answer_period(
            f"{between.group('a')} {end.last.year}"
        )
        return Period(start.first, end.last) if start and start.first <= end.last else None
    found = _one_date(body)
    if found is None:
        return None
    match, period, is_day = found
    before, after = body[: match.start()].strip(" ,"), body[match.end() :].strip(" ,")
    if after:
        return None
    before = before[_LEAD.match(before).end() :] if before else ""  # type: ignore[union-attr]
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
    return frozenset(p.text() for p in (answer_period(t) for t in texts) if p is not None)


def period_credited(reading: str, answers: Iterable[str]) -> bool:
    """Whether the reading's day or period names one of the answers' periods.

    Credited when the reading lies inside the answer's period (however precise it is); when
    both are week-scale (at most :data:`COARSEST_CREDITED_DAYS` days) and share a day, since
    people count weeks and weekends from different days; or when the answer lies inside a
    week-scale reading ("last week" for a day in it). A month, season or year that is not
    inside the answer is never credited.
    """
    read = Period.parse(reading)
    if read is None:
        return False
    for text in answers:
        answer = Period.parse(text)
        if answer is None:
            continue
        inside = answer.first <= read.first and read.last <= answer.last
        shared = read.first <= answer.last and answer.first <= read.last
        week_scale = read.days <= COARSEST_CREDITED_DAYS
        if inside or (shared and week_scale and answer.days <= COARSEST_CREDITED_DAYS):
            return True
        if week_scale and read.first <= answer.first and answer.last <= read.last:
            return True
    return False
