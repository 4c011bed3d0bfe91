"""The careful reader: what the retrieved memory says the current answer is.

Only lines that mention a candidate value are analysed (one pass over the whole text finds
which candidates occur at all; a context that mentions none is answered at once). Each mention
gets a frame from the rows of the rules file (:mod:`._scope`); asserted mentions and
retractions become events, ordered by date, and the latest decides what is current.

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
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate
from typing import Any, Literal, NamedTuple

from drift_pipeline._bounded import per_unit
from drift_pipeline.textmatch import normalise, runs_of

from ._dates import dates_in, find_dates, is_period
from ._probe import Candidate, ReaderProbe, Role
from ._rules import RULES, FrameName, Rules
from ._scope import (
    MentionKey,
    ProbeFacts,
    asked_relations,
    clause_at,
    frame_of,
    lowered,
    other_name_at,
    split_clauses,
)
from ._segment import Line, segment, subject_relation

_R = RULES.patterns

__all__ = ["Mention", "Reading", "read_context"]

# Rules and lexicon only: no sentence-embedding model (see the reader section of
# docs/decisions.md). The version changes whenever a reading can change.
READER_NAME = "careful"


def reader_version(rules: Rules) -> str:
    """The reader's version with a rules file: a changed cue is a changed reader."""
    return f"7+rules.{rules.digest}"


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
        rule: The id of the row of the rules file that decided the frame.
    """

    value: str
    role: Role
    frame: FrameName
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
        rationale: One line: what decided the answer, with the id of the deciding rule.
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
@per_unit
@lru_cache(maxsize=32)
def _prepare(
    context: str, names: frozenset[str], others: frozenset[str] = frozenset()
) -> _Prepared:
    lines = tuple(segment(context, names, others))
    folded = tuple(line.text for line in lines)  # the reader's working text, case kept
    lower = tuple(low if len(low := f.lower()) == len(f) else f for f in folded)
    starts = tuple(accumulate((len(text) + 1 for text in lower[:-1]), initial=0))[: len(lower)]
    running = tuple(accumulate((line.date or "" for line in lines), max))  # latest date so far
    return _Prepared(lines, folded, lower, "\n".join(lower), starts, running)


@per_unit
@lru_cache(maxsize=32)
def _scan(context: str) -> tuple[str, frozenset[str], bool]:
    """The context folded to lower case, its runs, and whether it holds records (JSON, edges).

    A plural stands for its singular too ("matcha lattes" mentions "matcha latte"); the set
    holds each distinct word once, so this costs little even on a long context.
    """
    text = normalise(context)
    runs = runs_of(text)
    singulars = {run[:-1] for run in runs if run.endswith("s") and len(run) > 2}
    return text, runs | singulars, "{" in text or "-->" in text or "]->" in text


class _Phrase(NamedTuple):
    given: str  # as the probe spells it
    key: str  # normalised
    runs: frozenset[str]
    owners: tuple[int, ...]  # the candidates it spells


@lru_cache(maxsize=4096)
def _phrases(candidates: tuple[Candidate, ...]) -> tuple[_Phrase, ...]:
    """Each distinct phrase of the candidates."""
    owners: dict[str, list[int]] = {}
    for number, candidate in enumerate(candidates):
        for phrase in candidate.phrases:
            owners.setdefault(phrase, []).append(number)
    return tuple(
        _Phrase(given, key, runs_of(key), tuple(found))
        for given, found in owners.items()
        if (key := normalise(given))
    )


def _bounded(key: str, text: str) -> list[tuple[int, int]]:
    """Where ``key`` occurs in ``text`` with no letter or digit right before or after it.

    By plain substring search: a pattern that starts with a look-behind is tried at every
    position of a long context. A plural is the same value ("matcha lattes", "window seats").
    """
    found, at, size = [], text.find(key), len(key)
    edge_start, edge_end = key[:1].isalnum(), key[-1:].isalnum()
    while at >= 0:
        end = at + size
        before = at == 0 or not edge_start or not text[at - 1].isalnum()
        after = end == len(text) or not edge_end or not text[end].isalnum()
        plural = edge_end and not after and text[end] == "s"
        plural = plural and (end + 1 == len(text) or not text[end + 1].isalnum())
        if before and (after or plural):
            found.append((at, end + plural))
        at = text.find(key, at + 1)
    return found


# Probes that share a context search it for many of the same phrases (the slot's other values):
# each text keeps its phrases' occurrences. Only the last few texts, since a full-context
# memory's text can be megabytes (they are the texts _scan and _prepare keep anyway).
@per_unit
@lru_cache(maxsize=8)
def _occurrences(text: str) -> dict[str, list[tuple[int, int]]]:
    return {}


def _bounded_seen(key: str, text: str) -> list[tuple[int, int]]:
    """:func:`_bounded`, kept per text (the list is shared: callers only read it)."""
    spans = _occurrences(text)  # one dict operation each: two threads at most both search
    return spans[key] if key in spans else spans.setdefault(key, _bounded(key, text))


@lru_cache(maxsize=8192)
def _names(subject_names: tuple[str, ...]) -> frozenset[str]:
    """The subject's names, normalised, each with its first word."""
    keys = [key for key in map(normalise, subject_names) if key]
    return frozenset(keys + [key.split(" ")[0] for key in keys])


