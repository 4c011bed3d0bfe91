"""Snapshot honesty: every line a backend retrieves must be in the snapshot it reported.

Selectivity and the storage figures are read from ``snapshot()``. A backend that keeps more than
it shows (whole transcripts behind a small snapshot) would look selective and cheap while its
reads draw on what it hid. So at every checkpoint the loop checks each probe's retrieved text
against the snapshot the backend reported after that checkpoint's session: a retrieved line
the snapshot does not account for is recorded on the retrieval (``unreported``), and the cell's
Selectivity and storage figures are then not taken as measured (see
``drift_pipeline.evaluation.storage_trusted``).

A retrieved line is accounted for when it is a line of the snapshot, or when it is a part of
one (a line cut to fit a budget) or carries mostly what the snapshot's lines hold (at least
:data:`SHARED_PAIRS` of its pairs of adjacent words each occur in a snapshot line that also
holds the pair before or after it; its one word somewhere in the snapshot, for a one-word line)
**and** every slot value of the world it names is in the snapshot too (:class:`WorldValues`:
any spelling of the value, word-bounded). That leaves a memory free to render what it holds
differently when it reads it back (a label, a date, "no longer true since"), never to return
content it does not report: not a snapshot that shows its lines with their values masked (the
values are what Selectivity counts), nor one that is a bag of word pairs pooled from the whole
log (every pair somewhere, no two of a line's pairs together).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Final

from drift_pipeline.entities import get_entity_type
from drift_pipeline.textmatch import PhraseIndex

__all__ = ["SHARED_PAIRS", "SnapshotIndex", "WorldValues", "slot_values", "world_values"]

SHARED_PAIRS: Final = 0.5
"""Share of a retrieved line's adjacent word pairs the snapshot must hold, each in a snapshot line
with a neighbouring pair of the retrieved line, to account for it."""
_SHOWN_CHARS: Final = 160
_WORD = re.compile(r"\w+")

_Pair = tuple[str, str]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def slot_values(entity_types: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Every value of every slot of ``entity_types``: its text → its spellings (aliases).

    A type that is not registered is skipped: it has no pools to read.
    """
    pool: dict[str, tuple[str, ...]] = {}
    for name in sorted(set(entity_types)):
        try:
            definition = get_entity_type(name)
        except KeyError:
            continue
        for slot in definition.slots:
            for value in slot.values:
                pool.setdefault(value.text, value.all_aliases())
    return pool


class WorldValues:
    """The slot values of a world, to tell which of them a text names.

    Built once per cell and shared by its replicates' :class:`SnapshotIndex` (it never changes).

    Args:
        values: Each value's text with its spellings (:func:`slot_values`).
    """

    def __init__(self, values: Mapping[str, tuple[str, ...]]) -> None:
        owners: dict[str, set[str]] = {}
        for value, spellings in values.items():
            for spelling in (value, *spellings):
                owners.setdefault(spelling, set()).add(value)
        self._owners = {spelling: frozenset(of) for spelling, of in owners.items()}
        self._index = PhraseIndex(sorted(self._owners))

    def __bool__(self) -> bool:
        return bool(self._owners)

    def named(self, text: str) -> list[frozenset[str]]:
        """For each spelling found word-bounded in ``text``, the values it spells."""
        return [self._owners[spelling] for spelling in sorted(self._index.find(text))]

    def held(self, text: str) -> frozenset[str]:
        """The values ``text`` names in any of their spellings."""
        found = self._index.find(text)
        return frozenset(value for spelling in found for value in self._owners[spelling])


@lru_cache(maxsize=16)
def world_values(entity_types: tuple[str, ...]) -> WorldValues:
    """The :class:`WorldValues` of a world whose entities are of ``entity_types`` (kept per set)."""
    return WorldValues(slot_values(entity_types))


