"""Cue rules that decide whether a mention is the subject's sincere, current assertion.

Each rule looks at the clause holding the mention (lower-cased, whitespace collapsed), split
around the mention into the text on its left and on its right. A *window* is the left text
after the previous candidate mention in the clause, so that in "I left Kestrel for Lumen" the
verb "left" governs Kestrel and not Lumen. Rules are tried in a fixed order and the first that
fires names the frame:

- ``retracted``: a tag or marker says the value no longer holds (``(outdated)``,
  ``no longer true since …``, a closed validity interval), or a retraction verb governs it
  ("used to", "left", "last day at", "moved from … to"), or a past state ("I was vegan").
- ``negated``: a negation governs it ("not vegetarian", "never lived in").
- ``sarcasm``, ``question``, ``hypothetical`` (conditionals, modals, wishes, plans),
  ``visit`` (a trip is not a residence), ``third_party`` (someone else's fact),
  ``not_about_subject`` (the assistant's own words, another speaker), ``generic_word`` (a
  short alias used as a common word: "kestrel nesting boxes").
- otherwise ``asserted``.

A "(may be outdated)"-style hedge changes nothing: the value is still what the memory states,
as a careful reader would take it, until something later replaces it.

The rules are rows of the rules file (``rules.yaml``, read by :mod:`._rules`), and so is the
order in which they are tried. A simple row is applied by one interpreter here: its pattern,
searched on its side of the value (the cue nearest the value, when the row has a scope or a
terminator), with the states it needs or excludes, names the frame and the cue; a row without a
pattern fires on its states alone ("another speaker's line"). A compound
case, which combines rows in a way a row cannot say, is a named function here, registered
under the id that the order lists. Every frame returned names the rule that decided it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Generic, TypeVar

from ._rules import RULES, FrameName, Rule

__all__ = ["Frame", "MentionContext", "frame_of", "split_clauses", "strip_hedges"]

Frame = FrameName
"""What a rule can signal ("other_topic" only a compound case decides)."""

_R = RULES.patterns
_HEDGE, _CLAUSE_BREAK, _SENTENCE_END = _R["hedge"], _R["clause-break"], _R["sentence-end"]


def strip_hedges(text: str) -> str:
    """``text`` with hedging tags ("(may be outdated)") blanked out, same length."""
    return _HEDGE.sub(lambda m: " " * len(m.group(0)), text)


def split_clauses(text: str) -> list[tuple[int, int, int, int]]:
    """``(sentence_start, sentence_end, clause_start, clause_end)`` for each clause of ``text``."""
    spans: list[tuple[int, int, int, int]] = []
    start = 0
    sentence_bounds = [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    for end in sentence_bounds:
        if end <= start:
            continue
        clause_start = start
        for match in _CLAUSE_BREAK.finditer(text, start, end):
            spans.append((start, end, clause_start, match.start()))
            clause_start = match.end()
        spans.append((start, end, clause_start, end))
        start = end
    return spans


@dataclass(frozen=True)
class MentionContext:
    """One mention inside its clause.

    Attributes:
        left: Clause text before the mention (lower case).
        right: Clause text after it.
        window: ``left`` after the previous candidate mention in the clause.
        sentence_left: Sentence text before the mention.
        sentence: The whole sentence.
        next_sentence: The sentence after it, if any.
        tail: Text after the mention up to the next ``;`` or the sentence end (where a tag
            such as "(outdated)" that belongs to the mention sits).
        speaker: Who says the line (``subject``, ``assistant``, ``other``, ``note``).
        phrase_raw: The mention as written (original case).
        phrase_given: The candidate phrase it matched (as the probe spells it).
        raw_sentence_left: ``sentence_left`` in its original case.
        weak: The phrase is one word of a longer value ("Kestrel" for "Kestrel Aerospace").
        negative_value: The value's own wording negates ("does not drink alcohol").
        line_has_ack: The (assistant) line acknowledges something ("noted", "got it").
        addressed: The sentence names the subject (an assistant talking to them).
        sentence_start: The mention opens its sentence.
        other_name_at: Where, in ``left``, another person named by name acts (−1: nowhere).
        narrated: The line is a note headed by the subject's name ("Gus: renewed his lease"),
            where he/she is the subject.
        in_aside: The mention sits in brackets after another value's mention on its line.
        line_cased: The line has capitals anywhere (so a lower-case name is a common word).
        labelled: The line's content follows a label ("Home town: Reading").
        until_next: The sentence after the mention up to the next value's mention.
        asked: Relation words the question asks about ("partner", "gf", …): a relation that
            is the asked-about slot names the value, not someone else.
    """

    left: str
    right: str
    window: str
    sentence_left: str
    sentence: str
    next_sentence: str
    tail: str
    speaker: str
    phrase_raw: str
    phrase_given: str
    raw_sentence_left: str
    weak: bool
    negative_value: bool
    line_has_ack: bool
    other_name_at: int
    addressed: bool = False
    sentence_start: bool = False
    narrated: bool = False
    in_aside: bool = False
    line_cased: bool = True
    asked: frozenset[str] = frozenset()
    asked_place: bool = False
    labelled: bool = False
    until_next: str = ""


Decision = tuple[Frame, str, str]
"""A frame, the cue words that decided it and the id of the rule (or compound case) that did."""

_WORDS = RULES.word_sets


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    last = None
    for match in pattern.finditer(text):
        last = match
    return last


def _agent_token(text: str) -> str:
    """The agent word ``text`` starts with (empty when it does not start with one)."""
    match = _R["token"].match(text)
    if match and (_R["first"].fullmatch(match.group(0)) or _R["you"].fullmatch(match.group(0))):
        return match.group(0)
    return ""


def _agents(m: MentionContext) -> tuple[int, int, int]:
    """Positions of the last first-person, third-party and second-person agent in ``left``."""
    left, third = m.left, m.other_name_at
    found = list(_R["third"].finditer(left)) if left else []
    for match in found:
        if m.asked and m.asked & frozenset(_R["word"].findall(match.group(0))):
            continue  # the asked-about relation is the slot ("my gf Alex")
        if _R["describes"].search(left, 0, match.start()):
            continue  # "Rebekah is a teacher who lives in …": what the subject is
        third = max(third, match.start())
    masked = left
    for match in found:  # blank the third-party phrases so their words are no agents
        masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end() :]
    last_first, last_you = _last(_R["first"], masked), _last(_R["you"], masked)
    if m.speaker in ("subject", "other") and not m.narrated:
        pronoun = _last(_R["pronoun-third"], masked)
        third = max(third, pronoun.start() if pronoun else -1)
    return (
        last_first.start() if last_first else -1,
        third,
        last_you.start() if last_you else -1,
    )


_T = TypeVar("_T")


class _lazy(Generic[_T]):
    """A value worked out on first read and kept on the instance.

    Like ``functools.cached_property`` without its lock (one thread reads one mention).
    """

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self.compute, self.name = compute, compute.__name__

    def __get__(self, view: Any, owner: type | None = None) -> _T:
        value = view.__dict__[self.name] = self.compute(view)
        return value


class _View:
    """One mention and the texts around it that rules read, each worked out when first read."""

    def __init__(self, mention: MentionContext) -> None:
        self.m = mention

    @_lazy
    def after(self) -> str:
        # Most mentions close their clause: rules that read the words after the value are
        # skipped when there are none (the reader runs on every probe of every cell).
        return self.m.right if _R["alnum"].search(self.m.right) else ""

    @_lazy
    def own_after(self) -> str:
        # Up to the next value only: in "Leeds, York wasn't for us" the ending is York's.
        return self.after[: len(self.m.until_next)] if self.m.until_next else self.after

    @_lazy
    def later(self) -> str:
        # "… an iguana, then clarified that was a joke": the rest of the sentence, before any
        # other value ("lives in Abuja (I typed Lagos by mistake)" is about Lagos).
        return self.m.until_next if len(self.m.until_next) > 3 else ""

    @_lazy
    def either(self) -> str:
        return self.m.left + " " + self.m.right

    @_lazy
    def mention(self) -> str:
        return self.m.left + self.m.phrase_raw.lower() + self.m.tail

    @_lazy
    def agents(self) -> tuple[int, int, int]:
        return _agents(self.m)

    @_lazy
    def agent(self) -> int:
        """Where the last agent before the value stands (−1: none)."""
        first, third, you = self.agents
        return max(first, third, you if self.m.speaker in ("assistant", "note") else -1)

    @_lazy
    def after_agent(self) -> str:
        return self.m.left[self.agent :] if self.agent >= 0 else self.m.left

    @_lazy
    def window(self) -> str:
        window = self.m.window
        return window if len(window) < len(self.after_agent) else self.after_agent

    @_lazy
    def instruction(self) -> bool:
        m = self.m
        if _R["instruction"].search(m.left) or _R["request"].search(
            m.sentence_left + m.phrase_raw.lower()
        ):
            return True
        # "Can you … from here on?" asks for a habit.
        return bool(_R["standing"].search(m.sentence) and _R["can-you"].match(m.sentence))

    @_lazy
    def clause_opens(self) -> bool:
        """The value opens its stretch of the clause (nothing but filler since the comma)."""
        return not _R["filler"].sub("", self.m.left[self.m.left.rfind(",") + 1 :])


# What a row's side names: the text the interpreter searches.
_SIDES: dict[str, Callable[[_View], str]] = {
    side: attrgetter(attribute)
    for side, attribute in {
        "before": "m.left",
        "after": "after",
        "either": "either",
        "sentence": "m.sentence",
        "sentence_before": "m.sentence_left",
        "tail": "m.tail",
        "next_sentence": "m.next_sentence",
        "mention": "mention",
        "window": "window",
        "later": "later",
    }.items()
}
_NEXT_VALUE = "the next value"

# What a row's ``when`` and ``unless`` name: a state of the mention that the row needs, or in
# which it does not apply.
_CONDITIONS: dict[str, Callable[[_View], bool]] = {
    "negative-value": lambda v: v.m.negative_value,
    "instruction": lambda v: v.instruction,
    "presupposed": lambda v: bool(_R["presupposed"].search(v.m.left)),
    # "lived in Nice for 4 yrs now": a state that goes on is current. Only up to the next
    # value: "worked at HSBC before joining Monzo, where he still works".
    "still-now": lambda v: bool(_R["still-now"].search(v.after[: len(v.m.until_next)])),
    "had-before": lambda v: bool(_R["had"].search(v.m.sentence_left)),
    "today-after": lambda v: bool(_R["today"].search(v.after)),
    "clause-opens": lambda v: v.clause_opens,
    "asked-place": lambda v: v.m.asked_place,
    "capitalised": lambda v: v.m.phrase_raw[:1].isupper(),
    "been-in-clause": lambda v: bool(_R["been"].search(v.either)),
    "assistant": lambda v: v.m.speaker == "assistant",
    "your-own": lambda v: bool(_R["your-own"].search(v.m.sentence_left)),
    "open-quote": lambda v: v.m.sentence_left.count('"') % 2 == 1,
    "other-speaker": lambda v: v.m.speaker == "other",
    "in-aside": lambda v: v.m.in_aside,
    "planned-before": lambda v: bool(_R["planned"].search(v.after_agent)),
    "time-ahead-after": lambda v: bool(_R["future-time"].search(v.after)),
    "moved-to-right": lambda v: bool(_R["to-right"].search(v.after)),
}
# States that only hold with words after the value: a row that needs one is skipped for a
# mention that closes its clause.
_AFTER_STATES = {"time-ahead-after", "moved-to-right"}


def _row(rule: Rule) -> _Step:
    """The step that applies one row: its pattern on its side, within its scope.

    A row without a pattern fires when its states hold, and names its cue.
    """
    sides = [rule.side] if isinstance(rule.side, str) else list(rule.side or ())
    if rule.frame is None or not sides or any(side not in _SIDES for side in sides):
        raise ValueError(f"{RULES.source}: rule {rule.id!r}: side: not a side a rule can read")
    readers: list[Callable[[_View], str]] = [_SIDES[side] for side in sides]
    if rule.terminated_by == _NEXT_VALUE and sides == ["after"]:
        readers = [attrgetter("own_after")]
    unless = [_CONDITIONS[name] for name in rule.unless]
    when = [_CONDITIONS[name] for name in rule.when]
    frame, cue, strip, rule_id = rule.frame, rule.cue, rule.strip, rule.id
    if rule.pattern is None:
        if cue is None:
            raise ValueError(
                f"{RULES.source}: rule {rule_id!r}: cue: a row of states names its cue"
            )
        decision: Decision = (frame, cue, rule_id)
        return lambda v: (
            None if any(f(v) for f in unless) or not all(f(v) for f in when) else decision
        )
    pattern = RULES.pattern(rule_id)
    scoped = rule.max_scope is not None or rule.terminated_by not in (None, _NEXT_VALUE)
    stop = RULES.pattern(rule.terminated_by) if scoped and rule.terminated_by else None
    limit = rule.max_scope
    needs = RULES.pattern(rule.needs) if rule.needs else None
    looks_left = sides[0] in ("before", "sentence_before", "window")

    def nearest(text: str) -> re.Match[str] | None:
        # The cue nearest the value governs it (one further away has a longer gap still),
        # when nothing that ends its scope parts them and the gap is within its reach.
        match = _last(pattern, text) if looks_left else pattern.search(text)
        if match is None:
            return None
        gap = text[match.end() :] if looks_left else text[: match.start()]
        if (stop and stop.search(gap)) or (limit is not None and len(gap.split()) > limit):
            return None
        return match

    search = nearest if scoped else pattern.search

    def decide(v: _View, match: re.Match[str]) -> Decision | None:
        if any(skip(v) for skip in unless) or not all(need(v) for need in when):
            return None
        found = match.group(0)
        found = found.strip() if strip is True else found.strip(strip or "")
        return frame, cue.format(found) if cue else found, rule_id

    def step(v: _View) -> Decision | None:
        for read in readers:
            text = read(v)
            if not text or (needs and not needs.search(text)):
                continue
            match = search(text)
            if match:
                return decide(v, match)
        return None

    read = readers[0]

    def one_side(v: _View) -> Decision | None:  # the common row, kept short: run per mention
        text = read(v)
        match = search(text) if text else None
        return decide(v, match) if match else None

    return step if len(readers) > 1 or needs else one_side


_Step = Callable[["_View"], Decision | None]
_CASES: dict[str, _Step] = {}


_AFTER_ONLY: set[str] = set()  # steps that never fire without words after the value


def _case(name: str, after_only: bool = False) -> Callable[[_Step], _Step]:
    """Register the code for a step of the rules file's ``order`` that a row cannot say."""

    def register(decide: _Step) -> _Step:
        _CASES[name] = decide
        if after_only:
            _AFTER_ONLY.add(name)
        return decide

    return register


