"""The scope engine: a mention of a candidate value, the texts around it, the rows that frame it.

A mention is read inside its line, lower-cased, split into sentences and clauses. Its *sides* are
texts around the value: the clause ``before`` and ``after`` it, the ``window`` (before it, from
the previous value or the last agent), the ``sentence``, the ``tail`` up to the next ``;`` and so
on. Its *states* say what kind of mention it is (the assistant's words, a one-word name, a value
whose own wording negates). Both are worked out when a row first reads them.

The rows of the rules file are tried in its ``order``: a row fires when its states hold and its
pattern is found on its side, the cue nearest the value within ``max_scope`` words and not parted
from it by ``terminated_by``; the first row that fires names the frame, the cue and its id. The
``revise`` rows then read the decided frame (a line under a "Goals:" head, a past tense that
tells the event asked about) and may change it. Every frame names the row that decided it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from drift_pipeline._bounded import per_unit
from drift_pipeline.textmatch import normalise, runs_of

from ._rules import RULES, FrameName, Rule

__all__ = [
    "Decision",
    "MentionKey",
    "ProbeFacts",
    "Scope",
    "asked_relations",
    "clause_at",
    "frame_of",
    "lowered",
    "other_name_at",
    "split_clauses",
]

_R = RULES.patterns
_WORDS = RULES.word_sets
Decision = tuple[FrameName, str, str]
"""A frame, the cue words that decided it and the id of the row that did."""


@per_unit
@lru_cache(maxsize=16384)  # a line is read again for every probe that mentions a value on it
def split_clauses(text: str) -> tuple[tuple[int, int, int, int], ...]:
    """``(sentence_start, sentence_end, clause_start, clause_end)`` for each clause of ``text``."""
    spans: list[tuple[int, int, int, int]] = []
    start = 0
    for end in [m.end() for m in _R["sentence-end"].finditer(text)] + [len(text)]:
        if end > start:
            clause = start
            for match in _R["clause-break"].finditer(text, start, end):
                spans.append((start, end, clause, match.start()))
                clause = match.end()
            spans.append((start, end, clause, end))
            start = end
    return tuple(spans)


def clause_at(
    spans: tuple[tuple[int, int, int, int], ...], start: int, end: int
) -> tuple[int, tuple[int, int, int, int]]:
    """The number and bounds of the clause holding the mention ``start``-``end`` (to its end)."""
    number = next(
        (i for i, c in enumerate(spans) if c[2] <= start < max(c[3], c[2] + 1)), len(spans) - 1
    )
    s_start, s_end, c_start, c_end = spans[number]
    return number, (s_start, s_end, c_start, max(c_end, end))


@per_unit
@lru_cache(maxsize=16384)
def lowered(folded: str) -> str:
    """The text rows read: lower case (where that keeps its length), hedging tags blanked."""
    lower = folded.lower() if len(folded.lower()) == len(folded) else folded
    return _R["hedge"].sub(lambda m: " " * len(m.group(0)), lower)


class MentionKey(NamedTuple):
    """What the frame the ``order`` decides depends on: the key it is kept under.

    Probes that share a memory read the same mentions, so this holds no more of the probe than
    the value and what the question asks about.
    """

    folded: str  # the line as written, whitespace collapsed
    start: int
    end: int
    window_start: int  # where the words that lead to the value start (after the previous value)
    next_start: int  # where the next value's mention starts (the line's end if none)
    in_aside: bool  # in brackets opened after another value's mention
    speaker: str
    head: str
    phrase: str  # the candidate phrase matched, as the probe spells it
    value: str
    names: frozenset[str]  # the subject's names, normalised
    other_name_at: int  # where, before the value, another person named by name acts (−1: none)
    asked: frozenset[str]  # the relation words the question asks about
    asked_place: bool  # the question asks where the subject lives


class ProbeFacts(NamedTuple):
    """What the ``revise`` rows read of the line and the probe beyond the mention."""

    planned: bool  # the line is under a "Goals:" or "Plans:" head or list
    role: str
    kind: str
    topic: tuple[str, ...]
    question: str


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    last = None
    for match in pattern.finditer(text):
        last = match
    return last


def _agent_token(text: str) -> str:
    """The first- or second-person word ``text`` starts with (empty when none)."""
    match = _R["token"].match(text)
    if match and (_R["first"].fullmatch(match.group(0)) or _R["you"].fullmatch(match.group(0))):
        return match.group(0)
    return ""


@lru_cache(maxsize=1024)
def asked_relations(question: str) -> frozenset[str]:
    """Relation words the question asks about, with their everyday synonyms."""
    words = {w.removesuffix("'s") for w in runs_of(question.lower().replace("’", "'"))}
    found = set(words & _WORDS["relations"])
    for kind in ("partner-words", "pet-words", "boss-words"):
        if words & _WORDS[kind]:
            found |= _WORDS[kind]
    return frozenset(found)


class Scope:
    """One mention on its line: each side and state a row reads, worked out when first read."""

    cue = ""  # the cue decided so far, which revise rows read

    def __init__(self, key: MentionKey, facts: ProbeFacts | None = None) -> None:
        self.__dict__.update(key._asdict(), **(facts._asdict() if facts else {}))
        self.lower = lower = lowered(key.folded)
        spans = split_clauses(lower)
        self.s_start, self.s_end, self.c_start, self.c_end = clause_at(spans, key.start, key.end)[1]
        self.sentences = sorted({(s, e) for s, e, _, _ in spans})
        self.raw = key.folded[key.start : key.end]

    def __getattr__(self, name: str) -> Any:
        compute = _SIDES.get(name) or _STATES.get(name)
        if compute is None:
            raise AttributeError(name)
        value = self.__dict__[name] = compute(self)
        return value

    def agents(self) -> tuple[int, int, int]:
        """Where the last first-, third- and second-person agents stand before the value (−1)."""
        left, third = self.before, self.other_name_at
        found = list(_R["third"].finditer(left)) if left else []
        masked = left
        for match in found:
            masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end() :]
            if self.asked & set(_R["word"].findall(match.group(0))):
                continue  # the asked-about relation is the slot ("my gf Alex")
            if not _R["describes"].search(left[: match.start()]):  # "is a teacher who …"
                third = max(third, match.start())
        first, you = _last(_R["first"], masked), _last(_R["you"], masked)
        if self.speaker in ("subject", "other") and not self.narrated:
            pronoun = _last(_R["pronoun-third"], masked)
            third = max(third, pronoun.start() if pronoun else -1)
        return first.start() if first else -1, third, you.start() if you else -1


Reads = Callable[[Scope], Any]
_SIDES: dict[str, Reads] = {
    "before": lambda s: s.lower[s.c_start : s.start],
    "right": lambda s: s.lower[s.end : s.c_end],
    # Most mentions close their clause: rows that read the words after the value skip those.
    "after": lambda s: s.right if _R["alnum"].search(s.right) else "",
    "until_next": lambda s: s.lower[s.end : min(s.s_end, s.next_start)],
    # Up to the next value only: in "Leeds, York wasn't for us" the ending is York's.
    "own_after": lambda s: s.after[: len(s.until_next)] if s.until_next else s.after,
    "later": lambda s: s.until_next if len(s.until_next) > 3 else "",
    "tail": lambda s: s.until_next.split(";")[0],
    "either": lambda s: s.before + " " + s.right,
    "clause": lambda s: s.before + s.raw.lower() + s.right,
    "mention": lambda s: s.before + s.raw.lower() + s.tail,
    "sentence": lambda s: s.lower[s.s_start : s.s_end],
    "sentence_before": lambda s: s.lower[s.s_start : s.start],
    "sentence_after": lambda s: s.lower[s.end : s.s_end],
    "sentence_to_value": lambda s: s.sentence_before + s.raw.lower(),
    "next_sentence": lambda s: next((s.lower[a:b] for a, b in s.sentences if a >= s.s_end), ""),
    "after_agent": lambda s: s.before[s.agent :] if s.agent >= 0 else s.before,
    "window": lambda s: min(s.after_agent, s.lower[s.window_start : s.start], key=len),
    "stretch": lambda s: _R["stretch-break"].split(s.after_agent)[-1],
    "comma_left": lambda s: s.before[s.before.rfind(",") + 1 :],
    "comma_part": lambda s: s.comma_left + " " + s.right.split(",")[0],
    "line_before": lambda s: s.lower[max(0, s.start - 40) : s.start],
    "value_text": lambda s: normalise(s.value),
    # Parts of the states below.
    "agent_at": lambda s: s.agents(),
    "agent": lambda s: max(*s.agent_at[:2], s.agent_at[2] if s.assistant or s.note else -1),
    "sentence_raw": lambda s: s.folded[s.s_start : s.start],
}
_STATES: dict[str, Reads] = {
    "assistant": lambda s: s.speaker == "assistant",
    "note": lambda s: s.speaker == "note",
    "other_speaker": lambda s: s.speaker == "other",
    "subject_speaks": lambda s: s.speaker in ("subject", "note"),
    "narrated": lambda s: bool(s.head) and s.head in s.names,
    "planned_line": lambda s: s.planned,
    "clause_opens": lambda s: not _R["filler"].sub("", s.comma_left),
    "open_quote": lambda s: s.sentence_before.count('"') % 2 == 1,
    "one_word": lambda s: " " not in s.phrase.strip(),
    "weak": lambda s: s.one_word and " " in s.value.strip(),
    "has_agent": lambda s: s.agent >= 0,
    "no_third": lambda s: s.agent_at[1] < 0,
    "first_agent": lambda s: s.agent_at[0] >= 0,
    "you_last": lambda s: s.agent_at[2] >= max(0, *s.agent_at[:2]),
    "third_last": lambda s: s.agent_at[1] > s.agent_at[0],
    "addressed": lambda s: bool(s.names & runs_of(s.sentence)),
    # How a one-word value is written, for telling a name from a common word.
    "name_like": lambda s: bool(s.phrase) and s.one_word and not any(map(str.isdigit, s.phrase)),
    "given_capitalised": lambda s: s.phrase[:1].isupper(),
    "capitalised": lambda s: s.raw[:1].isupper(),
    "raw_lower": lambda s: s.raw.islower(),
    "raw_upper": lambda s: s.raw.isupper(),
    "plural_lower": lambda s: s.raw_lower and len(s.raw) == len(s.phrase) + 1 and s.raw[-1] == "s",
    "cased_sentence": lambda s: any(map(str.isupper, s.sentence_raw)),
    "common_name": lambda s: s.phrase.lower() in _WORDS["common-word-names"],
    # What the question asks, and the opinion slot's topic.
    "temporal": lambda s: s.kind == "temporal",
    "current_role": lambda s: s.role == "current",
    "topic_missing": lambda s: bool(s.topic) and not set(s.topic) <= runs_of(s.topic_text),
    # The topic may be named in the sentence or the one before ("I changed my mind about
    # remote work. I'm undecided.").
    "topic_text": lambda s: s.lower[
        max((a for a, b in s.sentences if b <= s.s_start), default=s.s_start) : s.s_end
    ],
}


_SIDE_NAMES = {*_SIDES, *MentionKey._fields, *ProbeFacts._fields, "cue"}
_STATE_NAMES = {*_STATES, *MentionKey._fields, *ProbeFacts._fields}
# What only a revise row may read: the probe and the frame decided so far. The order reads the
# mention and its line alone, so that its frames are kept per mention across probes.
_PROBE_READS = {*ProbeFacts._fields, "cue", "temporal", "current_role", "topic_missing"}
_PROBE_READS |= {"topic_text", "planned_line"}
Test = Callable[[Scope], bool]
Step = Callable[[Scope], Decision | None]
_LEFT_SIDES = {"before", "sentence_before", "window", "stretch", "after_agent", "line_before"}


def _readable(name: str, names: set[str], rule: Rule, revise: bool) -> str:
    """``name`` as an attribute of a mention, when a row of its kind may read it."""
    if name not in names or (name in _PROBE_READS and not revise):
        steps = "revise" if revise else "order"
        raise ValueError(f"{RULES.source}: rule {rule.id!r}: {name!r}: not read by {steps} rows")
    return name


def _test(item: str | list[str], rule: Rule, revise: bool) -> Test:
    """One of a row's conditions (the forms :data:`._rules.Condition` names) as a test."""
    if isinstance(item, list):
        tests = [_test(one, rule, revise) for one in item]
        return lambda s: any(t(s) for t in tests)
    if item.startswith("!"):
        test = _test(item[1:], rule, revise)
        return lambda s: not test(s)
    if item in RULES.spec.states:
        tests = [_test(one, rule, revise) for one in RULES.spec.states[item]]
        return lambda s: all(t(s) for t in tests)
    name, _, side = item.partition("@")
    if side:
        pattern, side = RULES.pattern(name), _readable(side, _SIDE_NAMES, rule, revise)
        return lambda s: pattern.search(getattr(s, side)) is not None
    attribute = _readable(name.replace("-", "_"), _STATE_NAMES, rule, revise)
    return lambda s: getattr(s, attribute)