@lru_cache(maxsize=4096)
def _candidate_words(candidates: tuple[Candidate, ...]) -> frozenset[str]:
    return frozenset(w for c in candidates for p in c.phrases for w in normalise(p).split(" "))


Hit = tuple[int, int, int, str]  # start, end, the candidate's index, the phrase as given


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
    text, runs, records = _scan(context)
    phrases = _phrases(probe.candidates)
    present = [p for p in phrases if p.runs <= runs and _bounded_seen(p.key, text)]
    names, others = _names(probe.subject_names), _names(probe.other_speakers)
    if not present and records:
        # Records are read as rendered sentences ("weight_lb": 66 → "weight 66 lb"), where a
        # value may be spelled as it is not in the raw text.
        rendered = _prepare(context, names, others).joined
        present = [p for p in phrases if _bounded_seen(p.key, rendered)]
    if not present:
        return _conclude(probe, [], "no candidate value is mentioned")
    prepared = _prepare(context, names, others)
    hits: dict[int, list[Hit]] = {}
    for given, key, _, owners in present:
        for start, end in _bounded_seen(key, prepared.joined):
            line = bisect_right(prepared.starts, start) - 1
            offset = prepared.starts[line]
            for owner in owners:
                hits.setdefault(line, []).append((start - offset, end - offset, owner, given))
    mentions: list[Mention] = []
    for number in sorted(hits):
        for mention in _line_mentions(prepared, number, hits[number], probe, names):
            mentions.append(_replied(prepared, mention, hits))
    mentions.extend(_taken_back(prepared, mentions, hits))
    if probe.kind == "temporal":
        mentions.extend(_redated(prepared, mentions, hits, probe.event_value or ""))
    mentions.sort(key=lambda m: m.order)
    return _conclude(probe, mentions, "")


