"""The grammar flattened into tables at import: families composed once, drawn cheaply after.

A family is one stem in one frame. Its template is composed here with a typo variant, and the
placeholders it uses are listed, so writing a sentence is one index draw, a few pool draws and a
``str.format`` call: no parsing and no pattern matching at generation time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ._decoys import DECOY_STEMS
from ._frames import DECOY_FRAMES, EVENT_FRAMES, TYPOS, Frame
from ._split import PhrasingSplit
from ._stems import STEMS


class Family(NamedTuple):
    """One phrasing family: a stem in a frame (a tuple: thousands are built at import).

    Attributes:
        family_id: ``event:<slot family>/<stem>/<frame>`` or ``decoy:<kind>/<stem>/<frame>``.
        stem: The stem id (what the split is assigned from).
        register: ``casual``, ``neutral`` or ``formal``.
        position: Where the sentence goes in the turn (see the frames module).
        template: The composed sentence template.
        typo: The template with one common word misspelt (the template itself when none).
        fields: The placeholders the template uses, in first-use order.
    """

    family_id: str
    stem: str
    register: str
    position: str
    template: str
    typo: str
    fields: tuple[str, ...]


_FIELD = re.compile(r"\{([a-z0-9_]+)\}")


def fields_of(template: str) -> tuple[str, ...]:
    """Placeholders of a template, in first-use order."""
    return tuple(dict.fromkeys(_FIELD.findall(template)))


_TYPO_WORDS = dict(TYPOS)
# One pass per template: placeholder names are never one of the common words.
_TYPO_PATTERN = re.compile(r"\b(?:" + "|".join(map(re.escape, _TYPO_WORDS)) + r")\b")


def _typo(template: str) -> str:
    """``template`` with its first common word misspelt (placeholders never match)."""
    return _TYPO_PATTERN.sub(lambda match: _TYPO_WORDS[match.group(0)], template, count=1)


def _compose(group: str, stem_id: str, stem: str, frame: Frame) -> Family:
    frame_id, register, position, text = frame
    template = text.replace("{c}", stem)
    return Family(
        f"{group}/{stem_id}/{frame_id}",
        stem_id,
        register,
        position,
        template,
        _typo(template),
        fields_of(template),
    )


def _families(
    group: str, stems: tuple[tuple[str, str], ...], frames: tuple[Frame, ...]
) -> tuple[Family, ...]:
    return tuple(
        _compose(group, stem_id, stem, frame) for stem_id, stem in stems for frame in frames
    )


ALL_EVENT_FAMILIES: dict[str, tuple[Family, ...]] = {
    family: _families(f"event:{family}", stems, EVENT_FRAMES) for family, stems in STEMS.items()
}
"""Every event family per slot family, over all splits."""

ALL_DECOY_FAMILIES: dict[str, tuple[Family, ...]] = {
    kind: _families(f"decoy:{kind}", stems, DECOY_FRAMES[kind])
    for kind, stems in DECOY_STEMS.items()
}
"""Every decoy family per decoy kind, over all splits."""


@dataclass(frozen=True)
class SplitTables:
    """The families one split may draw.

    Attributes:
        events: (slot family, has an old value) → families (``{old}`` needs an old value).
        decoys: Decoy kind → families.
    """

    events: dict[tuple[str, bool], tuple[Family, ...]]
    decoys: dict[str, tuple[Family, ...]]


def _in_split(split: PhrasingSplit, group: str, families: tuple[Family, ...]) -> list[Family]:
    chosen = split.stems(group, dict.fromkeys(family.stem for family in families))
    return [family for family in families if family.stem in chosen]


@lru_cache(maxsize=8)
def tables_for(split: PhrasingSplit) -> SplitTables:
    """The draw tables of a split (built once per split and process)."""
    events: dict[tuple[str, bool], tuple[Family, ...]] = {}
    for slot_family, families in ALL_EVENT_FAMILIES.items():
        chosen = _in_split(split, f"event:{slot_family}", families)
        events[(slot_family, True)] = tuple(chosen)
        events[(slot_family, False)] = tuple(f for f in chosen if "old" not in f.fields)
    decoys = {
        kind: tuple(_in_split(split, f"decoy:{kind}", families))
        for kind, families in ALL_DECOY_FAMILIES.items()
    }
    return SplitTables(events, decoys)
