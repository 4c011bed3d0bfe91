"""What the careful reader is told about each probe, computed once per world.

A ``probes`` row carries the latent answer, its aliases and the deprecated values; the careful
reader also needs the slot's other values in the world (so that a memory stating one of them is
read as stating it, not as silent), the subject's display names and whether the slot holds one
value at a time. :func:`with_reader_columns` adds them to the probes table from the world's
``latent_profiles`` and ``ground_truth`` tables; :func:`reader_probe` builds the
:class:`~.reader.ReaderProbe` of one row (a row without the columns gets the defaults).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from typing import Any, Final

import pyarrow as pa

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.entities import SlotDef, get_entity_type

from .reader import ReaderProbe

__all__ = ["READER_COLUMNS", "reader_probe", "with_reader_columns"]

READER_COLUMNS: Final = ("reader_names", "reader_others", "reader_exclusive", "reader_people")
"""Columns :func:`with_reader_columns` adds: display names, other values' spellings, kind, and
the other people of a world of several."""


def _slot_def(entity_type: str | None, slot: str) -> SlotDef | None:
    if not entity_type:
        return None
    try:
        return get_entity_type(entity_type).slot(slot)
    except KeyError:
        return None


def with_reader_columns(
    probes: pa.Table, latent_profiles: pa.Table, ground_truth: pa.Table
) -> pa.Table:
    """``probes`` with :data:`READER_COLUMNS` appended.

    Args:
        probes: The world's probes.
        latent_profiles: The world's entities (``name`` and ``entity_type`` per replicate).
        ground_truth: The world's facts (every value each slot took, and its ``slot_kind``).

    The other values of a probe's slot are every value that slot takes in the same replicate
    (for any subject, at any checkpoint), spelled with the slot's aliases; the slot holds one
    value at a time when its kind is ``functional``. In a world of several people, a probe
    about one of them also lists the others (``reader_people``): what a line headed by one of
    them says is that person's, not the subject's. A world of one person lists none.
    """
    names: dict[tuple[int, str], list[str]] = {}
    types: dict[tuple[int, str], str] = {}
    entities = latent_profiles.select(["replicate", "entity_id", "name", "entity_type"])
    people: dict[int, list[str]] = {}
    for row in entities.to_pylist():
        key = (int(row["replicate"]), str(row["entity_id"]))
        full = str(row["name"] or "")
        names[key] = list(dict.fromkeys(n for n in (full, full.split(" ")[0]) if n))
        types[key] = str(row["entity_type"] or "")
        if types[key] == "human":
            people.setdefault(key[0], []).append(key[1])
    held: dict[tuple[int, str], dict[str, None]] = {}
    kinds: dict[str, str] = {}
    for row in ground_truth.select(["replicate", "slot", "slot_kind", "value"]).to_pylist():
        held.setdefault((int(row["replicate"]), str(row["slot"])), {})[str(row["value"])] = None
        kinds.setdefault(str(row["slot"]), str(row["slot_kind"]))
    out_names: list[list[str]] = []
    out_others: list[list[list[str]]] = []
    out_exclusive: list[bool | None] = []
    out_people: list[list[str]] = []
    for row in probes.select(["replicate", "subject", "slot"]).to_pylist():
        replicate, subject, slot = int(row["replicate"]), str(row["subject"]), str(row["slot"])
        out_names.append(names.get((replicate, subject), []))
        humans = people.get(replicate, [])
        out_people.append(
            [
                spelling
                for other in humans
                if other != subject
                for spelling in (other, *names.get((replicate, other), []))
            ]
            if len(humans) > 1 and subject in humans
            else []
        )
        definition = _slot_def(types.get((replicate, subject)), slot)
        others: list[list[str]] = []
        for value in held.get((replicate, slot), {}):
            spelled = [value]
            if definition is not None:
                with contextlib.suppress(KeyError):  # a value outside the pool: as written
                    spelled = list(definition.value(value).all_aliases())
            others.append(spelled)
        out_others.append(others)
        kind = definition.kind if definition is not None else kinds.get(slot)
        out_exclusive.append(None if kind is None else kind == "functional")
    return (
        probes.append_column("reader_names", pa.array(out_names, pa.list_(pa.string())))
        .append_column("reader_others", pa.array(out_others, pa.list_(pa.list_(pa.string()))))
        .append_column("reader_exclusive", pa.array(out_exclusive, pa.bool_()))
        .append_column("reader_people", pa.array(out_people, pa.list_(pa.string())))
    )


_NAMED_IN_QUESTION = re.compile(r"(?<=\s)([A-Z][a-z]+(?:[- ][A-Z][a-z]+)*)(?:'s)?\b")


def question_names(question: str) -> list[str]:
    """Names a question gives its subject by ("Where does Noor live now?" → ``Noor``).

    Titlecase words after the first: the first word of a question is capitalised anyway.
    """
    return list(dict.fromkeys(_NAMED_IN_QUESTION.findall(question)))


def _row_key(row: Mapping[str, Any]) -> str | None:
    """A key that only equal rows share, or ``None`` when the row is not to be kept.

    A plain row's ``repr`` (which also tells ``True`` from ``1``); other mappings, and values
    shown by their address, are not keyed.
    """
    if type(row) is not dict:
        return None
    key = repr(row)
    return None if " at 0x" in key else key


# Every cell of a world judges the same probe rows (and the amnesiac's answers read them once
# more); building a view expands every value's phrases. Keyed by the whole row.
_views: BoundedCache[str, ReaderProbe] = BoundedCache(16384)


def reader_probe(row: Mapping[str, Any]) -> ReaderProbe:
    """The careful reader's view of one probes row (with or without :data:`READER_COLUMNS`).

    Views are kept for the last few thousand distinct rows: the view is a function of the row
    alone, and an equal row gives the same (immutable) view.
    """
    key = _row_key(row)
    if key is None:
        return _build_reader_probe(row)
    return _views.get_or_build(key, lambda: _build_reader_probe(row))


def _build_reader_probe(row: Mapping[str, Any]) -> ReaderProbe:
    exclusive = row.get("reader_exclusive")
    names = [str(n) for n in row.get("reader_names") or []]
    subject = str(row.get("subject") or "")
    if not [name for name in names if name != subject]:
        # Imported notes ("Noor moved to Rome") can be about people the world has no profile
        # for; the question then names whom it asks about, and that person is the subject.
        names += question_names(str(row.get("question") or ""))
    return ReaderProbe.from_row(
        row,
        subject_names=names,
        others=[[str(s) for s in spelled] for spelled in row.get("reader_others") or []],
        exclusive=None if exclusive is None else bool(exclusive),
        other_speakers=[str(n) for n in row.get("reader_people") or []],
    )
