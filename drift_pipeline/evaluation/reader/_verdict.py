"""The judge on top of any reader: compare a :class:`Reading` with the latent truth.

The same judge scores the careful reader and an LLM reader; an LLM's free-text answer is first
turned into a reading by :func:`reading_from_answer`, with the same value matching and the same
sincerity rules, so both readers are measured the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._dates import answer_period, find_dates, period_credited
from ._probe import ReaderProbe
from ._read import Reading, read_context
from ._rules import RULES

_R = RULES.patterns

__all__ = ["ReadingVerdict", "judge_reading", "reading_from_answer"]


@dataclass(frozen=True)
class ReadingVerdict:
    """How a reading scores against the latent truth.

    Attributes:
        correct: The reading gives the right answer.
        score: Action probes: +1/0/−1 against the default action; else 1.0 or 0.0.
        update_correct: The new value is presented as current (revision probes; value probes).
        deprecation_correct: A value is presented as current and no deprecated value is (where
            one exists); a memory that says nothing has not deprecated anything.
        rationale: One line.
    """

    correct: bool
    score: float
    update_correct: bool | None
    deprecation_correct: bool | None
    rationale: str


def judge_reading(reading: Reading, probe: ReaderProbe) -> ReadingVerdict:
    """Score ``reading`` against ``probe``'s latent answer.

    Args:
        reading: What a reader concluded from the memory.
        probe: The probe with its truth.
    """
    has_old = any(c.role == "deprecated" for c in probe.candidates)
    if probe.kind == "action":
        chosen, default = reading.option, probe.default_option
        right = chosen is not None and chosen == probe.correct_option
        if chosen is None or default is None or not probe.options:
            return ReadingVerdict(right, 0.0, None, None, "no option chosen")
        utility = probe.options[chosen].utility - probe.options[default].utility
        return ReadingVerdict(
            right, float((utility > 0) - (utility < 0)), None, None, f"chose option {chosen}"
        )
    if probe.kind in ("yes_no", "temporal"):
        if probe.kind == "yes_no":
            right = reading.polarity == "no"
            why = "decoy not stated" if right else "decoy stated"
        else:
            right = reading.date is not None and period_credited(reading.date, probe.answer_dates)
            why = f"date {reading.date or 'none'} attached"
        return ReadingVerdict(right, float(right), None, None, why)
    update = any(probe.role_of(v) == "current" for v in reading.current)
    if probe.exclusive:
        update = update and len(reading.current) == 1
    # Moving on from the old value shows only in a memory that says what holds instead: one
    # that says nothing about the slot has forgotten, not deprecated, and earns no credit.
    deprecation = (not reading.deprecated_current and bool(reading.current)) if has_old else None
    right = update and (deprecation is not False)
    why = f"current {list(reading.current)}" + (
        "; old value still current" if reading.deprecated_current else ""
    )
    return ReadingVerdict(right, float(right), update, deprecation, why)


def reading_from_answer(answer: str, probe: ReaderProbe) -> Reading:
    """Turn a reader's free-text answer into a :class:`Reading` by the same rules.

    The answer is read as a note about the subject ("She works at Lumen now; she left
    Kestrel"). A yes/no answer that starts with yes or no is taken at its word; a temporal
    answer is the first date it gives.

    Args:
        answer: The reader's answer text.
        probe: The probe asked.
    """
    text = " ".join(answer.split())
    if probe.kind == "yes_no" and (_R["answer-yes"].match(text) or _R["answer-no"].match(text)):
        polarity: str = "yes" if _R["answer-yes"].match(text) else "no"
        return Reading(polarity, polarity, (), False, None, None, (text,), "answered " + polarity)  # type: ignore[arg-type]
    if probe.kind == "temporal":
        dates = find_dates(text)
        named = answer_period(text)  # "the week before 9 June 2023" names a period
        date = named.text() if named else (dates[0][2] if dates else None)
        return Reading(date, None, (), False, None, date, (text,), f"answered {date or 'no date'}")
    if probe.kind == "action":
        for index, option in enumerate(probe.options):
            if option.text.strip().lower() == text.strip().lower():
                return Reading(option.text, None, (), False, index, None, (text,), "chose it")
    return read_context(text, probe)
