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

The patterns and word lists are rows of the rules file (``rules.yaml``, read by
:mod:`._rules`); this module holds the order in which they are tried and the compound cases
that combine them, and every frame it returns names the rule that decided it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._rules import RULES

__all__ = ["Frame", "MentionContext", "frame_of", "split_clauses", "strip_hedges"]

Frame = Literal[
    "asserted",
    "other_topic",
    "retracted",
    "negated",
    "sarcasm",
    "question",
    "hypothetical",
    "visit",
    "third_party",
    "not_about_subject",
    "generic_word",
    "aside",
    "vague",
]

_THIRD = RULES.pattern("third")
_FOR_OTHER = RULES.pattern("for-other")
_BELONGS_RIGHT = RULES.pattern("belongs-right")
_PRONOUN_THIRD = RULES.pattern("pronoun-third")
_FIRST = RULES.pattern("first")
_YOU = RULES.pattern("you")
_MODAL_AGENT = RULES.pattern("modal-agent")
_AT_MINE = RULES.pattern("at-mine")

_SARCASM = RULES.pattern("sarcasm")
_SARCASM_FACES = RULES.words("sarcasm-faces")
_QUESTION_WORDS = RULES.pattern("question-words")
_CAUSAL = RULES.pattern("causal")
_REQUEST = RULES.pattern("request")
_INSTRUCTION = RULES.pattern("instruction")
_STANDING = RULES.pattern("standing")
_STRONG_HYPO = RULES.pattern("strong-hypo")
_STAYING = RULES.pattern("staying")
_DENIAL = RULES.pattern("denial")
_QUOTED_WORK = RULES.pattern("quoted-work")
_GOAL_LABEL = RULES.pattern("goal-label")
_CONDITIONS = RULES.words("conditions")
_WEAK_HYPO = RULES.pattern("weak-hypo")
_PLANNED = RULES.pattern("planned")
_FUTURE_TIME = RULES.pattern("future-time")
_WHEN_FUTURE = RULES.pattern("when-future")
_RIGHT_MODAL = RULES.pattern("right-modal")
_VISIT = RULES.pattern("visit")
_VISIT_RIGHT = RULES.pattern("visit-right")
_NEGATION = RULES.pattern("negation")
_RETRACT_WINDOW = RULES.pattern("retract-window")
_PAST_TIME = RULES.pattern("past-time")
_DISREGARD = RULES.pattern("disregard")
_SELF_CORRECTED = RULES.pattern("self-corrected")
_ENDED_RIGHT = RULES.pattern("ended-right")
_TODAY = RULES.pattern("today")
_FINE_RIGHT = RULES.pattern("fine-right")
_PAST_RIGHT = RULES.pattern("past-right")
_APPROACH_RIGHT = RULES.pattern("approach-right")
_AHEAD = RULES.pattern("ahead")
_AHEAD_VERB_MONTH = RULES.pattern("ahead-verb-month")
_FOR_A_WHILE = RULES.pattern("for-a-while")
_OBJECT_PRONOUN = RULES.pattern("object-pronoun")
_DONE_WITH_IT = RULES.pattern("done-with-it")
_UNTIL_RIGHT = RULES.pattern("until-right")
_HAD = RULES.pattern("had")
_AHEAD_VERB = RULES.pattern("ahead-verb")
_BEEN = RULES.pattern("been")
_NAME_FRAME = RULES.pattern("name-frame")
_COMMON_FRAME = RULES.pattern("common-frame")
_PAST_STATE = RULES.pattern("past-state")
_RIGHT_RETRACT = RULES.pattern("right-retract")
_CORRECTED = RULES.pattern("corrected")
_CORRECTED_NEXT = RULES.pattern("corrected-next")
_FROM_TO = RULES.pattern("from-to")
_TO_RIGHT = RULES.pattern("to-right")
_TAG_RETRACT = RULES.pattern("tag-retract")
_TAG_RETRACT_DATED = RULES.pattern("tag-retract-dated")
_YEAR_DIGITS = RULES.pattern("year")
_YEAR_SPAN = RULES.pattern("year-span")
_PENDING = RULES.pattern("pending")
_VALIDITY_CLOSED = RULES.pattern("validity-closed")
_HEDGE = RULES.pattern("hedge")
_CLAUSE_BREAK = RULES.pattern("clause-break")
_SENTENCE_END = RULES.pattern("sentence-end")
_FUNCTION_WORDS = RULES.words("function-words")


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


