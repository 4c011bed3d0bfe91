"""Split retrieved memory text into lines that know who speaks, when, and in what frame.

Renderings understood (one per line, mixed freely):
- transcript lines: ``[2027-03-01] user: …``, ``2027-03-01T09:00 principal: …``, ``Maria: …``;
- section headers that date the lines below them: ``[2027-03-01]``, ``## Session 2027-03-01``;
- bullets and notes: ``- Works at Lumen``, ``User works at Lumen``, ``Maria's employer: Lumen``,
  ``employer = Lumen``;
- graph triples and temporal facts: ``(maria)-[WORKS_AT]->(Lumen) valid_from=2027-01-04``,
  ``principal: is single (since 2027-02-24)``, ``… (no longer true since 2027-03-01)``.

A line's *speaker* is who says it: the subject, the assistant, someone else, or nobody (a note
the memory keeps about the subject). Each line records its own date (leading date, ``since``
date) and the date of the section it sits in.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Literal, NamedTuple

from drift_pipeline._bounded import per_unit
from drift_pipeline.textmatch import fold

from ._dates import DATE_PATTERN, parse_date
from ._records import render_record
from ._rules import RULES

__all__ = ["Line", "Speaker", "segment", "subject_relation"]

Speaker = Literal["subject", "assistant", "other", "note"]
_R, _WORDS = RULES.patterns, RULES.word_sets
_SUBJECTS, _ASSISTANTS = _WORDS["subject-speakers"], _WORDS["assistant-speakers"]
_Part = tuple[str, int, Speaker, str, str | None, str | None, bool]  # a line part, as Line has it


class Line(NamedTuple):  # a named tuple: a long context is millions of lines, built fast
    """One line of a context.

    Attributes:
        index: Position among the context's lines.
        text: The line's content, prefixes (bullet, date, speaker) removed, folded, case kept.
        offset: Where ``text`` starts inside the raw line (for locating matches).
        raw: The raw line.
        speaker: Who says it (``note`` for a memory's own note about the subject).
        head: The label or speaker name that prefixed the line, lower-cased (may be empty).
        own_date: The date written on the line itself (leading date or a ``since`` date).
        section_date: The date of the header above the line, if any.
        planned: The line is an item of a "Goals:" or "Plans:" list, or under such a head.
    """

    index: int  # type: ignore[assignment]  # the field hides tuple.index, which no reader calls
    text: str
    offset: int
    raw: str
    speaker: Speaker
    head: str
    own_date: str | None
    section_date: str | None
    planned: bool = False

    @property
    def date(self) -> str | None:
        """The line's date: its own, else its section's."""
        return self.own_date or self.section_date


def _classify_head(
    head: str, names: frozenset[str], others: frozenset[str] = frozenset()
) -> Speaker | None:
    """Who a line's head says speaks (``note`` for a label), or ``None`` when it is no head."""
    key = head.strip().lower().replace("’", "'")
    if key in _SUBJECTS or key in names:
        return "subject"
    if key in _ASSISTANTS:
        return "assistant"
    if key in others:
        return "other"  # another person of the world, by the name the memory gives them
    if key in _WORDS["note-heads"] or _R["note-head-start"].match(key):
        return "note"
    if "'s " in key:  # the subject's own label ("Ella's employer"), or a relation's line
        relation = subject_relation(key, names)
        mine = relation is not None and not _R["relation-words"].search(relation)
        return "note" if mine else "other"
    words = _R["token"].findall(key)
    if any(w in _WORDS["label-words"] or w.rstrip("s") in _WORDS["label-words"] for w in words):
        return "note"
    if (len(words) == 1 and head[:1].isupper()) or (
        len(words) <= 2 and all(w[:1].isupper() for w in head.split())
    ):
        return "other"  # "Tom Baker: …" is another person talking
    return None  # "Honestly: …" is text, not a head


def subject_relation(head: str, names: frozenset[str]) -> str | None:
    """The relation a head ``<owner>'s <relation>`` labels, when the owner is the subject."""
    owner, mark, relation = head.partition("'s ")
    return relation if mark and (owner in names or owner in _SUBJECTS) else None


def segment(
    context: str, subject_names: frozenset[str], others: frozenset[str] = frozenset()
) -> Iterator[Line]:
    """The context's lines with speaker, dates and content (header lines only date others).

    Args:
        context: Retrieved memory text.
        subject_names: The subject's names, lower-cased.
        others: Names of the other people of the world, lower-cased (a world with several):
            a line headed by one is theirs, never a note about the subject.
    """
    section: str | None = None
    carried: str | None = None
    plan_list = False  # inside the items of a "Goals:" / "Plans:" list
    for index, raw, continued in _turns(context, subject_names, others):
        in_list, opens_list, header, parts, records = _read_line(raw, subject_names, others)
        plan_list, section = (plan_list and in_list) or opens_list, header or section
        for text, at, speaker, head, own, since, planned in parts:
            if not records:  # a record's parts carry their own dates and are never planned
                own = carried = own or (carried if continued else None)
                own, planned = own or since, plan_list or planned
            yield Line(index, text, at, raw, speaker, head, own, section, planned)


@per_unit
@lru_cache(maxsize=65536)  # contexts of one memory repeat most of their lines
def _read_line(
    raw: str, subject_names: frozenset[str], others: frozenset[str]
) -> tuple[bool, bool, str | None, tuple[_Part, ...], bool]:
    """A line alone: (may go on a "Goals:" list, opens one, header date, parts, of a record)."""
    bullet = _R["bullet"].match(raw)
    in_list = raw.strip() != "" and (bool(bullet) or raw[:1] in " \t")
    opens = bool(_R["plan-header"].search(raw)) and raw.rstrip().endswith(":")
    if opens or not raw.strip():
        return in_list, opens, None, (), False
    at = bullet.end() if bullet else 0
    score = _R["score"].match(raw[at:])
    at += score.end() if score else 0
    # Matched on the rest of the line: a ``^`` anchor does not hold at a start offset.
    leading = _R["leading-date"].match(raw[at:])
    own = parse_date(leading.group(0)) if leading else None
    at += leading.end() if leading and own else 0
    rest = raw[at:]
    if rest.lstrip()[:1] in ("{", "[", "(") and (records := render_record(rest)) is not None:
        parts: list[_Part] = []
        for text, date in records:  # a record's turn keeps its speaker, the rest are notes
            turn = _R["head"].match(text)
            role = turn.group(1).strip().lower() if turn else ""
            who: Speaker = "subject" if role in _SUBJECTS else "assistant"
            if not (turn and (role in _SUBJECTS or role in _ASSISTANTS)):
                who, role = "note", ""
            text = text[turn.end() :] if role and turn else text
            parts.append((fold(text), at, who, role, date or own, None, False))
        return in_list, False, None, tuple(parts), True
    if own is None:
        inline = parse_date(rest)
        if inline and _R["header-words"].match(DATE_PATTERN.sub(" ", rest)):
            return in_list, False, inline, (), False
    elif not rest.strip() or _R["header-words"].match(rest):
        return in_list, False, own, (), False
    speaker: Speaker = "note"
    head = ""
    match = _R["dated-head"].match(rest) or _R["head"].match(rest) or _R["chat-head"].match(rest)
    if match:
        head = match.group(1).strip()
        head_date = _R["head-date"].search(head) if _R["digit"].search(head) else None
        if head_date:  # "Tess (2027-06-02): …"
            own = own or parse_date(head_date.group(0))
            head = head[: head_date.start()].strip() or head
        elif _R["digit"].search(head):  # "Rafa • 21/04/2027: …", "Elodie (Mar 3): …"
            tail = _R["head-tail"].search(head)
            found = parse_date(tail.group(0)) if tail and tail.start() > 0 else None
            if tail and (found or tail.group(0).strip()[:1] in "(["):
                own = own or found
                head = head[: tail.start()].strip()
        classified = _classify_head(head, subject_names, others)
        if classified is None:
            head = ""
        else:
            speaker, at = classified, at + match.end()
            rest = raw[at:]
    own = own or (parse_date(head) if head else None)  # "Memory 4 (2027-09-01): …"
    since = parse_date(s.group(0)) if own is None and (s := _R["since"].search(rest)) else None
    part = (fold(rest), at, speaker, head.lower(), own, since, bool(_R["plan-header"].search(head)))
    return in_list, False, None, (part,), False


@per_unit
@lru_cache(maxsize=8)  # the probes of several subjects read one context with different names
def _joined_lines(context: str) -> tuple[tuple[int, str], ...]:
    """The context's lines, as (index, text), joined where one line continues another.

    A JSON object spread over several lines is read as one line, a sentence wrapped onto the
    next line ("…first day at Halvorsen was / Monday 16 …") is joined to it, and so is an
    indented qualifier line ("  valid_at: 2021-10-01").
    """
    raw_lines = context.split("\n")
    out: list[tuple[int, str]] = []
    index = 0
    while index < len(raw_lines):
        raw = raw_lines[index]
        stripped = raw.strip()
        if stripped[:1] in ("{", "[") and stripped.count("{") > stripped.count("}"):
            depth, end = stripped.count("{") - stripped.count("}"), index
            while depth > 0 and end + 1 < len(raw_lines) and end - index < 60:
                end += 1
                depth += raw_lines[end].count("{") - raw_lines[end].count("}")
            if depth <= 0:
                out.append((index, " ".join(line.strip() for line in raw_lines[index : end + 1])))
                index = end + 1
                continue
        wrapped = out and _R["wrapped"].search(out[-1][1]) and stripped
        if wrapped and not _R["new-item"].match(raw):
            out[-1] = (out[-1][0], f"{out[-1][1].rstrip()} {stripped}")
        elif out and _R["qualifier-line"].match(raw) and out[-1][1].strip():
            out[-1] = (out[-1][0], f"{out[-1][1].rstrip().rstrip('.')} ({stripped})")
        else:
            out.append((index, raw))
        index += 1
    return tuple(out)


def _turns(
    context: str, names: frozenset[str], others: frozenset[str] = frozenset()
) -> Iterator[tuple[int, str, bool]]:
    """Each line of ``context``, split where a new speaker takes a turn on the same line.

    Yields (line index, text, whether it continues the line before) triples.
    """
    for index, raw in _joined_lines(context):
        start = 0
        if "|" in raw or "//" in raw:
            for match in _R["turn-break"].finditer(raw):
                if _classify_head(match.group(1), names, others) in ("subject", "assistant"):
                    yield index, raw[start : match.start()], start > 0
                    start = match.end()
        yield index, raw[start:], start > 0
