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

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ._dates import DATE_PATTERN, find_dates
from ._records import render_record
from ._rules import RULES

_R = RULES.patterns
_WORDS = RULES.word_sets

__all__ = ["Line", "Speaker", "segment"]

Speaker = Literal["subject", "assistant", "other", "note"]

SUBJECT_SPEAKERS = RULES.words("subject-speakers")
ASSISTANT_SPEAKERS = RULES.words("assistant-speakers")
NOTE_HEADS = RULES.words("note-heads")


@dataclass(frozen=True)
class Line:
    """One line of a context.

    Attributes:
        index: Position among the context's lines.
        text: The line's content, prefixes (bullet, date, speaker) removed, original case.
        offset: Where ``text`` starts inside the raw line (for locating matches).
        raw: The raw line.
        speaker: Who says it (``note`` for a memory's own note about the subject).
        head: The label or speaker name that prefixed the line, lower-cased (may be empty).
        own_date: The date written on the line itself (leading date or a ``since`` date).
        section_date: The date of the header above the line, if any.
    """

    index: int
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


@lru_cache(maxsize=4096)
def _date_prefix(text: str) -> str | None:
    """The date a line starts with; transcripts repeat the same few, so it is read once."""
    dates = find_dates(text)
    return dates[0][2] if dates else None


@lru_cache(maxsize=4096)
def _classify_head(
    head: str, names: frozenset[str], others: frozenset[str] = frozenset()
) -> Speaker:
    key = head.strip().lower().replace("’", "'")
    if key in SUBJECT_SPEAKERS or key in names:
        return "subject"
    if key in ASSISTANT_SPEAKERS:
        return "assistant"
    if key in others:
        return "other"  # another person of the world, by the name the memory gives them
    if key in NOTE_HEADS or _R["note-head-start"].match(key):
        return "note"
    words = re.findall(r"[\w']+", key)
    owner = key.split("'s ")[0] if "'s " in key else None
    if owner is not None:
        mine = owner in names or owner in SUBJECT_SPEAKERS
        relation = re.search(_R["relation-words"], key.split("'s ", 1)[1])
        return "note" if mine and not relation else "other"
    if any(w in _WORDS["label-words"] or w.rstrip("s") in _WORDS["label-words"] for w in words):
        return "note"
    if len(words) == 1 and head[:1].isupper():
        return "other"
    if len(words) <= 2 and all(w[:1].isupper() for w in head.split()):
        return "other"  # "Tom Baker: …" is another person talking
    return "note"


def segment(
    context: str, subject_names: frozenset[str], others: frozenset[str] = frozenset()
) -> list[Line]:
    """The context's lines with speaker, dates and content (header lines only date others).

    Args:
        context: Retrieved memory text.
        subject_names: The subject's names, lower-cased.
        others: Names of the other people of the world, lower-cased (a world with several):
            a line headed by one is theirs, never a note about the subject.
    """
    lines: list[Line] = []
    section: str | None = None
    carried: str | None = None
    plan_list = False  # inside the items of a "Goals:" / "Plans:" list
    for index, raw, continued in _turns(context, subject_names, others):
        if not raw.strip():
            plan_list = False
            continue
        at = 0
        bullet = _R["bullet"].match(raw)
        listed = bool(bullet) or raw[:1] in (" ", "\t")
        if plan_list and not listed:
            plan_list = False
        if _R["plan-header"].search(raw) and raw.rstrip().endswith(":"):
            plan_list = True
            continue
        if bullet:
            at = bullet.end()
        score = _R["score"].match(raw[at:])
        if score:
            at += score.end()
        own: str | None = None
        # Matched on the rest of the line: a ``^`` anchor does not hold at a start offset.
        leading = _R["leading-date"].match(raw[at:])
        if leading:
            own = _date_prefix(leading.group(0))
            if own:
                at += leading.end()
        rest = raw[at:]
        if rest.lstrip()[:1] in ("{", "[", "("):
            records = render_record(rest)
            if records is not None:
                for text, date in records:
                    turn = _R["head"].match(text)
                    who: Speaker = "note"
                    role = turn.group(1).strip().lower() if turn else ""
                    if turn and (role in SUBJECT_SPEAKERS or role in ASSISTANT_SPEAKERS):
                        who = _classify_head(role, subject_names, others)
                        text = text[turn.end() :]
                    else:
                        role = ""
                    lines.append(Line(index, text, at, raw, who, role, date or own, section))
                continue
        if own is None:
            inline = find_dates(rest)
            if inline and _R["header-words"].match(DATE_PATTERN.sub(" ", rest)):
                section = inline[0][2]
                continue
        elif not rest.strip() or _R["header-words"].match(rest):
            section = own
            continue
        speaker: Speaker = "note"
        head = ""
        match = (
            _R["dated-head"].match(rest) or _R["head"].match(rest) or _R["chat-head"].match(rest)
        )
        if match:
            head = match.group(1).strip()
            head_date = _R["head-date"].search(head) if _R["digit"].search(head) else None
            if head_date and own is None:
                found = find_dates(head_date.group(0))
                own = found[0][2] if found else None
            if head_date:
                head = head[: head_date.start()].strip() or head
            elif _R["digit"].search(head):
                tail = _R["head-tail"].search(head)
                found = find_dates(tail.group(0)) if tail and tail.start() > 0 else []
                if tail and (found or tail.group(0).strip()[:1] in "(["):
                    if own is None and found:
                        own = found[0][2]
                    head = head[: tail.start()].strip()
            speaker = _classify_head(head, subject_names, others)
            if speaker == "note" and not _is_label(head, subject_names):
                head, speaker = "", "note"  # "Honestly: …" is text, not a head
            else:
                at += match.end()
                rest = raw[at:]
        if own is None and head:
            head_dates = find_dates(head)  # "Memory 4 (2027-09-01): …" dates its line
            own = head_dates[0][2] if head_dates else None
        if own is None and continued:
            own = carried  # a reply on the same line was said when the line was
        carried = own
        if own is None:
            since = _R["since"].search(rest)
            if since:
                found = find_dates(since.group(0))
                own = found[0][2] if found else None
        planned = plan_list or bool(head and _R["plan-header"].search(head))
        lines.append(Line(index, rest, at, raw, speaker, head.lower(), own, section, planned))
    return lines