def _line_mentions(
    prepared: _Prepared, number: int, found: list[Hit], probe: ReaderProbe, names: frozenset[str]
) -> list[Mention]:
    line, folded = prepared.lines[number], prepared.folded[number]
    asked, values = asked_relations(probe.question), _candidate_words(probe.candidates)
    speaker = line.speaker
    # "Ella's partner: Marco" answers "who is Ella's partner": the head labels the slot.
    if speaker == "other" and subject_relation(line.head, names) in asked:
        speaker = "note"
    # Longest match first at each place; a match inside a longer one is the same mention.
    kept: list[Hit] = []
    for hit in sorted(found, key=lambda f: (f[0], f[0] - f[1])):
        if not kept or hit[0] >= kept[-1][1]:
            kept.append(hit)
    lower = lowered(folded)
    clauses = split_clauses(lower)
    place = bool(_R["asks-place"].search(probe.question))
    mentions: list[Mention] = []
    targets: set[str] = set()
    windows: dict[int, int] = {}  # offset → where the words that lead to it start
    previous_end: dict[int, int] = {}
    for position, (start, end, owner, phrase) in enumerate(kept):
        number_in, (s_start, s_end, c_start, c_end) = clause_at(clauses, start, end)
        windows[start] = max(c_start, previous_end.get(number_in, c_start))
        previous_end[number_in] = end
        # In brackets opened after an earlier value's mention: said about that value.
        opened = lower.rfind("(", 0, start)
        aside = opened > lower.rfind(")", 0, start) and any(h[1] <= opened for h in kept[:position])
        candidate = probe.candidates[owner]
        key = MentionKey(
            folded,
            start,
            end,
            windows[start],
            kept[position + 1][0] if position + 1 < len(kept) else len(lower),
            aside,
            speaker,
            line.head,
            phrase,
            candidate.value,
            names,
            other_name_at(folded[c_start:start], names, values),
            asked,
            place,
        )
        facts = ProbeFacts(line.planned, candidate.role, probe.kind, probe.topic, probe.question)
        frame, cue, rule = frame_of(key, facts)
        dates = _clause_dates(prepared, number, (s_start, s_end, c_start, c_end), start, end, kept)
        # Of several dates in the clause, the one written nearest the value is its own ("my son
        # started school today, I start my new job on the 20th"); a retraction ended at the
        # last ("valid 2027-01 to 2027-06").
        at, clause_date = start - c_start, None
        if dates:
            nearest = min(dates, key=lambda d: min(abs(d[0] - at), abs(d[1] - at)))
            clause_date = (dates[-1] if frame == "retracted" else nearest)[2]
        order_date = line.date or clause_date or prepared.running_dates[number]
        # "When did X start?" is answered by the date written with the event; "when did X tell
        # you" by the date of the telling.
        if _R["asks-telling"].search(probe.question):
            # A period said with the event ("last week") dates the event, not the telling.
            attached = line.own_date or (None if is_period(clause_date) else clause_date)
            attached = attached or line.section_date
        elif _R["asks-ahead"].search(probe.question):
            # An event ahead is not dated by the day it was mentioned ("the recital's on a
            # Saturday, not sure which", sent on 12 March), but a note's own date is its day.
            attached = clause_date or (line.own_date if speaker == "note" else None)
        else:
            attached = clause_date or line.date
        order = (order_date or "", number, start)
        text = line.raw.strip()
        mentions.append(
            Mention(
                candidate.value, candidate.role, frame, cue, line.index, order, attached, text, rule
            )
        )
        if frame == "asserted" and _R["change-target"].search(lower, max(0, start - 48), start):
            targets.add(candidate.value)
    if targets and probe.exclusive and probe.kind != "temporal":
        # "just moved to Kiel, Hamburg rents were insane", "back at Monzo, Wise wasn't a fit":
        # after the value a line says it moved to, another value of the slot is named only in
        # passing.
        first = min(m.order[2] for m in mentions if m.value in targets and m.frame == "asserted")
        passing = "named beside the change to another value"
        mentions = [
            replace(m, frame="aside", cue=passing, rule="change-target")
            if m.frame == "asserted"
            and m.value not in targets
            and m.order[2] > first
            and not _R["state-words"].search(lower, windows[m.order[2]], m.order[2])
            else m
            for m in mentions
        ]
    return mentions


def _clause_dates(
    prepared: _Prepared,
    number: int,
    clause: tuple[int, int, int, int],
    start: int,
    end: int,
    kept: Sequence[Hit],
) -> list[tuple[int, int, str]]:
    """The dates attached to the mention at ``start``, as offsets in its clause."""
    line, folded = prepared.lines[number], prepared.folded[number]
    _, s_end, c_start, c_end = clause
    known = line.date or prepared.running_dates[number]
    # A line stamped with a date that cannot be read in full ("03/05/2027") still gives the
    # year of a day and month written in it.
    stamp = _R["stamp-year"].match(line.raw) if not known else None
    dates = _attached_dates(folded, c_start, c_end, start, known, stamp.group(1) if stamp else "")
    fixed = _R["fixes-date"].search(lowered(folded), end) if dates else None
    if fixed and (after := dates_in(folded[fixed.end() :], known or dates[0][2])):
        # "flight to Lima 21 Apr … sorry, typo, it's the 22nd (22/04/2025)": the date after the
        # correction stands.
        shift = fixed.end() - c_start
        return [(a + shift, b + shift, iso) for a, b, iso in after[-1:]]
    if not dates and s_end > c_end:
        # "adopted Biscuit (terrier mix) on 14 Oct 2023": a date a few words on in the
        # sentence, with no other value between.
        rest = find_dates(folded[c_end:s_end])
        if rest and rest[0][0] <= 40 and not any(c_end <= h[0] < c_end + rest[0][0] for h in kept):
            return [(rest[0][0] + c_end - c_start, rest[0][1] + c_end - c_start, rest[0][2])]
    if not dates and c_end < len(folded):
        # "Adaora's graduation — 16.07.2027 (Fri)": a date that opens the next clause, right
        # after the event's name, is that event's date.
        label = _R["date-label"].match(folded, c_end)
        opening = find_dates(label.group(1)) if label else []
        return opening[:1] if opening and opening[0][0] == 0 else []
    return dates


