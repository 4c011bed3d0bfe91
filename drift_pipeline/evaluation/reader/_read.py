"""The careful reader: what the retrieved memory says the current answer is.

Only lines that mention a candidate value are analysed (one pass over the whole text finds
which candidates occur at all; a context that mentions none is answered at once). Each mention
gets a frame from the cue rules; asserted mentions and retractions become events, ordered by
date, and the latest decides what is current.

Ordering rule: an event's date is its line's date (a leading date, a ``since`` date, or the
date of the section header above it), else a date written in its clause, else the latest date
seen on any line above it ("an undated line is no older than the dated lines before it"). Events
are sorted by that date, then by position in the text; a context without any dates is read in
text order. For a slot that holds one value at a time, asserting a value replaces the previous
one, and retracting or negating the current value leaves nothing current.

A temporal answer is the date *attached* to the assertion that started the current run of the
asked-about value: the line's own date, a date in the same clause, or its section's date, and
never a date found elsewhere in the text.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.textmatch import normalise

from ._cues import Frame, MentionContext, frame_of, split_clauses, strip_hedges
from ._dates import find_dates, find_relative, find_yearless, iso_day
from ._probe import Candidate, ReaderProbe, Role
from ._records import RELATIONS
from ._relative_time import find_periods, is_period
from ._rules import RULES, Rules
from ._segment import Line, segment

_R = RULES.patterns
_WORDS = RULES.word_sets

__all__ = ["Mention", "Reading", "read_context"]

# Rules and lexicon only: no sentence-embedding model (see the reader section of
# docs/decisions.md). The version changes whenever a reading can change.
READER_NAME = "careful"


def reader_version(rules: Rules) -> str:
    """The reader's version with a rules file: a changed cue is a changed reader."""
    return f"5+rules.{rules.digest}"


READER_VERSION = reader_version(RULES)


@dataclass(frozen=True)
class Mention:
    """One mention of a candidate value and how the reader took it.

    Attributes:
        value: The candidate's canonical value.
        role: The candidate's role.
        frame: ``asserted``, ``retracted``, ``negated`` or why it does not count.
        cue: The words that decided the frame.
        line: Index of the line in the context.
        order: Sort key (date or inherited date, line, offset).
        attached_date: The date attached to this assertion (line, clause or section), if any.
        text: The line as written.
        rule: The id of the rule that decided the frame (a row of the rules file, or one of
            its compound cases).
    """

    value: str
    role: Role
    frame: Frame
    cue: str
    line: int
    order: tuple[str, int, int]
    attached_date: str | None
    text: str
    rule: str = ""


@dataclass(frozen=True)
class Reading:
    """What the memory says, as the careful reader reads it.

    Attributes:
        answer: The answer: the value presented as current, ``yes``/``no`` for yes/no probes,
            a date for temporal probes, the chosen option's text for actions; ``None`` when the
            memory does not say.
        polarity: ``yes``/``no`` for yes/no probes, else ``None``.
        current: The values presented as current (at most one for single-valued slots).
        deprecated_current: Whether a deprecated value is still presented as current.
        option: The chosen option's index (action probes).
        date: The attached date of the asked-about change (temporal probes).
        support: The line(s) the answer rests on.
        rationale: One line: what decided the answer.
        mentions: Every candidate mention with its frame, in reading order.
    """

    answer: str | None
    polarity: Literal["yes", "no"] | None
    current: tuple[str, ...]
    deprecated_current: bool
    option: int | None
    date: str | None
    support: tuple[str, ...]
    rationale: str
    mentions: tuple[Mention, ...] = ()


_DASHES = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
_QUOTES = {ord("‘"): "'", ord("’"): "'", ord("“"): '"', ord("”"): '"'}