def _by(frame: Frame, match: re.Match[str], cue: str | None = None) -> Decision:
    """A frame decided by one rule's match: the frame, the cue words and the rule's id."""
    return frame, match.group(0) if cue is None else cue, RULES.id_of(match.re)


@_case("place-as-kind", after_only=True)
def _place_as_kind(v: _View) -> Decision | None:
    m = v.m
    if (
        v.after
        and m.asked_place
        and _R["article-before"].search(m.left)
        and (follower := _R["follower"].match(v.after))
        and follower.group(1) not in _WORDS["function-words"]
        and follower.group(1) not in _WORDS["dwellers"]
        and " " not in m.phrase_given.strip()
    ):
        return "aside", "the place naming a kind of thing (a Milan agency)", "place-as-kind"
    return None


@_case("another-role-right", after_only=True)
def _another_role(v: _View) -> Decision | None:
    role = _R["another-role-right"].search(v.after) if v.after else None
    if role and not (v.m.asked and v.m.asked & frozenset(_R["word"].findall(role.group(0)))):
        return "aside", "named for another role", "another-role-right"
    return None


@_case("common-word")
def _common_word(v: _View) -> Decision | None:
    if _is_generic(v.m):
        return "generic_word", f"{v.m.phrase_raw!r} used as a common word", "common-word"
    return None