def _last(pattern: re.Pattern[str], text: str) -> int:
    last = -1
    for match in pattern.finditer(text):
        last = match.start()
    return last


_ALNUM = RULES.pattern("alnum")
_STRETCH_BREAK = RULES.pattern("stretch-break")
_CAN_YOU = RULES.pattern("can-you")
_CLAUSE_PAUSE = RULES.pattern("clause-pause")
_PRESUPPOSED = RULES.pattern("presupposed")
_OPENS_AS_QUESTION = RULES.pattern("opens-as-question")
_FIRST_PERSON_SUBJECT = RULES.pattern("first-person-subject")
_BREAK_BEFORE_QUESTION = RULES.pattern("break-before-question")


def _stated_then_asked(m: MentionContext) -> bool:
    after = m.sentence[len(m.sentence_left) + len(m.phrase_raw) :]
    return bool(
        _BREAK_BEFORE_QUESTION.search(after)
        and not _OPENS_AS_QUESTION.match(m.sentence_left)
        and _FIRST_PERSON_SUBJECT.search(m.sentence_left)
    )


_WORD = RULES.pattern("word")
_COMPARED = RULES.pattern("compared")
_GOING = RULES.pattern("going")
_STILL_NOW = RULES.pattern("still-now")
_FILLER = RULES.pattern("filler")
_PAUSE = RULES.pattern("pause")
_TOKEN = RULES.pattern("token")
_QUANTIFIER_BEFORE = RULES.pattern("quantifier-before")
_FOLLOWER = RULES.pattern("follower")
_DEFINITE_BEFORE = RULES.pattern("definite-before")
_LABEL_BEFORE = RULES.pattern("label-before")
_BEING_AFTER = RULES.pattern("being-after")
_DESCRIBES = RULES.pattern("describes")


def _agents(
    left: str,
    speaker: str,
    other_name_at: int,
    narrated: bool = False,
    asked: frozenset[str] = frozenset(),
) -> tuple[int, int, int]:
    """Positions of the last first-person, third-party and second-person agent in ``left``."""
    third = other_name_at
    found = list(_THIRD.finditer(left)) if left else []
    for match in found:
        if asked and asked & frozenset(_WORD.findall(match.group(0))):
            continue  # the asked-about relation is the slot ("my gf Alex")
        if _DESCRIBES.search(left, 0, match.start()):
            continue  # "Rebekah is a teacher who lives in …": what the subject is
        third = max(third, match.start())
    masked = left
    for match in found:  # blank the third-party phrases so their words are no agents
        masked = masked[: match.start()] + " " * len(match.group(0)) + masked[match.end() :]
    first = _last(_FIRST, masked)
    if speaker in ("subject", "other") and not narrated:
        third = max(third, _last(_PRONOUN_THIRD, masked))
    you = _last(_YOU, masked)
    return first, third, you


def _by(frame: Frame, match: re.Match[str], cue: str | None = None) -> tuple[Frame, str, str]:
    """A frame decided by one rule's match: the frame, the cue words and the rule's id."""
    return frame, match.group(0) if cue is None else cue, RULES.id_of(match.re)