class SnapshotIndex:
    """A replicate's latest snapshot, indexed to tell which retrieved lines it accounts for.

    The lines are a set; the words, the word pairs (with the snapshot lines each occurs in) and
    the values the snapshot names are built only when a retrieved line is not a line of the
    snapshot, so an honest verbatim memory costs one set look-up per line. A snapshot that
    extends the previous one (an append-only memory) is indexed by its new part only.

    Args:
        snapshot: The text ``snapshot()`` returned.
        values: The world's slot values: a line that names one the snapshot does not is not
            accounted for. ``None``: no values are checked.
    """

    def __init__(self, snapshot: str = "", values: WorldValues | None = None) -> None:
        self._values = values if values else None
        self._text = ""
        self._lines: set[str] = set()
        self._count = 0  # lines indexed so far: the next line's number
        self._words: set[str] | None = None
        self._pairs: dict[_Pair, set[int]] | None = None
        self._held: frozenset[str] | None = None
        # Each retrieved line's answer against this snapshot: the probes of a checkpoint
        # retrieve many of the same lines.
        self._answers: dict[str, bool] = {}
        self.update(snapshot)

    def update(self, snapshot: str) -> None:
        """Index ``snapshot`` instead of the previous one (its new lines only, if it grew)."""
        if snapshot == self._text:
            return
        held = self._held
        if self._text and snapshot.startswith(self._text):
            # Lines of the old text stay indexed: each is still a part of a line of the new
            # text (the old last line may have grown; it is indexed again as a new line).
            added = snapshot[self._text.rfind("\n") + 1 :]
            if held is not None and self._values is not None:
                held |= self._values.held(added)  # the values of the new part only
        else:
            added, held = snapshot, None
            self._lines, self._words, self._pairs = set(), None, None
        self._text, self._answers, self._held = snapshot, {}, held
        lines = added.split("\n")
        self._lines.update(line.strip() for line in lines)
        if self._words is not None:
            self._words.update(_words(added))
        if self._pairs is not None:  # else built whole, numbering from 0, on first use
            self._index_pairs(lines)

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
        if line in self._lines:
            return True
        return (line in self._text or self._carried(line)) and self._names_held_values(line)

    def _carried(self, line: str) -> bool:
        """Whether at least :data:`SHARED_PAIRS` of ``line``'s pairs are held in runs.

        A pair counts when a snapshot line holds it together with the pair before or after it
        in ``line``: what is rendered from a memory comes in runs of its lines' words (a fact,
        then the date its successor began), never one pair at a time as from a bag of pairs.
        """
        words = _words(line)
        if not words:
            return True  # punctuation only: nothing a memory could have hidden
        if len(words) == 1:
            return words[0] in self._word_set()
        where = self._pair_lines()
        empty: set[int] = set()
        lines = [where.get(pair, empty) for pair in itertools.pairwise(words)]
        if len(lines) == 1:
            return bool(lines[0])
        needed = math.ceil(SHARED_PAIRS * len(lines))
        if sum(1 for found in lines if found) < needed:
            return False
        runs = 0
        for i, found in enumerate(lines):
            if found and (
                (i > 0 and not found.isdisjoint(lines[i - 1]))
                or (i + 1 < len(lines) and not found.isdisjoint(lines[i + 1]))
            ):
                runs += 1
        return runs >= needed

    def _names_held_values(self, line: str) -> bool:
        """Whether every slot value ``line`` names is named by the snapshot too."""
        if self._values is None:
            return True
        named = self._values.named(line)
        if not named:
            return True
        if self._held is None:
            self._held = self._values.held(self._text)
        return all(values & self._held for values in named)

    def _word_set(self) -> set[str]:
        if self._words is None:
            self._words = set(_words(self._text))
        return self._words

    def _pair_lines(self) -> dict[_Pair, set[int]]:
        if self._pairs is None:
            self._pairs, self._count = {}, 0
            self._index_pairs(self._text.split("\n"))
        return self._pairs

    def _index_pairs(self, lines: list[str]) -> None:
        """Add the pairs of adjacent words within each of ``lines`` (never across a line break)."""
        assert self._pairs is not None
        for line in lines:
            number = self._count
            self._count += 1
            for pair in itertools.pairwise(_words(line)):
                self._pairs.setdefault(pair, set()).add(number)