def _joined_lines(context: str) -> list[tuple[int, str]]:
    """The context's lines, as (index, text), joined where one line continues another.

    A JSON object spread over several lines is read as one line, and an indented qualifier line
    is joined to the line it qualifies.
    """
    raw_lines = context.split("\n")
    out: list[tuple[int, str]] = []
    index = 0
    while index < len(raw_lines):
        raw = raw_lines[index]
        stripped = raw.strip()
        if stripped[:1] in ("{", "[") and stripped.count("{") > stripped.count("}"):
            depth = stripped.count("{") - stripped.count("}")
            end = index
            while depth > 0 and end + 1 < len(raw_lines) and end - index < 60:
                end += 1
                depth += raw_lines[end].count("{") - raw_lines[end].count("}")
            if depth <= 0:
                out.append((index, " ".join(line.strip() for line in raw_lines[index : end + 1])))
                index = end + 1
                continue
        if (
            out
            and _R["wrapped"].search(out[-1][1])
            and raw.strip()
            and not _R["new-item"].match(raw)
        ):
            # A sentence wrapped onto the next line: "…first day at Halvorsen was\nMonday 16 …".
            last_index, last = out[-1]
            out[-1] = (last_index, f"{last.rstrip()} {stripped}")
            index += 1
            continue
        if out and _R["qualifier-line"].match(raw) and out[-1][1].strip():
            last_index, last = out[-1]
            out[-1] = (last_index, f"{last.rstrip().rstrip('.')} ({stripped})")
            index += 1
            continue
        out.append((index, raw))
        index += 1
    return out


def _turns(
    context: str, names: frozenset[str], others: frozenset[str] = frozenset()
) -> list[tuple[int, str, bool]]:
    """Each line of ``context``, split where a new speaker takes a turn on the same line.

    Returns (line index, text, whether it continues the line before) triples.
    """
    out: list[tuple[int, str, bool]] = []
    for index, raw in _joined_lines(context):
        if "|" not in raw and "//" not in raw:
            out.append((index, raw, False))
            continue
        start = 0
        for match in _R["turn-break"].finditer(raw):
            if _classify_head(match.group(1), names, others) not in ("subject", "assistant"):
                continue
            out.append((index, raw[start : match.start()], start > 0))
            start = match.end()
        out.append((index, raw[start:], start > 0))
    return out


def _is_label(head: str, names: frozenset[str]) -> bool:
    key = head.strip().lower()
    if (
        key in NOTE_HEADS
        or key in names
        or key in SUBJECT_SPEAKERS
        or _R["note-head-start"].match(key)
    ):
        return True
    if "'s " in key:
        return True
    words = re.findall(r"[\w']+", key)
    return any(w in _WORDS["label-words"] or w.rstrip("s") in _WORDS["label-words"] for w in words)