def _step(rule: Rule, revise: bool = False) -> Step:
    """How one row decides: its states, then its pattern on its side within its scope."""
    sides = [rule.side] if isinstance(rule.side, str) else list(rule.side or ())
    if rule.terminated_by == "the next value":
        sides = ["own_after" if side == "after" else side for side in sides]
    if rule.frame is None or any(side not in _SIDE_NAMES for side in sides):
        raise ValueError(f"{RULES.source}: rule {rule.id!r}: side: not a side a rule can read")
    sides = [_readable(side, _SIDE_NAMES, rule, revise) for side in sides]
    tests = [_test(item, rule, revise) for item in rule.when]
    for item in rule.unless:  # unless any of them holds: each does not
        tests += [
            _test(f"!{one}", rule, revise) for one in ([item] if isinstance(item, str) else item)
        ]
    if rule.pattern is None:
        decision: Decision = (rule.frame, rule.cue or "", rule.id)
        return lambda s: decision if all(t(s) for t in tests) else None
    frame, cue, strip, rule_id = rule.frame, rule.cue, rule.strip, rule.id
    pattern = RULES.pattern(rule.id)
    scoped = rule.max_scope is not None or rule.terminated_by not in (None, "the next value")
    stop = RULES.pattern(rule.terminated_by) if scoped and rule.terminated_by else None
    limit, left, pairs = rule.max_scope, sides[0] in _LEFT_SIDES, rule.cancel_pairs_in

    def step(s: Scope) -> Decision | None:
        if not all(t(s) for t in tests):  # the states first: most rows stop there, sides unread
            return None
        for side in sides:
            text = getattr(s, side)
            if not (text := text[len(_agent_token(text)) :] if rule.skip_agent else text):
                continue
            # The cue nearest the value governs it, when nothing that ends its scope parts them
            # and the gap is within its reach.
            match = _last(pattern, text) if scoped and left else pattern.search(text)
            if match is None:
                continue
            gap = (text[match.end() :] if left else text[: match.start()]) if scoped else ""
            if (stop and stop.search(gap)) or (limit is not None and len(gap.split()) > limit):
                continue
            if rule.skip_asked and s.asked & set(_R["word"].findall(match.group(0))):
                return None  # the relation the question asks about names the value
            if pairs and len(pattern.findall(getattr(s, pairs))) % 2 == 0:
                return None  # "it's not like I don't still play the oboe": two cancel out
            found = match.group(0)
            found = found.strip() if strip is True else found.strip(strip or "")
            return frame, cue.format(found) if cue else found, rule_id
        return None

    return step