def frame_of(mention: MentionContext) -> tuple[Frame, str, str]:
    """The frame of one mention, the cue that decided it and the id of the rule that did.

    A rule id names a row of the rules file; the compound cases below, which combine rows,
    are named by ids of their own (listed in the file's ``compound`` section).
    """
    m = mention
    tagged = m.left + m.phrase_raw.lower() + m.tail
    tag = _TAG_RETRACT.search(tagged)
    if tag is None and _YEAR_DIGITS.search(tagged):
        tag = _TAG_RETRACT_DATED.search(tagged)
    if tag is None and _YEAR_DIGITS.search(m.sentence_left + m.tail):
        tag = (
            _VALIDITY_CLOSED.search(m.sentence_left)
            or _VALIDITY_CLOSED.search(m.tail)
            or _YEAR_SPAN.search(m.sentence_left)
        )
    if tag:
        return _by("retracted", tag, tag.group(0).strip())
    pending = _PENDING.search(tagged) if "status" in tagged else None
    if pending:
        return _by("hypothetical", pending, pending.group(0).strip())
    if m.speaker == "other":
        return "not_about_subject", "another speaker's line", "other-speaker"
    # Most mentions close their clause: the rules that read the words after the value are
    # skipped when there are none (the reader runs on every probe of every cell).
    right = m.right if _ALNUM.search(m.right) else ""
    # Up to the next value only: in "Leeds, York wasn't for us" the ending is York's.
    own_right = right[: len(m.until_next)] if m.until_next else right
    ended = (own_right and _ENDED_RIGHT.search(own_right)) or (
        _ALNUM.search(m.tail) and _SELF_CORRECTED.search(m.tail)
    )
    if ended:
        return _by("retracted", ended, ended.group(0).strip(" ,.-–—"))
    disregard = _last_match(_DISREGARD, m.sentence_left)
    if disregard and not _governs(m.sentence_left[disregard.end() :]):
        disregard = None
    if disregard is None and right:
        disregard = _JOKE_RIGHT.search(right)
    if disregard:
        return _by("retracted", disregard)
    if m.in_aside:
        return "aside", "an aside about another value", "bracketed-aside"
    # "… an iguana, then clarified that was a joke": owned as untrue later in the sentence,
    # before any other value ("lives in Abuja (I typed Lagos by mistake)" is about Lagos).
    later = m.until_next
    untrue = _UNTRUE_LATER.search(later) if len(later) > 3 else None
    if untrue:
        return _by("retracted", untrue)
    if _COMPARED.search(m.left):
        return "aside", "the other side of a comparison", "compared"
    if (
        right
        and m.asked_place
        and _ARTICLE_BEFORE.search(m.left)
        and (follower := _FOLLOWER.match(right))
        and follower.group(1) not in _FUNCTION_WORDS
        and follower.group(1) not in _DWELLERS
        and " " not in m.phrase_given.strip()
    ):
        return "aside", "the place naming a kind of thing (a Milan agency)", "place-as-kind"
    if right and m.asked_place and _PERSON_ACTS.match(right) and m.phrase_raw[:1].isupper():
        return "aside", "a person of that name", "person-acts"
    if (
        right
        and m.asked_place
        and _PRAISED.match(right)
        and not _FILLER.sub("", m.left[m.left.rfind(",") + 1 :])
    ):
        return "aside", "an opinion of the place", "praised"
    role = _ANOTHER_ROLE_RIGHT.search(right) if right else None
    if role and not (m.asked and m.asked & frozenset(_WORD.findall(role.group(0)))):
        return "aside", "named for another role", "another-role-right"
    if _is_generic(m):
        return "generic_word", f"{m.phrase_raw!r} used as a common word", "common-word"
    for text in (m.sentence, m.next_sentence if len(m.next_sentence.split()) <= 4 else ""):
        sarcasm = _SARCASM.search(text)
        if sarcasm and sarcasm.group(0) in _SARCASM_FACES and text is m.sentence:
            # An eye-roll speaks of its own clause: in "my cat's Marmalade (you wrote
            # Margarine 🙄)" the cat's name is sincere.
            clause = m.left + m.phrase_raw.lower() + m.right
            sarcasm = sarcasm if _SARCASM.search(clause) else None
        if sarcasm:
            return _by("sarcasm", sarcasm)
    instruction = _INSTRUCTION.search(m.left) or (
        _REQUEST.search(m.sentence_left + m.phrase_raw.lower())
    )
    if not instruction and _STANDING.search(m.sentence) and _CAN_YOU.match(m.sentence):
        instruction = _STANDING.search(m.sentence)  # "Can you … from here on?" asks for a habit
    # A question can still presuppose the subject's own fact: "my parrot keeps plucking its
    # feathers, vet or diet?", "a good climbing gym here in Denver?".
    presupposed = _PRESUPPOSED.search(m.left)
    if not instruction and not presupposed:
        if (
            m.sentence.rstrip(" \"')]!.🙂😊").endswith("?")
            and not _CAUSAL.search(m.left)
            and not _stated_then_asked(m)
        ):
            return "question", "asked, not stated", "question-mark"
        asked = _QUESTION_WORDS.search(m.left)
        if asked:
            return _by("question", asked)
    denial = (
        _DENIAL.search(m.left)
        if ("n't" in m.left or "not" in m.left or "never" in m.left)
        else None
    )
    if denial and not m.negative_value:
        return _by("negated", denial)
    quoted = m.sentence_left.count('"') % 2 == 1 and _QUOTED_WORK.search(m.sentence_left)
    if quoted:
        return _by("aside", quoted, f"words quoted from elsewhere ({quoted.group(0)})")
    first, third, you = _agents(m.left, m.speaker, m.other_name_at, m.narrated, m.asked)
    agent = max(first, third, you if m.speaker in ("assistant", "note") else -1)
    after_agent = m.left[agent:] if agent >= 0 else m.left
    window = m.window if len(m.window) < len(after_agent) else after_agent
    if not instruction:
        strong = _last_match(_STRONG_HYPO, m.left)
        # A condition ends at its comma: "if I lived somewhere warmer I'd be happier lol,
        # helsinki in feb is brutal" states Helsinki; the consequent of "If we moved,
        # Edinburgh would be …" is caught by its modal.
        if (
            strong
            and strong.group(0) in _CONDITIONS
            and _CLAUSE_PAUSE.search(m.left[strong.end() :])
        ):
            strong = None
        if strong is None and (
            ":" in m.sentence_left or "=" in m.sentence_left or " - " in m.sentence_left
        ):
            strong = _GOAL_LABEL.search(m.sentence_left)
        if strong:
            return _by("hypothetical", strong)
        # A modal reaches the value only within its stretch of the clause: in "if i lived
        # somewhere warmer i'd be happier lol, helsinki in feb is brutal" it stops at the comma.
        stretch = _STRETCH_BREAK.split(after_agent)[-1]
        weak = _WEAK_HYPO.search(stretch[len(_agent_token(stretch)) :])
        modal_agent = stretch == after_agent and _MODAL_AGENT.match(_agent_token(after_agent))
        # An assistant acknowledging a constraint speaks of its own next steps ("Got it - I'll
        # avoid shellfish"): its "I'll" does not make the subject's value hypothetical.
        own_step = m.speaker == "assistant" and m.line_has_ack and first >= 0
        if weak and _STAYING.search(stretch):
            weak = None  # "intends to stay at Fairmont": where they are and mean to remain
        if (weak or (agent >= 0 and modal_agent)) and not own_step:
            if weak:
                return _by("hypothetical", weak)
            return "hypothetical", _agent_token(after_agent), "modal-agent"
        if right and _RIGHT_MODAL.search(right):
            return "hypothetical", m.right.split()[0], "right-modal"
        when = _WHEN_FUTURE.search(m.left)
        if when:
            return _by("hypothetical", when)
        if right and _PLANNED.search(after_agent) and _FUTURE_TIME.search(right):
            return "hypothetical", "a change still ahead", "planned-ahead"
        # The time may sit anywhere in the clause ("The wedding is next June, we're getting
        # married …"); what is already so is said next to the value ("back in Madrid now,
        # work tomorrow").
        clause = m.left + " " + m.right
        # A verb of change before the value with a month ahead ("starting at Airbnb in
        # September"); after the value the verb is the value's own doing ("my daughter Layla
        # starts school in September").
        ahead = _AHEAD.search(clause) or (
            _AHEAD_VERB_MONTH.search(m.left + m.phrase_raw.lower() + m.right)
            if _AHEAD_VERB.search(m.left)
            else None
        )
        if ahead and not _BEEN.search(_comma_part(m.left, m.right)):
            return _by("hypothetical", ahead, f"a change still ahead ({ahead.group(0)})")
        # "going pescatarian after the holidays": a change announced, not yet made.
        going = _GOING.search(m.left)
        if going and not _BEEN.search(clause):
            return "hypothetical", "going (a change ahead)", "going"
    visit = (
        _VISIT.search(window)
        or (right and _VISIT_RIGHT.search(right))
        or (_TRAVEL_WORDS.search(m.sentence_left) and _TRAVELS_TO.search(m.sentence_left))
    )
    if visit:
        return _by("visit", visit, visit.group(0).strip())
    if not m.negative_value:
        scope = window[len(_agent_token(window)) :] if window else ""
        negation = _NEGATION.search(scope) if scope else None
        if negation and len(_NEGATION.findall(m.left[m.left.rfind(",") + 1 :])) % 2 == 0:
            negation = None  # "it's not like I don't still play the oboe": two cancel out
        if negation:
            return _by("negated", negation)
    retraction = _last_match(_RETRACT_WINDOW, window)
    # A retraction verb governs the words right after it, not a value past a comma
    # ("I left in Feb, Halcyon Robotics now").
    if retraction and _governs(window[retraction.end() :]):
        return _by("retracted", retraction)
    if right and _FROM_TO.search(window) and _TO_RIGHT.search(right):
        return "retracted", "from … to", "from-to"
    corrected = (
        (right and _CORRECTED.search(right))
        or _CORRECTED.search(m.tail)
        or (m.next_sentence and _CORRECTED_NEXT.search(m.next_sentence))
    )
    if corrected:
        return _by("retracted", corrected, "corrected")
    if not m.negative_value and _RIGHT_RETRACT.search(m.right):
        return "retracted", m.right.strip()[:20], "right-retract"
    past = _PAST_STATE.search(window)
    # "lived in Nice for 4 yrs now": a state that goes on is current.
    # Only up to the next value: "worked at HSBC before joining Monzo, where he still works".
    if past and right and _STILL_NOW.search(right[: len(m.until_next)]):
        past = None
    if past:
        return _by("retracted", past, f"past state ({past.group(0)})")
    # "I had a Civic, then a Model 3 for a year": held for a stretch that is over.
    if right and _FOR_A_WHILE.search(right) and _HAD.search(m.sentence_left):
        return "retracted", "past state (had … for a while)", "for-a-while"
    done = _DONE_WITH_IT.search(right) if right and _OBJECT_PRONOUN.search(right) else None
    if done:
        return _by("retracted", done, done.group(0).strip()[-24:])
    # "I had a Nokia 3310 until 2015": held up to a time that is named, so over.
    if right and "til" in right and _UNTIL_RIGHT.search(right) and _HAD.search(m.sentence_left):
        return "retracted", "past state (had … until)", "until-right"
    past_time = _PAST_TIME.search(m.left + " " + m.right)
    if past_time:
        return _by("retracted", past_time, f"a time that is over ({past_time.group(0)})")
    opens = not _FILLER.sub("", m.left[m.left.rfind(",") + 1 :])
    if opens and right and _PAST_RIGHT.search(right) and not _TODAY.search(right):
        return "retracted", "past state (value was)", "past-right"
    if not m.negative_value and right and _FINE_RIGHT.search(right):
        return "negated", "no problem for them", "fine-right"
    approach = _APPROACH_RIGHT.search(right) if right else None
    if approach:
        return _by("hypothetical", approach, approach.group(0).strip(" ,"))
    if _AT_MINE.search(m.left):
        return "asserted", "the subject's own place", "at-mine"
    partial = _PARTIAL_LEFT.search(m.left) or (right and _PARTIAL_RIGHT.search(right))
    if partial:
        return _by("vague", partial, f"held in part ({partial.group(0).strip()})")
    if m.speaker == "assistant":
        suggested = _SUGGESTION.search(m.sentence_left)
        if suggested and not _YOUR_OWN.search(m.sentence_left):
            return _by(
                "not_about_subject", suggested, f"the assistant's suggestion ({suggested.group(0)})"
            )
        if (
            (you >= 0 and you >= first and you >= third)
            or (first < 0 and third < 0 and (_YOU.search(m.sentence_left) or m.addressed))
            or (right and _YOU_RIGHT.search(right))
        ):
            return "asserted", "assistant restates the subject's statement", "assistant-restates"
        if third < 0 and m.line_has_ack:
            return "asserted", "assistant acknowledges it", "assistant-acknowledges"
        return "not_about_subject", "the assistant's own words", "assistant-own-words"
    if (
        third > first
        or _FOR_OTHER.search(m.right)
        or (right and "'" in right and _BELONGS_RIGHT.match(right))
    ):
        return "third_party", "someone else's fact", "third-party"
    return "asserted", "stated as current", "stated-as-current"