@_case("sarcasm")
def _sarcasm(v: _View) -> Decision | None:
    m = v.m
    for text in (m.sentence, m.next_sentence if len(m.next_sentence.split()) <= 4 else ""):
        sarcasm = _R["sarcasm"].search(text)
        if sarcasm and sarcasm.group(0) in _WORDS["sarcasm-faces"] and text is m.sentence:
            # An eye-roll speaks of its own clause: in "my cat's Marmalade (you wrote
            # Margarine 🙄)" the cat's name is sincere.
            clause = m.left + m.phrase_raw.lower() + m.right
            sarcasm = sarcasm if _R["sarcasm"].search(clause) else None
        if sarcasm:
            return _by("sarcasm", sarcasm)
    return None


@_case("question-mark")
def _question_mark(v: _View) -> Decision | None:
    # A question can still presuppose the subject's own fact: "my parrot keeps plucking its
    # feathers, vet or diet?", "a good climbing gym here in Denver?".
    m = v.m
    if (
        not m.sentence.rstrip(" \"')]!.🙂😊").endswith("?")
        or v.instruction
        or _R["presupposed"].search(m.left)
        or _R["causal"].search(m.left)
    ):
        return None
    after = m.sentence[len(m.sentence_left) + len(m.phrase_raw) :]
    stated_then_asked = (
        _R["break-before-question"].search(after)
        and not _R["opens-as-question"].match(m.sentence_left)
        and _R["first-person-subject"].search(m.sentence_left)
    )
    return None if stated_then_asked else ("question", "asked, not stated", "question-mark")


