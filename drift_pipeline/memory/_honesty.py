"""Snapshot honesty: every line a backend retrieves must be in the snapshot it reported.

Selectivity and the storage figures are read from ``snapshot()``. A backend that keeps more than
it shows (whole transcripts behind a small snapshot) would look selective and cheap while its
reads draw on what it hid. So at every checkpoint the loop checks each probe's retrieved text
against the snapshot the backend reported after that checkpoint's session: a retrieved line
the snapshot does not account for is recorded on the retrieval (``unreported``), and the cell's
Selectivity and storage figures are then not taken as measured (see
``drift_pipeline.evaluation.storage_trusted``).

A retrieved line is accounted for when it is a line of the snapshot, a part of one (a line cut
to fit a budget), or carries mostly what the snapshot holds: at least
:data:`SHARED_PAIRS` of its pairs of adjacent words (of its one word, for a one-word line)
occur in the snapshot. That leaves a memory free to render what it holds differently when it
reads it back (a label, a date, "no longer true since"), never to return content it does not
report.
"""

from __future__ import annotations

import itertools
import re
from typing import Final

__all__ = ["SHARED_PAIRS", "SnapshotIndex"]

SHARED_PAIRS: Final = 0.5
"""Share of a retrieved line's adjacent word pairs the snapshot must hold to account for it."""
_SHOWN_CHARS: Final = 160
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


class SnapshotIndex:
    """A replicate's latest snapshot, indexed to tell which retrieved lines it accounts for.

    The lines are a set; the words and word pairs are built only when a line is neither a line
    nor a part of the snapshot, so an honest verbatim memory costs one set look-up per line.
    A snapshot that extends the previous one (an append-only memory) is indexed by its new part
    only.

    Args:
        snapshot: The text ``snapshot()`` returned.
    """

    def __init__(self, snapshot: str = "") -> None:
        self._text = ""
        self._lines: set[str] = set()
        self._words: set[str] | None = None
        self._pairs: set[tuple[str, str]] | None = None
        # Each retrieved line's answer against this snapshot: the probes of a checkpoint
        # retrieve many of the same lines.
        self._answers: dict[str, bool] = {}
        self.update(snapshot)

    def update(self, snapshot: str) -> None:
        """Index ``snapshot`` instead of the previous one (its new lines only, if it grew)."""
        if snapshot == self._text:
            return
        if self._text and snapshot.startswith(self._text):
            # Lines of the old text stay in the sets: each is still a part of the new text.
            added = snapshot[self._text.rfind("\n") + 1 :]
        else:
            added = snapshot
            self._lines, self._words, self._pairs = set(), None, None
        self._text, self._answers = snapshot, {}
        lines = added.split("\n")
        self._lines.update(line.strip() for line in lines)
        if self._words is not None:
            self._words.update(_words(added))
        if self._pairs is not None:
            self._pairs.update(_line_pairs(lines))

    def unreported(self, context: str) -> str | None:
        """The first line of ``context`` the snapshot does not account for, shortened; or ``None``.

        Args:
            context: What ``retrieve()`` returned (without anything the gate appended).
        """
        for raw in context.split("\n"):
            line = raw.strip()
            if not line:
                continue
            answer = self._answers.get(line)
            if answer is None:
                answer = self._answers[line] = self._accounts_for(line)
            if not answer:
                return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "…"
        return None

    def _accounts_for(self, line: str) -> bool:
        if line in self._lines or line in self._text:
            return True
        words = _words(line)
        if not words:
            return True  # punctuation only: nothing a memory could have hidden
        if len(words) == 1:
            return words[0] in self._word_set()
        pairs = list(itertools.pairwise(words))
        held = self._pair_set()
        return sum(pair in held for pair in pairs) >= SHARED_PAIRS * len(pairs)

    def _word_set(self) -> set[str]:
        if self._words is None:
            self._words = set(_words(self._text))
        return self._words

    def _pair_set(self) -> set[tuple[str, str]]:
        if self._pairs is None:
            self._pairs = _line_pairs(self._text.split("\n"))
        return self._pairs


def _line_pairs(lines: list[str]) -> set[tuple[str, str]]:
    """The pairs of adjacent words within each line (never across a line break)."""
    pairs: set[tuple[str, str]] = set()
    for line in lines:
        words = _words(line)
        pairs.update(itertools.pairwise(words))
    return pairs