_ARTICLE_BEFORE = RULES.pattern("article-before")
_DWELLERS = RULES.words("dwellers")
_PERSON_ACTS = RULES.pattern("person-acts")
_TRAVEL_WORDS = RULES.pattern("travel-words")
_TRAVELS_TO = RULES.pattern("travels-to")
_PRAISED = RULES.pattern("praised")
_SUGGESTION = RULES.pattern("suggestion")
_YOUR_OWN = RULES.pattern("your-own")
_YOU_RIGHT = RULES.pattern("you-right")
_ANOTHER_ROLE_RIGHT = RULES.pattern("another-role-right")
_UNTRUE_LATER = RULES.pattern("untrue-later")
_JOKE_RIGHT = RULES.pattern("joke-right")
_PARTIAL_LEFT = RULES.pattern("partial-left")
_PARTIAL_RIGHT = RULES.pattern("partial-right")


def _comma_part(left: str, right: str) -> str:
    """The stretch of a clause around a mention between the commas on either side of it."""
    return left[left.rfind(",") + 1 :] + " " + right.split(",")[0]


def _last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    last = None
    for match in pattern.finditer(text):
        last = match
    return last


def _governs(gap: str) -> bool:
    """Whether a cue ending before ``gap`` still governs the value after it."""
    return not _PAUSE.search(gap) and len(gap.split()) <= 5