_STEPS = tuple(_step(RULES.rule(name)) for name in RULES.spec.order)
_REVISE = tuple((RULES.rule(n).revises, _step(RULES.rule(n), True)) for n in RULES.spec.revise)


@per_unit
@lru_cache(maxsize=8192)  # probes that share a memory read the same mentions
def _ordered(key: MentionKey) -> Decision:
    scope = Scope(key)
    for step in _STEPS:
        if decided := step(scope):
            return decided
    raise ValueError(f"{RULES.source}: order: no row decided (the last must always fire)")


@per_unit
@lru_cache(maxsize=8192)
def frame_of(key: MentionKey, facts: ProbeFacts) -> Decision:
    """The frame of one mention, the cue that decided it and the id of the row that did.

    The rows of the rules file's ``order`` are tried in turn and the first that fires names the
    frame; then each ``revise`` row that reads that frame may change it.
    """
    decided, scope = _ordered(key), None
    for frames, step in _REVISE:
        if not frames or decided[0] in frames:
            scope = scope or Scope(key, facts)
            scope.cue = decided[1]
            decided = step(scope) or decided
    return decided


def other_name_at(cased_left: str, names: frozenset[str], values: frozenset[str]) -> int:
    """Where, in the clause before a value, another person named by name acts (−1: nowhere).

    ``cased_left`` is that clause as written; the subject's ``names`` and the words of the
    candidate ``values`` name no other person.
    """
    at = -1
    for match in _R["other-name"].finditer(cased_left):
        name = match.group(1).lower()
        if not (
            name in names
            or name in _WORDS["not-names"]
            or name.endswith("ly")
            or name in _WORDS["relations"]  # "Wife's name": the relation rules decide
            or name in values
            or _ends_full_name(cased_left[: match.end(1)].lower(), names)
        ):
            at = match.start()
    return at


def _ends_full_name(text: str, names: frozenset[str]) -> bool:
    """Whether ``text`` ends with a name of several words the subject goes by ("Greta Ivers")."""
    return any(
        " " in name
        and text.endswith(name)
        and (len(text) == len(name) or not text[-len(name) - 1].isalnum())
        for name in names
    )
