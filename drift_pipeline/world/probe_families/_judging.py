"""What a family's rule judge works with: a context normalised once, and the verdict it returns.

A rule judge reads only the text handed to the reader and the probe's latent answer; it never
sees a transcript. Lines that say a statement is no longer true (``RETRACTION_MARKERS``, e.g. a
temporal memory's "(no longer true since 2027-03-01)") do not assert their value: a rule that
asks whether a value is *asserted* reads :attr:`PreparedContext.asserted`, which leaves them
out, exactly as a careful reader would ignore them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import accumulate
from typing import Final

from drift_pipeline.textmatch import normalise, normalise_lines, phrase_pattern, runs_of

__all__ = ["RETRACTION_MARKERS", "PreparedContext", "Verdict", "prepare_context"]

RETRACTION_MARKERS: Final = ("no longer true", "no longer", "superseded", "not anymore", "outdated")


@dataclass(frozen=True)
class Verdict:
    """How the reader answered one probe and how the judge scored it.

    Attributes:
        answer: The reader's answer (a matched alias, ``yes``/``no``, or the chosen option).
        correct: Whether it is right under the latent ground truth.
        action_score: +1/0/−1 against the amnesiac action (action probes only).
        update_correct: The new value is present (revision probes only).
        deprecation_correct: The old value is absent (revision probes only).
        rationale: One line: what was found.
    """

    answer: str
    correct: bool
    action_score: int | None
    update_correct: bool | None
    deprecation_correct: bool | None
    rationale: str


@lru_cache(maxsize=65536)
def _runs(phrase: str) -> frozenset[str]:
    return runs_of(normalise(phrase))


def found_in(haystack: str, runs: frozenset[str], phrases: list[str]) -> str | None:
    """The first of ``phrases`` that occurs word-bounded in ``haystack`` (whose runs are ``runs``).

    A word-bounded match makes every letter-and-digit run of the phrase a whole run of the text,
    so a phrase with a run the text lacks cannot match: that set test rejects most phrases
    without scanning a long context. Only the survivors run their pattern, so the verdict is
    exactly the pattern's.
    """
    for phrase in phrases:
        if not phrase:
            continue
        if _runs(phrase) <= runs and phrase_pattern(phrase).search(haystack):
            return phrase
    return None


def _asserted(text: str) -> str:
    """The normalised text without lines that retract what they mention."""
    if not any(marker in text for marker in RETRACTION_MARKERS):
        return text
    return "\n".join(
        line for line in text.split("\n") if not any(m in line for m in RETRACTION_MARKERS)
    )


@dataclass(frozen=True)
class PreparedContext:
    """A context normalised once, shared by every probe answered from it.

    Attributes:
        text: The normalised text.
        asserted: ``text`` without the lines that retract what they mention.
        text_runs: The letter-and-digit runs of ``text``.
        asserted_runs: The letter-and-digit runs of ``asserted``.
    """

    text: str
    asserted: str
    text_runs: frozenset[str]
    asserted_runs: frozenset[str]

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """The lines of ``text``, each normalised as a text of its own (built on first use).

        ``text`` is normalised line by line already (:func:`prepare_context`), and normalising
        a normalised line gives it back, so its lines are split, not normalised again.
        """
        return tuple(self.text.split("\n"))

    @cached_property
    def _joined_lines(self) -> tuple[str, tuple[int, ...]]:
        """:attr:`lines` joined by newlines (``text`` itself), and where each starts in it."""
        starts = accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0)
        return self.text, tuple(starts)

    def lines_with(self, phrase: str) -> Iterator[int]:
        """The positions of the lines holding ``phrase``, normalised, as a substring, in order.

        In a normalised line a word-bounded match of a phrase (:func:`~drift_pipeline.textmatch.
        occurs_in`) is the phrase's normalised form written out, since whitespace there is one
        space: no other line can hold it. One substring search over the joined lines finds
        them, where testing every line of a long context costs a call per line.
        """
        key, (joined, starts) = normalise(phrase), self._joined_lines
        if not key:
            yield from range(len(starts))
            return
        at = joined.find(key)
        while at >= 0:
            line = bisect_right(starts, at) - 1
            yield line
            at = joined.find(key, starts[line + 1]) if line + 1 < len(starts) else -1

    def find(self, phrases: list[str]) -> str | None:
        """The first phrase said anywhere in the context (retracting lines included)."""
        return found_in(self.text, self.text_runs, phrases)

    def find_asserted(self, phrases: list[str]) -> str | None:
        """The first phrase the context asserts (retracting lines left out)."""
        return found_in(self.asserted, self.asserted_runs, phrases)


def prepare_context(context: str) -> PreparedContext:
    """Normalise ``context`` for the rule judges."""
    # Normalise line by line: the retraction rule works on lines, normalise() joins whitespace.
    text = normalise_lines(context)
    asserted = _asserted(text)
    text_runs = runs_of(text)
    asserted_runs = text_runs if asserted is text else runs_of(asserted)
    return PreparedContext(text, asserted, text_runs, asserted_runs)