def _agent_token(text: str) -> str:
    """The agent word ``text`` starts with (empty when it does not start with one)."""
    match = _TOKEN.match(text)
    if match and (_FIRST.fullmatch(match.group(0)) or _YOU.fullmatch(match.group(0))):
        return match.group(0)
    return ""


def _is_generic(m: MentionContext) -> bool:
    given = m.phrase_given
    if " " in given.strip() or not given or any(c.isdigit() for c in given):
        return False  # an amount or a date is never a common word
    raw = m.phrase_raw
    if given[:1].isupper() and not m.weak and not any(c.isdigit() for c in given):
        return _common_use(m)
    if m.weak and _QUANTIFIER_BEFORE.search(m.left):
        return True  # "a kestrel", "a window": a shortened name turned common noun
    if given[:1].isupper() and raw.islower() and any(c.isupper() for c in m.raw_sentence_left):
        return True  # "Kestrel" the company vs "a kestrel" the bird, in a cased sentence
    follower = _FOLLOWER.match(m.right)
    if follower is None or follower.group(1) in _FUNCTION_WORDS:
        return False
    # "kestrel nesting boxes": a short alias run into a common noun. Capitals in mid-sentence
    # mark a proper noun ("first week at Leeds done"), so only a lower-case mention or one
    # that opens its sentence can be the common word.
    # After a definite determiner a one-word value names a kind of thing ("the Go services",
    # "the Lisbon office"), not the value itself.
    if _DEFINITE_BEFORE.search(m.left):
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
    if _NAME_FRAME.search(left) or _LABEL_BEFORE.search(m.sentence_left):
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
    if _COMMON_FRAME.search(left) and (common or raw.islower()):
        return True
    if not common:
        return False
    return not _BEING_AFTER.match(m.right)


COMMON_WORD_NAMES = RULES.words("common-word-names")