@per_unit
@lru_cache(maxsize=16384)  # the same clause is read again for every probe mentioning it
def _attached_dates(
    folded: str, c_start: int, c_end: int, at: int, known: str = "", year: str = ""
) -> list[tuple[int, int, str]]:
    """Dates of the clause, only those of the mention's part where it has several dated parts.

    "the pre-op is on 2027-09-20 and the surgery on 2027-09-27": each has its own date.
    """
    dates = dates_in(folded[c_start:c_end], known, year, more="period")
    if len(dates) < 2:
        return dates
    part_start = c_start
    for match in _R["part-break"].finditer(folded, c_start, c_end):
        if match.start() >= at:
            return [d for d in dates if part_start - c_start <= d[0] < match.start() - c_start]
        part_start = match.end()
    return [d for d in dates if d[0] >= part_start - c_start]


def _moved(mention: Mention, prepared: _Prepared, follow: int, **changes: Any) -> Mention:
    """``mention`` as a later line (``follow``) tells it: dated by that line, and changed."""
    line = prepared.lines[follow]
    date = max(line.date or mention.order[0], mention.order[0])
    return replace(
        mention, line=line.index, order=(date, follow, 0), text=line.raw.strip(), **changes
    )


_TAKE_BACK = RULES.alternation("take-back", lambda phrase: phrase.next_line)
# How many lines on a take-back or a date's correction is read: as far as its row reaches.
_TAKE_BACK_LINES = RULES.rule("take-back").max_scope or 1
_FIX_LINES = RULES.rule("fixes-date").max_scope or 1


def _taken_back(
    prepared: _Prepared, mentions: Sequence[Mention], hits: dict[int, list[Hit]]
) -> Iterator[Mention]:
    """Retractions of an assertion by a next line within the row's reach that names no value."""
    for mention in [m for m in mentions if m.frame == "asserted"]:
        number = mention.order[1]
        for follow in range(number + 1, min(number + 1 + _TAKE_BACK_LINES, len(prepared.lines))):
            cue = _TAKE_BACK.search(prepared.lower[follow])
            named = hits.get(follow, [])
            # A line that names a value speaks for itself, unless it opens by taking back the
            # line before and names only that value again ("She took that back: the ferret
            # went to her cousin").
            if named and not (
                cue
                and all(h[2] == hits[number][0][2] for h in named)
                and cue.start() < min(h[0] for h in named)
            ):
                break
            if prepared.lines[follow].speaker in ("subject", "note") and cue:
                why = f"taken back on the next line ({cue.group(0)})"
                yield _moved(
                    mention, prepared, follow, frame="retracted", cue=why, rule="take-back"
                )
                break


def _redated(
    prepared: _Prepared, mentions: Sequence[Mention], hits: dict[int, list[Hit]], event: str
) -> Iterator[Mention]:
    """A date put right on a next line within the row's reach, or moved on a later dated line.

    "conference is Oct 5 / ignore that, checked the email: Oct 15 2027": the event keeps its
    mention and takes the corrected date, from a line that names no value.
    """
    events = [m for m in mentions if m.frame == "asserted" and m.value == event]
    moves = {n: m for n, m in (_moves(prepared.lower) if events else {}).items() if n not in hits}
    for mention in events:
        number = mention.order[1]
        near = set(range(number + 1, min(number + 1 + _FIX_LINES, len(prepared.lines))))
        for follow in sorted((near | set(moves)) - {number} - set(hits)):
            line, folded = prepared.lines[follow], prepared.folded[follow]
            fix = _R["fixes-date"].search(prepared.lower[follow]) if follow in near else None
            cue = fix or moves.get(follow)
            if not cue or (follow not in near and (line.date or "") <= mention.order[0]):
                continue  # a move is read only from a line dated after the mention
            known = line.date or mention.attached_date or ""
            dates = dates_in(folded, known, more="ordinal" if follow in near else "")
            dates = [d for d in dates if d[2] != mention.attached_date]
            if follow not in near:  # a move names its new date right after it: "moved to 19 Mar"
                end = cue.end()
                dates = [
                    d
                    for d in dates
                    if 0 <= d[0] - end <= 20
                    and _R["gap-to-date"].fullmatch(folded[end : d[0]].lower())
                ]
            if dates:
                why = f"date put right on a later line ({cue.group(0)})"
                rule = "fixes-date" if cue is fix else "moves-date"
                yield _moved(
                    mention, prepared, follow, cue=why, rule=rule, attached_date=dates[0][2]
                )
                break