def _fold(text: str) -> str:
    """Whitespace collapsed, dashes and quotes unified, case kept (the reader's working text)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    return " ".join(text.split())


@dataclass(frozen=True)
class _Prepared:
    lines: tuple[Line, ...]
    folded: tuple[str, ...]
    lower: tuple[str, ...]
    joined: str  # lower-cased lines joined by newlines, for one pass of phrase search
    starts: tuple[int, ...]
    running_dates: tuple[str, ...]  # latest date on any line up to and including each line


# Per distinct context: many probes of a checkpoint read the same (long) text. Few entries,
# since a full-context memory's text can be megabytes.
@lru_cache(maxsize=32)
def _prepare(context: str, names: frozenset[str]) -> _Prepared:
    lines = tuple(segment(context, names))
    folded = tuple(_fold(line.text) for line in lines)
    lower = tuple(f.lower() if len(f.lower()) == len(f) else f for f in folded)
    starts, at = [], 0
    for text in lower:
        starts.append(at)
        at += len(text) + 1
    running, latest = [], ""
    for line in lines:
        if line.date and line.date > latest:
            latest = line.date
        running.append(latest)
    return _Prepared(lines, folded, lower, "\n".join(lower), tuple(starts), tuple(running))


@dataclass(frozen=True)
class _Scanned:
    """A context folded to lower case in one piece, and its set of letter-and-digit runs."""

    text: str
    runs: frozenset[str]
    records: bool = False  # holds JSON objects or graph edges (read as rendered sentences)


_ASCII_SEPARATORS = bytes(c if chr(c).isalnum() else 0x20 for c in range(128)) + b" " * 128


def _runs_of(text: str) -> frozenset[str]:
    if text.isascii():  # byte translation splits ASCII many times faster than a regex
        return frozenset(text.encode().translate(_ASCII_SEPARATORS).decode().split())
    return frozenset(_R["run"].findall(text))


@lru_cache(maxsize=32)
def _scan(context: str) -> _Scanned:
    text = _fold(context).lower()
    runs = _runs_of(text)
    # A plural stands for its singular too ("matcha lattes" mentions "matcha latte"); the
    # set holds each distinct word once, so this costs little even on a long context.
    singulars = {run[:-1] for run in runs if run.endswith("s") and len(run) > 2}
    records = "{" in text or "-->" in text or "]->" in text
    return _Scanned(text, runs | singulars, records)


@dataclass(frozen=True)
class _Phrase:
    given: str  # as the probe spells it
    key: str  # normalised
    runs: frozenset[str]
    owners: tuple[int, ...]


@lru_cache(maxsize=4096)
def _phrases(candidates: tuple[Candidate, ...]) -> tuple[_Phrase, ...]:
    owners: dict[str, list[int]] = {}
    for number, candidate in enumerate(candidates):
        for phrase in candidate.phrases:
            owners.setdefault(phrase, []).append(number)
    return tuple(
        _Phrase(given, normalise(given), _runs_of(normalise(given)), tuple(found))
        for given, found in owners.items()
        if normalise(given)
    )


def _bounded(key: str, text: str) -> list[tuple[int, int]]:
    """Where ``key`` occurs in ``text`` with no letter or digit right before or after it.

    The same rule as the word-bounded phrase patterns, by plain substring search: a pattern
    that starts with a look-behind is tried at every position of a long context.
    """
    found, at, size = [], text.find(key), len(key)
    edge_start, edge_end = key[:1].isalnum(), key[-1:].isalnum()
    while at >= 0:
        end = at + size
        before = at == 0 or not edge_start or not text[at - 1].isalnum()
        after = end == len(text) or not edge_end or not text[end].isalnum()
        # A plural is the same value ("matcha lattes", "window seats").
        plural = (
            edge_end
            and not after
            and text[end] == "s"
            and (end + 1 == len(text) or not text[end + 1].isalnum())
        )
        if before and (after or plural):
            found.append((at, end + plural))
        at = text.find(key, at + 1)
    return found


# Probes that share a context search it for many of the same phrases (the slot's other values):
# each text keeps its phrases' occurrences. Only the last few texts, since a full-context
# memory's text can be megabytes (they are the texts _scan and _prepare keep anyway).
_OCCURRENCE_TEXTS = 8
_occurrences: BoundedCache[str, dict[str, list[tuple[int, int]]]] = BoundedCache(_OCCURRENCE_TEXTS)
# The cache guards its own entries; this lock guards the per-text dict inside one.
_occurrences_lock = threading.Lock()


def _bounded_seen(key: str, text: str) -> list[tuple[int, int]]:
    """:func:`_bounded`, kept per text (the list is shared: callers only read it)."""
    spans = _occurrences.get_or_build(text, dict)
    with _occurrences_lock:
        found = spans.get(key)
        if found is None:
            found = spans[key] = _bounded(key, text)
        return found


# Pure functions of one line or one mention, called again for every probe that mentions a value
# on the same line.
_clauses_of = lru_cache(maxsize=16384)(split_clauses)
_hedges_stripped = lru_cache(maxsize=16384)(strip_hedges)
_frame_of = lru_cache(maxsize=8192)(frame_of)


@lru_cache(maxsize=8192)
def _names(subject_names: tuple[str, ...]) -> frozenset[str]:
    names: set[str] = set()
    for name in subject_names:
        key = normalise(name)
        if key:
            names.add(key)
            names.add(key.split(" ")[0])
    return frozenset(names)


def read_context(context: str, probe: ReaderProbe) -> Reading:
    """Read ``context`` (the retrieved memory text) for ``probe``.

    Args:
        context: The text a memory system handed to the reader.
        probe: The probe, with its candidate values.

    Returns:
        The reading: the current answer (or ``None``), its support and a rationale.
    """
    if not context.strip() or not probe.candidates:
        return _conclude(probe, [], "the memory is empty" if not context.strip() else "")
    # Pre-filter: a phrase can only occur if all its runs are runs of the text, and only
    # contexts that mention some candidate are segmented and read.
    scanned = _scan(context)
    present = [
        phrase
        for phrase in _phrases(probe.candidates)
        if phrase.runs <= scanned.runs and _bounded_seen(phrase.key, scanned.text)
    ]
    names = _names(probe.subject_names)
    if not present and scanned.records:
        # Records are read as rendered sentences ("weight_lb": 66 → "weight 66 lb"), where a
        # value may be spelled as it is not in the raw text.
        rendered = _prepare(context, names).joined
        present = [
            phrase for phrase in _phrases(probe.candidates) if _bounded_seen(phrase.key, rendered)
        ]
    if not present:
        return _conclude(probe, [], "no candidate value is mentioned")
    prepared = _prepare(context, names)
    hits: dict[int, list[tuple[int, int, int, str]]] = {}
    for phrase in present:
        for start, end in _bounded_seen(phrase.key, prepared.joined):
            line = bisect_right(prepared.starts, start) - 1
            offset = prepared.starts[line]
            for owner in phrase.owners:
                hits.setdefault(line, []).append(
                    (start - offset, end - offset, owner, phrase.given)
                )
    mentions: list[Mention] = []
    for line_number in sorted(hits):
        for mention in _line_mentions(prepared, line_number, hits[line_number], probe, names):
            mentions.append(_replied(prepared, mention, hits))
    mentions.extend(_taken_back(prepared, mentions, hits))
    if probe.kind == "temporal":
        mentions.extend(_redated(prepared, mentions, hits, probe.event_value or ""))
    mentions.sort(key=lambda m: m.order)
    return _conclude(probe, mentions, "")


def _line_mentions(
    prepared: _Prepared,
    number: int,
    found: list[tuple[int, int, int, str]],
    probe: ReaderProbe,
    names: frozenset[str],
) -> list[Mention]:
    line = prepared.lines[number]
    folded, lower = prepared.folded[number], _hedges_stripped(prepared.lower[number])
    asked = _asked_relations(probe.question)
    asked_place = _asks_place(probe.question)
    speaker = line.speaker
    if speaker == "other" and "'s " in line.head:
        # "Ella's partner: Marco" answers "who is Ella's partner": the head labels the slot.
        head_owner, _, relation = line.head.partition("'s ")
        if (head_owner in names or head_owner in ("user", "principal")) and relation in asked:
            speaker = "note"
    # Longest match first at each place; a match inside a longer one is the same mention.
    found = sorted(found, key=lambda f: (f[0], -(f[1] - f[0])))
    kept: list[tuple[int, int, int, str]] = []
    for start, end, owner, phrase in found:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, owner, phrase))
    clauses = _clauses_of(lower)
    sentences = sorted({(s, e) for s, e, _, _ in clauses})
    # Whether the writer capitalises names (a capital inside a sentence other than "I"): chat
    # typed with only sentence-initial capitals gives no evidence from case.
    line_cased = bool(_R["mid-capital"].search(folded))
    mentions: list[Mention] = []
    targets: set[str] = set()
    windows: dict[int, int] = {}  # offset → where the words that lead to it start
    previous_end: dict[int, int] = {}
    for position, (start, end, owner, phrase) in enumerate(kept):
        # A tag after the value belongs to it until the next value ("Lumen (previously Kestrel)").
        next_start = kept[position + 1][0] if position + 1 < len(kept) else len(lower)
        number_in = next(
            (i for i, c in enumerate(clauses) if c[2] <= start < max(c[3], c[2] + 1)),
            len(clauses) - 1,
        )
        s_start, s_end, c_start, c_end = clauses[number_in]
        c_end = max(c_end, end)
        window_start = max(c_start, previous_end.get(number_in, c_start))
        previous_end[number_in] = end
        next_sentence = next((lower[s:e] for s, e in sentences if s >= s_end), "")
        candidate = probe.candidates[owner]
        cased_left = folded[c_start:start]
        other_at = -1
        for match in _R["other-name"].finditer(cased_left):
            name = match.group(1).lower()
            if (
                name not in names
                and name not in _WORDS["not-names"]
                and not name.endswith("ly")
                and name not in RELATIONS  # "Wife's name": the relation rules decide
                and name not in _candidate_words(probe.candidates)
            ):
                other_at = match.start()
        context = MentionContext(
            left=lower[c_start:start],
            right=lower[end:c_end],
            window=lower[window_start:start],
            sentence_left=lower[s_start:start],
            sentence=lower[s_start:s_end],
            next_sentence=next_sentence,
            tail=lower[end : min(s_end, next_start)].split(";")[0],
            until_next=lower[end : min(s_end, next_start)],
            speaker=speaker,
            phrase_raw=folded[start:end],
            phrase_given=phrase,
            raw_sentence_left=folded[s_start:start],
            weak=" " not in phrase.strip() and " " in candidate.value.strip(),
            negative_value=_negative_value(candidate.value),
            line_has_ack=bool(_R["ack"].search(lower, s_start, s_end)),
            other_name_at=other_at,
            addressed=bool(names & _runs_of(lower[s_start:s_end])),
            sentence_start=not folded[s_start:start].strip(" \"'*-•"),
            narrated=bool(line.head) and line.head in names,
            in_aside=_in_aside(lower, start, kept[:position]),
            line_cased=line_cased,
            labelled=speaker == "note" and bool(line.head),
            asked=asked,
            asked_place=asked_place,
        )
        frame, cue, rule = _frame_of(context)
        if frame == "asserted" and line.planned:
            frame, cue, rule = "hypothetical", "listed as a plan or goal", "planned-line"
        if frame == "asserted" and line.head and _R["former-head"].search(line.head):
            frame, cue, rule = "retracted", f"labelled as past ({line.head})", "former-head"
        if probe.kind == "temporal" and _R["relation-owned"].search(
            lower, max(0, start - 40), start
        ):
            frame, cue, rule = "third_party", "another person's event", "relation-owned"
        if (
            frame == "retracted"
            and probe.kind == "temporal"
            and candidate.role == "current"
            and _R["told-in-past"].match(cue)
        ):
            # "When was the baby born?" is answered by "she was born on the 28th": the event
            # asked about is told in the past tense, which does not end it.
            frame, cue, rule = "asserted", "the event, told in the past", "told-in-past"
        elif (
            frame == "hypothetical"
            and probe.kind == "temporal"
            and candidate.role == "current"
            and _R["plan-cue"].match(cue)
            and _R["asks-ahead"].search(probe.question)
        ):
            # "When is Anders planning to propose?" is answered by the plan's date.
            frame, cue, rule = "asserted", f"the planned event asked about ({cue})", "plan-cue"
        # The topic may be named in the sentence or the one before ("I changed my mind about
        # remote work. I'm undecided.").
        before = max((s for s, e in sentences if e <= s_start), default=s_start)
        if (
            frame == "asserted"
            and probe.topic
            and not set(probe.topic) <= _runs_of(lower[before:s_end])
        ):
            frame, cue, rule = "other_topic", "a view on another topic", "other-topic"
        known = line.own_date or line.section_date or prepared.running_dates[number]
        # A line stamped with a date that cannot be read in full ("03/05/2027") still gives
        # the year of a day and month written in it.
        stamp = _R["stamp-year"].match(line.raw) if not known else None
        clause_dates = _attached_dates(
            folded, c_start, c_end, start, known, stamp.group(1) if stamp else ""
        )
        fixed = _R["fixes-date"].search(lower, end) if clause_dates else None
        if fixed and clause_dates:
            # "flight to Lima 21 Apr … sorry, typo, it's the 22nd (22/04/2025)": the date
            # after the correction stands.
            after = _dates_in(folded[fixed.end() :], known or (clause_dates[0][2]))
            if after:
                shift = fixed.end() - c_start
                clause_dates = [(a + shift, b + shift, iso) for a, b, iso in after[-1:]]
        if not clause_dates and s_end > c_end:
            # "adopted Biscuit (terrier mix) on 14 Oct 2023": a date a few words on in the
            # sentence, with no other value between.
            rest = find_dates(folded[c_end:s_end])
            if (
                rest
                and rest[0][0] <= 40
                and not any(c_end <= f[0] < c_end + rest[0][0] for f in kept)
            ):
                clause_dates = [
                    (rest[0][0] + c_end - c_start, rest[0][1] + c_end - c_start, rest[0][2])
                ]
        if not clause_dates and c_end < len(folded):
            # "Adaora's graduation — 16.07.2027 (Fri)": a date that opens the next clause,
            # right after the event's name, is that event's date.
            label = _R["date-label"].match(folded, c_end)
            opening = find_dates(label.group(1)) if label else []
            if opening and opening[0][0] == 0:
                clause_dates = opening[:1]
        # Of several dates in the clause, the one written nearest the value is its own ("my son
        # started school today, I start my new job on the 20th").
        offset_in = start - c_start
        clause_date = (
            min(clause_dates, key=lambda d: min(abs(d[0] - offset_in), abs(d[1] - offset_in)))[2]
            if clause_dates
            else None
        )
        if frame == "retracted" and clause_dates:
            clause_date = clause_dates[-1][2]  # "valid 2027-01 to 2027-06": it ended at the end
        order_date = line.own_date or line.section_date or clause_date
        order_date = order_date or prepared.running_dates[number]
        # "When did X start?" is answered by the date written with the event; "when did X tell
        # you" by the date of the telling.
        if _R["asks-telling"].search(probe.question):
            # A period said with the event ("last week") dates the event, not the telling.
            told = None if is_period(clause_date) else clause_date
            attached = line.own_date or told or line.section_date
        elif _R["asks-ahead"].search(probe.question):
            # An event ahead is not dated by the day it was mentioned ("the recital's on a
            # Saturday, not sure which", sent on 12 March), but a note's own date is its day
            # ("* 2025-10-12 runs the Lyon half-marathon").
            attached = clause_date or (line.own_date if speaker == "note" else None)
        else:
            attached = clause_date or line.own_date or line.section_date
        mentions.append(
            Mention(
                candidate.value,
                candidate.role,
                frame,
                cue,
                line.index,
                (order_date or "", number, start),
                attached,
                line.raw.strip(),
                rule,
            )
        )
        if frame == "asserted" and _R["change-target"].search(lower, max(0, start - 48), start):
            targets.add(candidate.value)
        windows[start] = window_start
    if targets and probe.exclusive and probe.kind != "temporal":
        # "just moved to Kiel, Hamburg rents were insane", "back at Monzo, Wise wasn't a fit":
        # after the value a line says it moved to, another value of the slot is named only in
        # passing.
        first_target = min(
            m.order[2] for m in mentions if m.value in targets and m.frame == "asserted"
        )
        mentions = [
            replace(
                m,
                frame="aside",
                cue="named beside the change to another value",
                rule="change-target",
            )
            if m.frame == "asserted"
            and m.value not in targets
            and m.order[2] > first_target
            and not _R["state-words"].search(lower, windows[m.order[2]], m.order[2])
            else m
            for m in mentions
        ]
    return mentions


@lru_cache(maxsize=1024)
def _asks_place(question: str) -> bool:
    """Whether the question asks where the subject lives (read once per question)."""
    return bool(_R["asks-place"].search(question))


_RELATION_KINDS = tuple(RULES.words(kind) for kind in ("partner-words", "pet-words", "boss-words"))


@lru_cache(maxsize=1024)
def _asked_relations(question: str) -> frozenset[str]:
    """Relation words the question asks about, with their everyday synonyms."""
    words = frozenset(
        w[:-2] if w.endswith("'s") else w for w in _runs_of(question.lower().replace("’", "'"))
    )
    found: set[str] = set(words & RELATIONS)
    for kind in _RELATION_KINDS:
        if words & kind:
            found |= kind
    return frozenset(found)


@lru_cache(maxsize=16384)  # the same clause is read again for every probe mentioning it
def _attached_dates(
    folded: str, c_start: int, c_end: int, at: int, known: str = "", year: str = ""
) -> list[tuple[int, int, str]]:
    """Dates attached to the mention at ``at``.

    Those of its clause, and when the clause joins several dated parts ("the pre-op is on
    2027-09-20 and the surgery on 2027-09-27"), only those of the part that holds the mention.
    A day and month without a year ("started on Feb 1") takes the year of the line's date, and
    "tomorrow" or "last week" are read from the line's own date.
    """
    dates = _dates_in(folded[c_start:c_end], known, year, more="period")
    if len(dates) < 2:
        return dates
    part_start = c_start
    for match in _R["part-break"].finditer(folded, c_start, c_end):
        if match.start() >= at:
            return [d for d in dates if part_start - c_start <= d[0] < match.start() - c_start]
        part_start = match.end()
    return [d for d in dates if d[0] >= part_start - c_start]


def _in_aside(lower: str, start: int, before: Sequence[tuple[int, int, int, str]]) -> bool:
    """Whether ``start`` sits in brackets opened after an earlier value's mention."""
    opened = lower.rfind("(", 0, start)
    if opened < 0 or lower.rfind(")", 0, start) > opened:
        return False
    return any(end <= opened for _, end, _, _ in before)


_TAKE_BACK = RULES.alternation("take-back", lambda phrase: phrase.next_line)


def _taken_back(
    prepared: _Prepared, mentions: Sequence[Mention], hits: dict[int, list[Any]]
) -> list[Mention]:
    """Retractions of the latest assertion by one of the next two lines that names no value."""
    found: list[Mention] = []
    asserted = [m for m in mentions if m.frame == "asserted"]
    for mention in asserted:
        number = mention.order[1]
        for follow in range(number + 1, min(number + 3, len(prepared.lines))):
            line = prepared.lines[follow]
            cue = _TAKE_BACK.search(prepared.lower[follow])
            if follow in hits and not (
                cue
                and all(h[2] == hits[number][0][2] for h in hits[follow])
                and cue.start() < min(h[0] for h in hits[follow])
            ):
                # A line that names a value speaks for itself, unless it opens by taking
                # back the line before and names only that value again ("She took that back:
                # the ferret went to her cousin").
                break
            if line.speaker not in ("subject", "note"):
                continue
            if cue:
                date = line.own_date or line.section_date or mention.order[0]
                found.append(
                    replace(
                        mention,
                        frame="retracted",
                        cue=f"taken back on the next line ({cue.group(0)})",
                        rule="take-back",
                        line=line.index,
                        order=(max(date, mention.order[0]), follow, 0),
                        text=line.raw.strip(),
                    )
                )
                break
    return found


def _dates_in(
    text: str, known: str, year: str = "", more: Literal["", "ordinal", "period"] = "ordinal"
) -> list[tuple[int, int, str]]:
    """Full dates in ``text``, else those read with the date ``known`` (or only its ``year``).

    A day and month take the year ("started on Feb 1"), "tomorrow" is read from the day; then,
    as ``more`` says, a bare ordinal ("on the 9th") falls in the same month, or a period ("last
    week", "two weekends ago") is read from the day.
    """
    found = find_dates(text)
    if not found and (known or year):
        found = find_yearless(text, known[:4] or year)
    if not found and known:
        found = find_relative(text, known)
    if not found and known and more == "period":
        found = find_periods(text, known)
    if not found and known and more == "ordinal":
        found = [
            (m.start(), m.end(), iso)
            for m in _R["bare-ordinal"].finditer(text)
            if (iso := iso_day(known[:4], known[5:7], m.group(1))) is not None
        ]
    return found


def _redated(
    prepared: _Prepared, mentions: Sequence[Mention], hits: dict[int, list[Any]], event: str
) -> list[Mention]:
    """A date put right on one of the next two lines, which names no value.

    "conference is Oct 5 / ignore that, checked the email: Oct 15 2027": the event keeps its
    mention and takes the corrected date.
    """
    found: list[Mention] = []
    events = [m for m in mentions if m.frame == "asserted" and m.value == event]
    if not events:
        return found
    # The lines that move a date, found once for the whole context.
    moves: dict[int, re.Match[str]] = {}
    for follow, text in enumerate(prepared.lower):
        if follow not in hits:
            move = _R["moves-date"].search(text)
            if move:
                moves[follow] = move
    for mention in events:
        number = mention.order[1]
        near_lines = [n for n in (number + 1, number + 2) if n < len(prepared.lines)]
        for follow in sorted({*near_lines, *moves} - {number}):
            if follow in hits:
                continue
            text = prepared.lower[follow]
            near = number < follow <= number + 2
            cue = (_R["fixes-date"].search(text) if near else None) or moves.get(follow)
            if not cue:
                continue
            line = prepared.lines[follow]
            if not near and (line.date or "") <= mention.order[0]:
                continue  # a move is read only from a line dated after the mention
            known = line.own_date or line.section_date or mention.attached_date or ""
            folded = prepared.folded[follow]
            dates = _dates_in(folded, known, more="ordinal" if near else "")
            dates = [d for d in dates if d[2] != mention.attached_date]
            if not near:  # a move names its new date right after it: "moved to 19 Mar"
                dates = [
                    d
                    for d in dates
                    if 0 <= d[0] - cue.end() <= 20
                    and _R["gap-to-date"].fullmatch(folded[cue.end() : d[0]].lower())
                ]
            if dates:
                date = line.own_date or line.section_date or mention.order[0]
                found.append(
                    replace(
                        mention,
                        cue=f"date put right on a later line ({cue.group(0)})",
                        rule=RULES.id_of(cue.re),
                        line=line.index,
                        order=(max(date, mention.order[0]), follow, 0),
                        attached_date=dates[0][2],
                        text=line.raw.strip(),
                    )
                )
                break
    return found


def _replied(prepared: _Prepared, mention: Mention, hits: dict[int, list[Any]]) -> Mention:
    """An assistant's line about the subject, as the subject's reply on the next line takes it.

    "assistant: So you're in Leeds now? / user: yep" states Leeds, dated by the reply;
    "… / user: no, Cardiff" denies it. A restatement the reply corrects ("assistant: Since
    you're in Oslo, … / user: lol I'm in Bergen actually") was never the subject's, unless the
    reply names the same value again: then it speaks for itself.
    """
    restated = mention.frame == "asserted" and mention.cue.startswith("assistant")
    number = mention.order[1]
    if not (restated or mention.frame == "question") or number + 1 >= len(prepared.lines):
        return mention  # most mentions: nothing the next line can change
    if prepared.lines[number + 1].speaker != "subject":
        return mention
    reply, asked, text = (
        prepared.lines[number + 1],
        prepared.lower[number],
        prepared.lower[number + 1],
    )
    if restated:
        if not _R["corrects"].search(text):
            return mention
        at = mention.order[2]
        owner = next((h[2] for h in hits.get(number, []) if h[0] <= at < h[1] + 1), None)
        if owner is not None and any(h[2] == owner for h in hits.get(number + 1, [])):
            return mention
        return replace(
            mention, frame="aside", cue="corrected by the subject's reply", rule="corrects"
        )
    if (
        mention.frame != "question"
        or prepared.lines[number].speaker != "assistant"
        or not (_R["you-word"].search(asked) or _R["ack"].search(asked))
    ):
        return mention
    start = mention.order[2]
    if _R["commute-to"].search(asked, max(0, start - 40), start):
        return mention  # "commuting down to Accra?": confirmed as a trip, not a home
    if _R["yes-reply"].search(text):
        return replace(
            mention,
            frame="asserted",
            cue="the subject confirms the assistant's question",
            rule="yes-reply",
            order=(reply.own_date or reply.section_date or mention.order[0], number + 1, 0),
            attached_date=reply.own_date or mention.attached_date,
        )
    if _R["no-reply"].search(text):
        return replace(
            mention,
            frame="negated",
            cue="the subject denies the assistant's question",
            rule="no-reply",
        )
    return mention


@lru_cache(maxsize=4096)
def _candidate_words(candidates: tuple[Candidate, ...]) -> frozenset[str]:
    return frozenset(w for c in candidates for p in c.phrases for w in normalise(p).split(" "))


@lru_cache(maxsize=4096)
def _negative_value(value: str) -> bool:
    """Whether the value's own wording negates ("does not drink alcohol")."""
    return bool(_R["value-negators"].search(normalise(value)))


def _event_line(probe: ReaderProbe, run: Sequence[Mention]) -> Mention | None:
    """The assertion that tells the event asked about.

    Of the current run's lines, the first of those naming the most of the event's words
    ("picked up her new bike" over "ordered the bike" for "when did she pick up the bike").
    """
    if len(run) < 2:
        return run[0] if run else None
    fixed = [m for m in run if m.cue.startswith("date put right")]
    if fixed:
        return fixed[-1]
    if _R["asks-ahead"].search(probe.question):
        # An appointment is where the latest word about it puts it: "dentist on the 14th" then,
        # later, "dentist rang: moved to the 28th".
        dated = [m for m in run if m.attached_date is not None]
        if dated:
            return dated[-1]
    phrases = next((c.phrases for c in probe.candidates if c.value == probe.event_value), ())
    patterns = [re.compile(r"\b" + re.escape(normalise(p))) for p in phrases if normalise(p)]

    def named(mention: Mention) -> int:
        text = normalise(mention.text)
        return sum(1 for pattern in patterns if pattern.search(text))

    def rank(mention: Mention) -> tuple[int, bool, bool]:
        # Of lines naming the event alike, one that says when it happened ("ran the marathon
        # yesterday") answers "when" over one that only mentions it ("training for the
        # marathon"): its attached date is its own, not its line's.
        dated = mention.attached_date is not None
        return named(mention), dated, dated and mention.attached_date != mention.order[0]

    best = max(rank(m) for m in run)
    return next(m for m in run if rank(m) == best)


# What says a statement was never meant (a joke, a slip): the same rule as taking back.
_UNSAID = RULES.alternation("take-back", lambda phrase: phrase.unsaid)


def _said(mentions: Sequence[Mention]) -> list[Mention]:
    """The decoy's mentions that say it: assertions, and statements since retracted.

    A statement taken back as a joke or a slip was never said ("WE'RE ENGAGED / jk april
    fools"): it and the assertion it takes back are left out.
    """
    said: list[Mention] = []
    for mention in mentions:
        if mention.role != "decoy":
            continue
        if mention.frame == "retracted" and _UNSAID.search(mention.cue):
            said = [m for m in said if m.value != mention.value]
        elif mention.frame in ("asserted", "retracted"):
            said.append(mention)
    return said


def _current(
    probe: ReaderProbe, mentions: Sequence[Mention]
) -> tuple[dict[str, Mention], dict[str, list[Mention]]]:
    """Each value presented as current with the assertion that made it so, and its current run.

    A temporal probe asks the date of one event: another candidate date replaces it only on a
    line that names the event ("registered on 4 April; the race itself is on 9 April").
    """
    current: dict[str, Mention] = {}
    runs: dict[str, list[Mention]] = {}
    ordered = mentions
    if probe.kind == "temporal":
        event_lines = {m.order[1] for m in mentions if m.value == probe.event_value}
        ordered = [m for m in mentions if m.value == probe.event_value or m.order[1] in event_lines]
    for mention in ordered:
        if mention.frame == "asserted":
            if probe.exclusive:
                for other in [v for v in current if v != mention.value]:
                    del current[other]
                    runs.pop(other, None)
            if mention.value not in current:
                runs[mention.value] = []
            current[mention.value] = mention
            runs[mention.value].append(mention)
        elif mention.frame in ("retracted", "negated") and mention.value in current:
            del current[mention.value]
            runs.pop(mention.value, None)
    return current, runs


def _conclude(probe: ReaderProbe, mentions: Sequence[Mention], why: str) -> Reading:
    current, runs = _current(probe, mentions)
    values = tuple(current)
    deprecated = any(probe.role_of(v) == "deprecated" for v in values)
    counted = [m for m in mentions if m.frame in ("asserted", "retracted", "negated")]
    # By identity: equal mentions are counted alike, and equality compares every field.
    counted_ids = {id(m) for m in counted}
    why = why or _summary(counted, [m for m in mentions if id(m) not in counted_ids])

    def reading(
        answer: str | None,
        decided: str,
        support: tuple[str, ...] = (),
        polarity: Literal["yes", "no"] | None = None,
        option: int | None = None,
        date: str | None = None,
    ) -> Reading:
        rationale = f"{decided}; {why}"
        return Reading(
            answer, polarity, values, deprecated, option, date, support, rationale, tuple(mentions)
        )

    if probe.kind == "yes_no":
        # "Has X ever said Y?": a statement that was true once (now retracted) was still said;
        # a negation ("I'm not Y") was not.
        said = _said(mentions)
        answer: Literal["yes", "no"] = "yes" if said else "no"
        decided = f"decoy stated: {said[-1].cue} (rule {said[-1].rule})" if said else ""
        support = tuple(m.text for m in said[-1:])
        return reading(answer, decided or "decoy never stated", support, polarity=answer)
    if probe.kind == "temporal":
        start = _event_line(probe, runs.get(probe.event_value or "", []))
        if start is None:
            return reading(None, "change not stated")
        day = start.attached_date
        decided = f"change stated on {day}" if day else "change stated with no date attached"
        return reading(day, decided, (start.text,), date=day)
    if probe.kind == "action":
        options = (current[v] for v in values if probe.role_of(v) == "option")
        chosen_mention = max(options, key=lambda m: m.order, default=None)
        chosen = probe.default_option
        if chosen_mention is None:
            return reading(_option_text(probe, chosen), "default action", option=chosen)
        chosen = next(c.option for c in probe.candidates if c.value == chosen_mention.value)
        supported = f"supported: {chosen_mention.value!r}"
        return reading(
            _option_text(probe, chosen), supported, (chosen_mention.text,), option=chosen
        )
    latest = max(current.values(), key=lambda m: m.order) if current else None
    answer_value = latest.value if latest is not None else None
    if latest is not None and not probe.exclusive:
        # Several values hold at once: the asked-about one, when it is among them.
        answer_value = next((v for v in values if probe.role_of(v) == "current"), latest.value)
    if not answer_value:
        return reading(answer_value, "the memory does not say")
    return reading(answer_value, f"current: {answer_value!r}", (current[answer_value].text,))


def _option_text(probe: ReaderProbe, chosen: int | None) -> str | None:
    return probe.options[chosen].text if chosen is not None and probe.options else None


def _summary(counted: Sequence[Mention], ignored: Sequence[Mention]) -> str:
    parts = [f"{m.value!r} {m.frame} ({m.cue}; rule {m.rule})" for m in counted[-3:]]
    if ignored:
        frames = sorted({m.frame for m in ignored})
        parts.append(f"{len(ignored)} mention(s) not counted: {', '.join(frames)}")
    return "; ".join(parts) if parts else "no mention counted"