@_case("strong-hypo")
def _strong_hypo(v: _View) -> Decision | None:
    if v.instruction:
        return None
    strong = _last(_R["strong-hypo"], v.m.left)
    # A condition ends at its comma: "if I lived somewhere warmer I'd be happier lol,
    # helsinki in feb is brutal" states Helsinki; the consequent of "If we moved,
    # Edinburgh would be …" is caught by its modal.
    if (
        strong
        and strong.group(0) in _WORDS["conditions"]
        and _R["clause-pause"].search(v.m.left[strong.end() :])
    ):
        return None
    return _by("hypothetical", strong) if strong else None


@_case("weak-hypo")
def _weak_hypo(v: _View) -> Decision | None:
    if v.instruction:
        return None
    # A modal reaches the value only within its stretch of the clause: in "if i lived
    # somewhere warmer i'd be happier lol, helsinki in feb is brutal" it stops at the comma.
    after_agent = v.after_agent
    stretch = _R["stretch-break"].split(after_agent)[-1]
    weak = _R["weak-hypo"].search(stretch[len(_agent_token(stretch)) :])
    modal_agent = stretch == after_agent and _R["modal-agent"].match(_agent_token(after_agent))
    # An assistant acknowledging a constraint speaks of its own next steps ("Got it - I'll
    # avoid shellfish"): its "I'll" does not make the subject's value hypothetical.
    own_step = v.m.speaker == "assistant" and v.m.line_has_ack and v.agents[0] >= 0
    if weak and _R["staying"].search(stretch):
        weak = None  # "intends to stay at Fairmont": where they are and mean to remain
    if own_step or not (weak or (v.agent >= 0 and modal_agent)):
        return None
    if weak:
        return _by("hypothetical", weak)
    return "hypothetical", _agent_token(after_agent), "modal-agent"