@per_unit
@lru_cache(maxsize=32)
def _moves(lower: tuple[str, ...]) -> dict[int, re.Match[str]]:
    """The lines of a context that move a date, found once for every probe that reads it."""
    return {n: m for n, line in enumerate(lower) if (m := _R["moves-date"].search(line))}


def _replied(prepared: _Prepared, mention: Mention, hits: dict[int, list[Hit]]) -> Mention:
    """An assistant's line about the subject, as the subject's reply on the next line takes it.

    "assistant: So you're in Leeds now? / user: yep" states Leeds, dated by the reply;
    "… / user: no, Cardiff" denies it. A restatement the reply corrects ("assistant: Since
    you're in Oslo, … / user: lol I'm in Bergen actually") was never the subject's, unless the
    reply names the same value again: then it speaks for itself.
    """
    restated = mention.rule in ("assistant-restates", "assistant-acknowledges")
    number = mention.order[1]
    if not (restated or mention.frame == "question") or number + 1 >= len(prepared.lines):
        return mention  # most mentions: nothing the next line can change
    if (reply := prepared.lines[number + 1]).speaker != "subject":
        return mention
    asked, text = prepared.lower[number], prepared.lower[number + 1]
    if restated:
        at = mention.order[2]
        owner = next((h[2] for h in hits.get(number, []) if h[0] <= at < h[1] + 1), None)
        if owner is not None and any(h[2] == owner for h in hits.get(number + 1, [])):
            return mention
    elif prepared.lines[number].speaker != "assistant" or not (
        _R["you-word"].search(asked) or _R["ack"].search(asked)
    ):
        return mention
    elif _R["commute-to"].search(asked, max(0, mention.order[2] - 40), mention.order[2]):
        return mention  # "commuting down to Accra?": confirmed as a trip, not a home
    # The rows that read the reply, each with the frame it gives the mention.
    rows = _CORRECTED if restated else _ANSWERED
    row = next((row for row in rows if RULES.pattern(row.id).search(text)), None)
    if row is None:
        return mention
    changed = replace(mention, frame=row.frame or mention.frame, cue=row.cue or "", rule=row.id)
    if changed.frame != "asserted":
        return changed
    # A confirmation is dated by the reply.
    order = (reply.date or mention.order[0], number + 1, 0)
    return replace(changed, order=order, attached_date=reply.own_date or mention.attached_date)


_CORRECTED, _ANSWERED = [RULES.rule("corrects")], [RULES.rule(n) for n in ("yes-reply", "no-reply")]


def _event_line(probe: ReaderProbe, run: Sequence[Mention]) -> Mention | None:
    """The assertion that tells the event asked about.

    Of the current run's lines, the first of those naming the most of the event's words
    ("picked up her new bike" over "ordered the bike" for "when did she pick up the bike").
    """
    if len(run) < 2:
        return run[0] if run else None
    fixed = [m for m in run if m.rule in ("fixes-date", "moves-date")]
    if fixed:
        return fixed[-1]
    # An appointment is where the latest word about it puts it: "dentist on the 14th" then,
    # later, "dentist rang: moved to the 28th".
    dated = [m for m in run if m.attached_date is not None]
    if dated and _R["asks-ahead"].search(probe.question):
        return dated[-1]
    phrases = next((c.phrases for c in probe.candidates if c.value == probe.event_value), ())
    patterns = [re.compile(r"\b" + re.escape(normalise(p))) for p in phrases if normalise(p)]

    def rank(mention: Mention) -> tuple[int, bool, bool]:
        # Of lines naming the event alike, one that says when it happened ("ran the marathon
        # yesterday") answers "when" over one that only mentions it ("training for the
        # marathon"): its attached date is its own, not its line's.
        named = sum(1 for pattern in patterns if pattern.search(normalise(mention.text)))
        own = mention.attached_date is not None
        return named, own, own and mention.attached_date != mention.order[0]

    return max(run, key=rank)  # the first of the best


# What says a statement was never meant (a joke, a slip): the same rule as taking back.
_UNSAID = RULES.alternation("take-back", lambda phrase: phrase.unsaid)


