"""Time words read against the day a line was said, and answers that name a period."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from drift_pipeline.evaluation.reader import (
    ReaderProbe,
    judge_reading,
    read_context,
    reading_from_answer,
)
from drift_pipeline.evaluation.reader._dates import (
    COARSEST_CREDITED_DAYS,
    Period,
    answer_period,
    find_periods,
    period_credited,
)
from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends.full_context import FullContextBackend
from drift_pipeline.memory.backends.sanity import SessionDatesBackend


def _period(first: str, last: str | None = None) -> str:
    return Period(date.fromisoformat(first), date.fromisoformat(last or first)).text()


# 9 June 2023 is a Friday; 17 July 2023 a Monday; 25 May 2023 a Thursday.
@pytest.mark.parametrize(
    ("text", "today", "period"),
    [
        ("we met up last week", "2023-06-09", _period("2023-05-29", "2023-06-04")),
        ("I'm going this week", "2023-06-09", _period("2023-06-05", "2023-06-11")),
        ("see you next week", "2023-06-09", _period("2023-06-12", "2023-06-18")),
        ("last weekend I joined", "2023-07-17", _period("2023-07-15", "2023-07-16")),
        ("camping two weekends ago", "2023-07-17", _period("2023-07-08", "2023-07-09")),
        ("this weekend we hike", "2023-06-09", _period("2023-06-10", "2023-06-11")),
        ("camping next month", "2023-05-25", _period("2023-06-01", "2023-06-30")),
        ("last month I got hurt", "2023-10-13", _period("2023-09-01", "2023-09-30")),
        ("a conference this month", "2023-07-03", _period("2023-07-01", "2023-07-31")),
        ("I painted it last year", "2023-05-08", _period("2022-01-01", "2022-12-31")),
        ("three months ago", "2023-02-10", _period("2022-11-01", "2022-11-30")),
        ("last night was amazing", "2023-08-14", _period("2023-08-13")),
        ("joined a group last Tues", "2023-07-20", _period("2023-07-18")),
        ("last Fri I took the kids", "2023-07-15", _period("2023-07-14")),
        ("a few days ago", "2023-06-09", _period("2023-06-03", "2023-06-07")),
        ("last summer", "2023-05-08", _period("2022-06-01", "2022-08-31")),
        ("last summer", "2023-09-20", _period("2023-06-01", "2023-08-31")),
        ("last winter", "2023-05-08", _period("2022-12-01", "2023-02-28")),
    ],
)
def test_time_words_resolve_against_the_day_they_were_said(
    text: str, today: str, period: str
) -> None:
    assert [found for _, _, found in find_periods(text, today)] == [period]


def test_time_words_are_not_resolved_without_the_day_they_were_said() -> None:
    assert find_periods("we met up last week", "") == []
    assert find_periods("we met up last week", "2023-06-05/2023-06-11") == []


@pytest.mark.parametrize(
    ("answer", "period"),
    [
        ("7 May 2023", _period("2023-05-07")),
        ("19 January, 2023", _period("2023-01-19")),
        ("May 7, 2022", _period("2022-05-07")),
        ("2027-03-01", _period("2027-03-01")),
        ("June 2023", _period("2023-06-01", "2023-06-30")),
        ("May, 2023", _period("2023-05-01", "2023-05-31")),
        ("2022", _period("2022-01-01", "2022-12-31")),
        ("in 2022", _period("2022-01-01", "2022-12-31")),
        ("The summer of 2022", _period("2022-06-01", "2022-08-31")),
        ("The week before 9 June 2023", _period("2023-06-02", "2023-06-08")),
        ("The sunday before 25 May 2023", _period("2023-05-21")),
        ("The Friday before 24June, 2022.", _period("2022-06-17")),
        ("two weekends before 17 July 2023", _period("2023-07-08", "2023-07-09")),
        ("The weekend before 17 July 2023", _period("2023-07-15", "2023-07-16")),
        ("The week of 23 August 2023", _period("2023-08-21", "2023-08-27")),
        ("a week before 24 August,2023", _period("2023-08-17", "2023-08-23")),
        ("Two weeks before 11 August 2023", _period("2023-07-28")),
        ("A few days before May 24, 2023.", _period("2023-05-18", "2023-05-22")),
        ("last week of August 2023", _period("2023-08-25", "2023-08-31")),
        ("first week of May 2023", _period("2023-05-01", "2023-05-07")),
        ("early August, 2023", _period("2023-08-01", "2023-08-10")),
        ("between 26 March and 20 April 2023", _period("2023-03-26", "2023-04-20")),
        ("November 5-6, 2022", _period("2022-11-05", "2022-11-06")),
    ],
)
def test_answers_name_days_and_periods(answer: str, period: str) -> None:
    found = answer_period(answer)
    assert found is not None and found.text() == period


@pytest.mark.parametrize(
    "answer",
    ["four months", "10 years ago", "Since 2016", "13 August", "Boston", "a few years before 2023"],
)
def test_an_answer_with_no_readable_date_names_no_period(answer: str) -> None:
    # Above all, "the week before 9 June" is never read as 9 June: words around a date that
    # are not understood make the answer name nothing.
    assert answer_period(answer) is None


def test_the_anchor_of_a_period_is_not_the_period() -> None:
    gold = answer_period("The week before 9 June 2023")
    assert gold is not None
    assert not period_credited("2023-06-09", [gold.text()])
    assert period_credited("2023-06-07", [gold.text()])


def test_the_tolerance_a_week_at_most_coarser_than_the_answer() -> None:
    day = [_period("2023-05-07")]
    assert period_credited(_period("2023-05-01", "2023-05-07"), day)  # "last week"
    assert not period_credited(_period("2023-05-01", "2023-05-31"), day)  # "this month"
    assert not period_credited(_period("2023-05-08"), day)  # the next day
    year = [_period("2022-01-01", "2022-12-31")]
    assert period_credited(_period("2022-06-01", "2022-08-31"), year)  # finer, inside
    assert not period_credited(_period("2023-01-01", "2023-12-31"), year)
    assert COARSEST_CREDITED_DAYS == 7


# A LoCoMo-like full-context memory: every line stamped with the day of its session.
CONTEXT = """\
[2023-05-08] Caroline: Hey Mel! Good to see you!
[2023-05-08] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
[2023-05-25] Melanie: I ran a charity race for mental health last Saturday, it was rewarding.
[2023-05-25] Melanie: We're going camping next month.
[2023-06-09] Caroline: My cousin's wedding was last week. I gave a talk at a school too.
[2023-06-09] Caroline: I wanted to tell you about my school event last week. It was awesome!
"""


def _temporal(question: str, answer: str, terms: list[str], subject: str) -> ReaderProbe:
    row = {
        "probe_id": "q1",
        "probe_type": "recall",
        "subtype": "temporal",
        "subject": subject,
        "question": question,
        "answer": answer,
        "aliases": [answer],
        "deprecated": [],
        "options": [],
        "polarity": "positive",
        "slot": "locomo/temporal",
        "evidence_terms": terms,
    }
    return ReaderProbe.from_row(row, subject_names=[subject])


@pytest.mark.parametrize(
    ("question", "answer", "terms", "subject", "read", "credited"),
    [
        # "yesterday", said on 8 May: 7 May.
        (
            "When did Caroline go to the LGBTQ support group?",
            "7 May 2023",
            ["LGBTQ support group"],
            "Caroline",
            "2023-05-07",
            True,
        ),
        # "last week", said on Friday 9 June: the week before, which holds the gold period.
        (
            "When did Caroline give a speech at a school?",
            "The week before 9 June 2023",
            ["school event"],
            "Caroline",
            _period("2023-05-29", "2023-06-04"),
            True,
        ),
        # "next month", said on 25 May: June.
        (
            "When is Melanie planning on going camping?",
            "June 2023",
            ["camping"],
            "Melanie",
            _period("2023-06-01", "2023-06-30"),
            True,
        ),
        # "last Saturday" said on Thursday 25 May is 20 May; the gold's Sunday is not.
        (
            "When did Melanie run a charity race?",
            "The sunday before 25 May 2023",
            ["charity race"],
            "Melanie",
            "2023-05-20",
            False,
        ),
    ],
)
def test_relative_words_date_the_event_they_are_said_with(
    question: str, answer: str, terms: list[str], subject: str, read: str, credited: bool
) -> None:
    probe = _temporal(question, answer, terms, subject)
    reading = read_context(CONTEXT, probe)
    assert reading.date == read, reading.rationale
    assert judge_reading(reading, probe).correct is credited


def test_a_time_word_not_attached_to_the_event_does_not_date_it() -> None:
    # "last week" belongs to the cousin's wedding; the talk at the school is dated only by its
    # line, 9 June, which is not in the week before 9 June.
    context = "[2023-06-09] Caroline: My cousin's wedding was last week. I gave a talk at a school."
    probe = _temporal(
        "When did Caroline give a talk at a school?",
        "The week before 9 June 2023",
        ["talk at a school"],
        "Caroline",
    )
    reading = read_context(context, probe)
    assert reading.date == "2023-06-09"
    assert not judge_reading(reading, probe).correct


def test_a_context_without_dates_is_not_guessed_at() -> None:
    context = "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
    probe = _temporal(
        "When did Caroline go to the LGBTQ support group?",
        "7 May 2023",
        ["LGBTQ support group"],
        "Caroline",
    )
    reading = read_context(context, probe)
    assert reading.date is None and not judge_reading(reading, probe).correct


def _sessions() -> list[list[Message]]:
    said = [
        ("2023-05-08", "Caroline", "I went to a LGBTQ support group yesterday."),
        ("2023-05-25", "Melanie", "We are going camping next month."),
        ("2023-06-09", "Caroline", "I wanted to tell you about my school event last week."),
    ]
    other = {"Caroline": "Melanie", "Melanie": "Caroline"}
    return [
        [
            Message(speaker=who, role="user", content=text, timestamp=f"{day}T13:56:00"),
            Message(speaker=other[who], role="user", content="Nice!", timestamp=f"{day}T13:57:00"),
        ]
        for day, who, text in said
    ]


async def _context(backend: FullContextBackend | SessionDatesBackend) -> str:
    for number, session in enumerate(_sessions()):
        await backend.store(f"s{number}", session)
    return await backend.retrieve("s3", "Caroline", "When?")


QUESTIONS = [
    ("When did Caroline go to the LGBTQ support group?", "7 May 2023", ["LGBTQ support group"]),
    ("When is Melanie planning on going camping?", "June 2023", ["camping"]),
    ("When did Caroline give a speech at a school?", "The week before 9 June 2023", ["school"]),
]


def test_a_memory_of_session_dates_alone_gains_nothing() -> None:
    # Every session's date is in the sanity arm's memory, and each gold period is told from a
    # session date; only the memory that holds the event's line with its date is credited.
    dates = asyncio.run(_context(SessionDatesBackend()))
    full = asyncio.run(_context(FullContextBackend()))
    assert "2023-06-09" in dates and "school event last week" in full
    for question, answer, terms in QUESTIONS:
        subject = "Melanie" if "Melanie" in question else "Caroline"
        probe = _temporal(question, answer, terms, subject)
        assert not judge_reading(read_context(dates, probe), probe).correct, question
        assert judge_reading(read_context(full, probe), probe).correct, question


def test_an_answer_that_names_the_period_is_credited() -> None:
    probe = _temporal(
        "When did Caroline give a speech at a school?",
        "The week before 9 June 2023",
        ["school"],
        "Caroline",
    )
    assert judge_reading(reading_from_answer("the week before 9 June 2023", probe), probe).correct
    assert judge_reading(reading_from_answer("June 7, 2023", probe), probe).correct
    assert not judge_reading(reading_from_answer("9 June 2023", probe), probe).correct
    assert not judge_reading(reading_from_answer("June 2023", probe), probe).correct


def test_a_when_question_answered_by_no_date_is_a_value_question() -> None:
    probe = _temporal(
        "How long has Caroline had her current group of friends for?", "4 years", [], "Caroline"
    )
    assert probe.kind == "value"
    reading = read_context("[2023-06-09] Caroline: I've known these friends for 4 years.", probe)
    assert judge_reading(reading, probe).correct


def test_a_week_that_straddles_a_month_is_not_that_month() -> None:
    july = [_period("2023-07-01", "2023-07-31")]
    assert not period_credited(_period("2023-06-26", "2023-07-02"), july)
    assert period_credited(_period("2023-07-03", "2023-07-09"), july)
    # Two week-scale periods counted from different days, sharing some of them.
    assert period_credited(
        _period("2023-05-29", "2023-06-04"), [_period("2023-06-02", "2023-06-08")]
    )


def test_a_period_said_with_the_event_does_not_date_the_telling() -> None:
    # The question asks when the subject told; "last week" dates the library card, and the
    # telling is dated by its section.
    context = (
        "[2027-01-21]\n"
        "principal: Please note that I got my library card in Bologna last week, which makes "
        "the move feel official."
    )
    row = {
        "probe_id": "q1",
        "probe_type": "recall",
        "subtype": "temporal",
        "subject": "principal",
        "question": "On what date did Oluwaseun last tell you about a change in their home city?",
        "answer": "2027-01-21",
        "aliases": ["2027-01-21", "January 21, 2027", "21 January 2027"],
        "deprecated": [],
        "options": [],
        "polarity": "positive",
        "slot": "home_city",
        "evidence_terms": ["Bologna"],
    }
    probe = ReaderProbe.from_row(row, subject_names=["Oluwaseun"])
    reading = read_context(context, probe)
    assert reading.date == "2027-01-21" and judge_reading(reading, probe).correct


def test_the_line_that_says_when_answers_when() -> None:
    # Both lines name the marathon; only the second says when it was run.
    context = (
        "[2023-05-08] Ben: Nice! I have been training for the Lisbon marathon.\n"
        "[2023-05-25] Ben: I ran the Lisbon marathon yesterday in under four hours."
    )
    probe = _temporal("When did Ben run the marathon?", "24 May 2023", ["marathon"], "Ben")
    reading = read_context(context, probe)
    assert reading.date == "2023-05-24" and judge_reading(reading, probe).correct