@_case("right-modal", after_only=True)
def _right_modal(v: _View) -> Decision | None:
    if not v.instruction and v.after and _R["right-modal"].search(v.after):
        return "hypothetical", v.m.right.split()[0], "right-modal"
    return None


@_case("ahead")
def _ahead(v: _View) -> Decision | None:
    # The time may sit anywhere in the clause ("The wedding is next June, we're getting
    # married …"); what is already so is said next to the value ("back in Madrid now,
    # work tomorrow"). A verb of change before the value with a month ahead ("starting at
    # Airbnb in September"); after the value the verb is the value's own doing ("my
    # daughter Layla starts school in September").
    m = v.m
    if v.instruction:
        return None
    ahead = _R["ahead"].search(v.either) or (
        _R["ahead-verb-month"].search(m.left + m.phrase_raw.lower() + m.right)
        if _R["ahead-verb"].search(m.left)
        else None
    )
    comma_part = m.left[m.left.rfind(",") + 1 :] + " " + m.right.split(",")[0]
    if ahead and not _R["been"].search(comma_part):
        return _by("hypothetical", ahead, f"a change still ahead ({ahead.group(0)})")
    return None


@_case("negation")
def _negation(v: _View) -> Decision | None:
    m = v.m
    if m.negative_value or not v.window:
        return None
    negation = _R["negation"].search(v.window[len(_agent_token(v.window)) :])
    if negation and len(_R["negation"].findall(m.left[m.left.rfind(",") + 1 :])) % 2 == 0:
        return None  # "it's not like I don't still play the oboe": two cancel out
    return _by("negated", negation) if negation else None