def _said(mentions: Sequence[Mention]) -> list[Mention]:
    """The decoy's mentions that say it: assertions, and statements since retracted.

    A statement taken back as a joke or a slip was never said ("WE'RE ENGAGED / jk april
    fools"): it and the assertion it takes back are left out.
    """
    said: list[Mention] = []
    for mention in (m for m in mentions if m.role == "decoy"):
        if mention.frame == "retracted" and _UNSAID.search(mention.cue):
            said = [m for m in said if m.value != mention.value]
        elif mention.frame in ("asserted", "retracted"):
            said.append(mention)
    return said


def _runs(probe: ReaderProbe, mentions: Sequence[Mention]) -> dict[str, list[Mention]]:
    """Each value presented as current, with its current run of assertions (the last made it so).

    A temporal probe asks the date of one event: another candidate date replaces it only on a
    line that names the event ("registered on 4 April; the race itself is on 9 April").
    """
    runs: dict[str, list[Mention]] = {}
    ordered = mentions
    if probe.kind == "temporal":
        event_lines = {m.order[1] for m in mentions if m.value == probe.event_value}
        ordered = [m for m in mentions if m.value == probe.event_value or m.order[1] in event_lines]
    for mention in ordered:
        if mention.frame == "asserted":
            if probe.exclusive:  # one value at a time: asserting one replaces the others
                runs = {mention.value: runs.get(mention.value, [])}
            runs.setdefault(mention.value, []).append(mention)
        elif mention.frame in ("retracted", "negated"):
            runs.pop(mention.value, None)
    return runs


def _conclude(probe: ReaderProbe, mentions: Sequence[Mention], why: str) -> Reading:
    runs = _runs(probe, mentions)
    current = {value: run[-1] for value, run in runs.items()}
    values = tuple(current)
    deprecated = any(probe.role_of(v) == "deprecated" for v in values)
    counted = [m for m in mentions if m.frame in ("asserted", "retracted", "negated")]
    if not why:
        parts = [f"{m.value!r} {m.frame} ({m.cue}; rule {m.rule})" for m in counted[-3:]]
        ignored = sorted({m.frame for m in mentions} - {"asserted", "retracted", "negated"})
        if ignored:
            count = len(mentions) - len(counted)
            parts.append(f"{count} mention(s) not counted: {', '.join(ignored)}")
        why = "; ".join(parts) or "no mention counted"
    answer, decided, support, option = _answer(probe, mentions, current, runs)
    polarity: Literal["yes", "no"] | None = None
    if probe.kind == "yes_no":
        polarity = "yes" if answer == "yes" else "no"
    date = answer if probe.kind == "temporal" else None
    lines = (support.text,) if support else ()
    rationale = f"{decided}; {why}"
    return Reading(
        answer, polarity, values, deprecated, option, date, lines, rationale, (*mentions,)
    )


def _answer(
    probe: ReaderProbe,
    mentions: Sequence[Mention],
    current: dict[str, Mention],
    runs: dict[str, list[Mention]],
) -> tuple[str | None, str, Mention | None, int | None]:
    """The answer of a probe of its kind, what decided it, its support and the chosen option."""
    if probe.kind == "yes_no":
        # "Has X ever said Y?": a statement that was true once (now retracted) was still said;
        # a negation ("I'm not Y") was not.
        said = _said(mentions)
        if not said:
            return "no", "decoy never stated", None, None
        return "yes", f"decoy stated: {said[-1].cue} (rule {said[-1].rule})", said[-1], None
    if probe.kind == "temporal":
        start = _event_line(probe, runs.get(probe.event_value or "", []))
        if start is None:
            return None, "change not stated", None, None
        day = start.attached_date
        decided = f"change stated on {day}" if day else "change stated with no date attached"
        return day, decided, start, None
    if probe.kind == "action":
        options = (current[v] for v in current if probe.role_of(v) == "option")
        chosen = max(options, key=lambda m: m.order, default=None)
        option = probe.default_option
        if chosen is not None:
            option = next(c.option for c in probe.candidates if c.value == chosen.value)
        text = probe.options[option].text if option is not None and probe.options else None
        decided = "default action" if chosen is None else f"supported: {chosen.value!r}"
        return text, decided, chosen, option
    latest = max(current.values(), key=lambda m: m.order, default=None)
    answer = latest.value if latest is not None else None
    if latest is not None and not probe.exclusive:
        # Several values hold at once: the asked-about one, when it is among them.
        answer = next((v for v in current if probe.role_of(v) == "current"), latest.value)
    if not answer:
        return answer, "the memory does not say", None, None
    return answer, f"current: {answer!r}", current[answer], None