@_case("right-retract")
def _right_retract(v: _View) -> Decision | None:
    if not v.m.negative_value and _R["right-retract"].search(v.m.right):
        return "retracted", v.m.right.strip()[:20], "right-retract"
    return None


@_case("done-with-it", after_only=True)
def _done_with_it(v: _View) -> Decision | None:
    right = v.after
    done = (
        _R["done-with-it"].search(right) if right and _R["object-pronoun"].search(right) else None
    )
    return _by("retracted", done, done.group(0).strip()[-24:]) if done else None


@_case("assistant-restates")
def _assistant_restates(v: _View) -> Decision | None:
    m = v.m
    if m.speaker != "assistant":
        return None
    first, third, you = v.agents
    if (
        (you >= 0 and you >= first and you >= third)
        or (first < 0 and third < 0 and (_R["you"].search(m.sentence_left) or m.addressed))
        or (v.after and _R["you-right"].search(v.after))
    ):
        return "asserted", "assistant restates the subject's statement", "assistant-restates"
    if third < 0 and m.line_has_ack:
        return "asserted", "assistant acknowledges it", "assistant-acknowledges"
    return "not_about_subject", "the assistant's own words", "assistant-own-words"


@_case("third-party")
def _third_party(v: _View) -> Decision | None:
    first, third, _ = v.agents
    right = v.after
    if (
        third > first
        or _R["for-other"].search(v.m.right)
        or (right and "'" in right and _R["belongs-right"].match(right))
    ):
        return "third_party", "someone else's fact", "third-party"
    return "asserted", "stated as current", "stated-as-current"


def _steps() -> tuple[tuple[_Step, ...], tuple[_Step, ...]]:
    """Every step in order, and the steps for a mention that closes its clause."""
    unused = sorted(set(_CASES) - set(RULES.spec.order))
    if unused:
        raise ValueError(f"{RULES.source}: order: no step for the compound case {unused[0]!r}")
    steps = [(name, _CASES.get(name) or _row(RULES.rule(name))) for name in RULES.spec.order]
    for name in RULES.spec.order:
        side = RULES.rule(name).side if name in RULES.by_id and name not in _CASES else None
        when = RULES.rule(name).when if name in RULES.by_id and name not in _CASES else []
        if side == "after" or side == ["after"] or _AFTER_STATES & set(when):
            _AFTER_ONLY.add(name)
    closing = tuple(step for name, step in steps if name not in _AFTER_ONLY)
    return tuple(step for _, step in steps), closing


# Most mentions close their clause: the steps that read only the words after the value are
# left out for them (the reader runs on every probe of every cell).
_STEPS, _CLOSING_STEPS = _steps()


def frame_of(mention: MentionContext) -> Decision:
    """The frame of one mention, the cue that decided it and the id of the rule that did.

    The steps of the rules file's ``order`` are tried in turn and the first that decides
    names the frame: a row is applied by its pattern, side, scope and terminator; a
    compound case, which combines rows, by its code here. A rule id names a row of the rules
    file: a pattern row or a compound case (a row marked ``code``).
    """
    view = _View(mention)
    for step in _STEPS if view.after else _CLOSING_STEPS:
        decided = step(view)
        if decided:
            return decided
    raise AssertionError("the last step always decides")  # pragma: no cover


def _is_generic(m: MentionContext) -> bool:
    given = m.phrase_given
    if " " in given.strip() or not given or any(c.isdigit() for c in given):
        return False  # an amount or a date is never a common word
    raw = m.phrase_raw
    if given[:1].isupper() and not m.weak and not any(c.isdigit() for c in given):
        return _common_use(m)
    if m.weak and _R["quantifier-before"].search(m.left):
        return True  # "a kestrel", "a window": a shortened name turned common noun
    if given[:1].isupper() and raw.islower() and any(c.isupper() for c in m.raw_sentence_left):
        return True  # "Kestrel" the company vs "a kestrel" the bird, in a cased sentence
    follower = _R["follower"].match(m.right)
    if follower is None or follower.group(1) in _WORDS["function-words"]:
        return False
    # "kestrel nesting boxes": a short alias run into a common noun. Capitals in mid-sentence
    # mark a proper noun ("first week at Leeds done"), so only a lower-case mention or one
    # that opens its sentence can be the common word.
    # After a definite determiner a one-word value names a kind of thing ("the Go services",
    # "the Lisbon office"), not the value itself.
    if _R["definite-before"].search(m.left):
        return True
    return m.weak and (raw.islower() or m.sentence_start)


def _common_use(m: MentionContext) -> bool:
    """Whether a one-word name ("Reading", "Nice", "Apple") is used as the common word.

    A name stands after a name frame ("moved to reading", "works at apple", "city: Nice") or is
    written capitalised mid-sentence. Otherwise case decides where the text is cased (a
    lower-case "nice" in a cased line is the adjective), and where it is not (chat typed in
    lower case, a sentence's first word) the word counts as a name unless it is also an
    everyday English word (:data:`COMMON_WORD_NAMES`) with no verb of being after it.
    """
    left = m.left.rstrip(" \"'*")
    if _R["name-frame"].search(left) or _R["label-before"].search(m.sentence_left):
        return False
    if m.labelled and not m.sentence_left.strip(" \"'*"):
        return False  # the whole value of a label
    raw = m.phrase_raw
    if raw.islower() and len(raw) == len(m.phrase_given) + 1 and raw.endswith("s"):
        return True  # a name in the plural and lower case is a thing: "a pair of jordans"
    capital_inside = raw[:1].isupper() and not m.sentence_start and bool(left)
    if capital_inside and not raw.isupper():
        return False
    if raw.islower() and m.line_cased:
        return True
    common = m.phrase_given.lower() in COMMON_WORD_NAMES
    if _R["common-frame"].search(left) and (common or raw.islower()):
        return True
    if not common:
        return False
    return not _R["being-after"].match(m.right)


COMMON_WORD_NAMES = _WORDS["common-word-names"]
