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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._dates import DATE_TEXT


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split(" "))


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
]
_D = DATE_TEXT

_REL = (
    r"(?:sister|brother|sibling|mum|mom|mother|dad|father|parent|wife|husband|spouse|partner|"
    r"girlfriend|boyfriend|fianc[ée]e?|friend|mate|buddy|pal|colleague|coworker|co-worker|boss|"
    r"neighbour|neighbor|cousin|aunt|auntie|uncle|son|daughter|kid|child|children|flatmate|"
    r"roommate|housemate|grandma|grandmother|grandpa|grandfather|granny|teammate|classmate|"
    r"niece|nephew|in-law|guy|woman|man|girl|boy|lady|bloke|client|landlord|landlady|"
    r"family|folks|students?|customer|ex|stepmother|stepfather|stepsister|stepbrother|twin|"
    r"professor|teacher|lecturer|tutor|coach|trainer|therapist|dentist|doctor|mentor|"
    r"supervisor|grandad|granddad|nan|nana|gran|bf|gf|hubby|missus|crush|godmother|godfather|"
    r"baby|toddler|relative|acquaintance|officemate|manager|lead|tech lead|team lead|cto|ceo|"
    r"founder|cofounder|co-founder|intern|recruiter|hr)s?"
)
_THIRD = re.compile(
    r"\b(?:my|our|his|her|their|your|a|an|the|this|that|one of my|some)\s+"
    rf"(?:[a-z'-]+\s+){{0,2}}?{_REL}\b"
    rf"|\b[a-z]+'s\s+(?:[a-z'-]+\s+){{0,2}}?{_REL}\b"
    r"|\b(?:someone|somebody|people|everyone|everybody|nobody|no one|folks|they say)\b"
)
# The value goes to someone else: "an oat flat white for my manager".
_FOR_OTHER = re.compile(
    rf"^[\s,]*(?:for|to)\s+(?:my|our|his|her|their|the)\s+(?:[a-z'-]+\s+)?{_REL}\b"
)
_PRONOUN_THIRD = re.compile(r"\b(?:he|she|they|he's|she's|they're|him|them|his|her|their)\b")
# Subject pronouns only: "my" and "me" name the speaker without making them the one who acts
# ("a guy on my team is undecided" is the guy's view).
_FIRST = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll)\b")
_YOU = re.compile(r"\b(?:you|you're|youre|you've|you'll|you'd|your|yours|yourself)\b")
_MODAL_AGENT = re.compile(r"^(?:i'd|i'll|we'd|we'll)$")
# "My new manager at Lumen …": a relation that places the speaker at the value.
_AT_MINE = re.compile(
    r"\bmy\s+(?:new\s+|current\s+|first\s+)?(?:manager|boss|team|colleagues?|co-?workers?|"
    r"office|desk|job|role|position|contract|badge|onboarding|first (?:day|week)|flat|"
    r"apartment|place|house|home|landlord|neighbours?|neighbors?|gp|commute|lease)\s+"
    r"(?:at|in|here in|with)\s*$"
)

_SARCASM = re.compile(
    r"\b(?:oh sure|oh yeah|oh yes|oh great|oh joy|oh wonderful|oh totally|yeah right|yeah, right|"
    r"as if|said no one|said nobody|in my dreams|like that's going to happen|"
    r"like that'll happen|that'll be the day|what a joke|lol no|haha no|sure, jan|"
    r"because that's so likely|not!)(?![\w'])|/s\b|🙄|😒|😏|\blike [\w' ]{1,30} would ever\b"
)
_QUESTION_WORDS = re.compile(
    r"\b(?:i wonder|wondering|curious (?:about|whether|if)|do you know|any idea|"
    r"what do you think|should i|is it worth|"
    r"ask(?:s|ed|ing)? (?:about|how|whether|if|what|which|why|when|where|for|me about))\b"
)
_CAUSAL = re.compile(
    r"\b(?:since|because|as|now that|given that|seeing as|cause)\s+(?:i|i'm|i've|we|we're|my)\b"
)
_REQUEST = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|and|also|please|actually),?\s+)*(?:can|could|would|will)\s+"
    r"(?:you|we)\s+(?:please\s+)?(?:always\s+)?(?:use|go with|stick (?:to|with)|switch to|keep|"
    r"format|start|reply|answer|write|call me|put|include|add|send|address me|do)\b"
)
_INSTRUCTION = re.compile(
    r"(?:'d|would)\s+(?:like|love|prefer)\s+(?:you|it if you|that you)|want you to|"
    r"'d prefer|would prefer|'d rather you|would rather you|"
    r"(?:want|like|prefer)s?\s+to\s+be\s+(?:called|addressed|known)"
)
_STANDING = re.compile(r"\b(?:from now on|from here on|going forward|from today|as usual)\b")
_STRONG_HYPO = re.compile(
    r"\b(?:if|imagine|imagining|suppose|supposing|what if|hypothetically|in theory|"
    r"theoretically|in another life|pretend|unless|whether|wish|wishing|dream|dreams|dreaming|"
    r"dreamt|fantasi[sz]\w*|maybe|perhaps|possibly|probably|someday|some day|one day|eventually|"
    r"in the future|hopefully)\b"
)
_WEAK_HYPO = re.compile(
    r"\b(?:would|wouldn't|could|couldn't|might|may(?! \d)|maybe|perhaps|possibly|probably|"
    r"should|someday|some day|one day|eventually|in the future|hope|hoping|hopefully|tempted|"
    r"considering|consider|considered|thinking (?:of|about)|think about|plan|plans|planning|"
    r"intend\w*|wants? to|wanted to|love to|going to|gonna|about to|apply\w*|applied|"
    r"interview\w*|looking (?:at|into)|research\w*|shortlist\w*|fancy|try|trying|curious|"
    r"will|won't|'ll|aim\w* to|keen to|eyeing|toying with|weighing|debating)\b"
)
# A change still ahead: "I'm moving to Lisbon next month", "once we move to Lisbon".
_PLANNED = re.compile(
    r"\b(?:moving|relocating|joining|switching|transferring|heading)\b[^.;]*$"
)
_FUTURE_TIME = re.compile(
    r"^[^.;]{0,40}\b(?:next (?:week|month|year|spring|summer|autumn|fall|winter|quarter)|"
    r"in (?:a|one|two|three|four|five|six|a few|\d+) (?:weeks?|months?|years?)|soon|"
    r"later this (?:year|month)|tomorrow|at the end of the (?:month|year))\b"
)
_WHEN_FUTURE = re.compile(
    r"\b(?:once|when|after|as soon as) (?:i|we) (?:move|get|start|switch|join|become|go)\b"
)
_RIGHT_MODAL = re.compile(r"^\W*(?:would|could|might|may|sounds|seems|looks)\b")
_VISIT = re.compile(
    r"\b(?:visit\w*|trip|holiday|vacation|weekend|travel\w*|fly\w*|flew|stopover|layover|"
    r"conference|tour\w*|stay\w* (?:in|at) a hotel|passing through|day out|heading (?:up |down |"
    r"over |back )?to|test[- ]dr\w*|tried out|borrowed|rented|hired a)\b"
)
# A stay that the words after the value make temporary: "in Oslo for the long weekend".
_VISIT_RIGHT = re.compile(
    r"^[\s,]*(?:just\s+|only\s+)?(?:for (?:the|a) (?:\w+ )?(?:weekend|week|trip|holiday|"
    r"vacation|visit|conference|few days|night)|on (?:holiday|vacation|a trip|business)|"
    r"to see (?:friends|family))"
)
_NEGATION = re.compile(
    r"\b(?:not|never|no|nor|neither|hardly|barely|without|non|none)\b|n't\b|\bcannot\b"
)
_RETRACT_WINDOW = re.compile(
    r"(?<!getting )(?<!get )(?<!got )\bused to\b|\b(?:formerly|previously|former|ex-|back when|"
    r"back then|in the past|no longer|not anymore|until recently|grew up|was born|last day at|"
    r"notice at|goodbye|bye|farewell|left|leaving|quit|quitting|resigned|gave up|give up|"
    r"stopped|done with|broke up|split from|instead of|rather than|replacing|replaced|"
    r"in place of|no more|ditched|sold|selling|got rid of|returned|traded in|fired from|"
    r"laid off (?:from|by)|let go (?:from|by)|made redundant (?:at|from|by)|"
    r"moved (?:away |out )?(?:from|of)|moving (?:away )?from|"
    r"out of|switched (?:away )?from|changed from|transferred from|came from|relocated from)\b"
)
_PAST_STATE = re.compile(
    r"(?<!'ve )(?<!have )(?<!has )(?<!'s )\b(?:was|were|lived|worked|studied|stayed|spent|"
    r"had been|used to be|played|owned|drove|attended)\b"
    r"(?!\s+(?:hired|offered|accepted|promoted|taken on|diagnosed|told|confirmed|given|"
    r"transferred|moved|just|finally|officially))"
)
_RIGHT_RETRACT = re.compile(
    r"^[\s,.;:!()-]*(?:not anymore|not any more|no more\b|anymore|any more|no longer\b|"
    r"is over|is history|is behind me|days are over|is a thing of the past|→|->|=>|⇒|"
    r"(?:feels |felt |seems |was )?(?:like )?(?:ages|years|months|a lifetime|long) ago)"
)
_WRONG = r"(?:wrong|incorrect|a mistake|a typo|not true|untrue|false|out of date)\b"
_CORRECTED = re.compile(rf"^[^.;]{{0,40}}\b(?:was|is|that's|that was) {_WRONG}")
_CORRECTED_NEXT = re.compile(rf"^\W*(?:that|this|it)(?:'s| was| is) (?:\w+ )?{_WRONG}")
_FROM_TO = re.compile(r"\bfrom\s*$")
_TO_RIGHT = re.compile(r"^\s*(?:to|→|->|=>)\b|^\s*(?:→|->|=>)")
_TAG_RETRACT = re.compile(
    r"\((?:outdated|superseded|obsolete|retracted|old|former|formerly|previous|previously|"
    r"stale|ended|expired|past|no longer)\b[^)]*\)|\[(?:outdated|superseded|obsolete|old|"
    r"former|previous|stale|retracted)\]|\bno longer true\b|\bsuperseded\b|\bobsolete\b|"
    rf"\bvalid[_ ]?to\s*[=:]\s*(?:{_D})"
    rf"|\bvalid\s+(?:from\s+)?(?:{_D})\s*(?:to|until|till|–|—|-|→|->)\s*(?:{_D})"
    rf"|(?:{_D})\s*(?:→|->|–|—|to|until|till)\s*(?:{_D})|\buntil\s+(?:{_D})|\bended\s+(?:{_D})"
    r"|\bstatus\s*[=:]\s*(?:old|inactive|expired|superseded|past|former)\b|\bcurrent\s*[=:]\s*false\b",
    re.IGNORECASE,
)
# A closed validity interval written before the value, as graph renderings do:
# "(maria)-[WORKS_AT {valid_from: 2027-01-04, valid_to: 2027-03-01}]->(Kestrel)".
_VALIDITY_CLOSED = re.compile(
    rf"\b(?:valid[_ ]?(?:to|until|till)|expire[sd]?(?:_at|_on)?|ended(?:_at|_on)?|end_date)"
    rf"[\"']?\s*[=:]\s*[\"']?(?:{_D})",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\(\s*(?:may|might|could|possibly|probably|perhaps)\s+(?:be\s+)?(?:outdated|out of date|"
    r"stale|old|out-of-date)\s*\)|\((?:unverified|older|unconfirmed|low confidence)\)",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(
    r";|:\s|\s[-–—]\s|,?\s+but\s|,\s*(?:though|although|whereas|while|so|yet)\s|\s+whereas\s|"
    r",\s+and\s+(?=(?:i|i'm|we|my|now)\b)|\(|\)|\s+and\s+now\s"
)
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\s+(?=/s\b)")
# Words that may follow a one-word value without making it part of a compound ("vegan now",
# but "kestrel nesting boxes" and "a single page" are other things).
_FUNCTION_WORDS = _word_set(
    "a an the and or but so nor yet for from to at in on of off by with without as than then "
    "is are was were be been being am has have had do does did will would can could may "
    "might must shall should now these those this that today tomorrow yesterday too again "
    "already still since because though although while when where who which whose what "
    "there here it its it's i i'm me my we our you your he she they them their all every "
    "each any some no not never ever always forever anymore lately recently finally "
    "officially honestly really very just only also even full-time part-time please thanks "
    "thank ok okay lol haha yes yeah after before until till about around through "
    "starting effective these days now-a-days nowadays instead either both like made makes "
    "make sent offered hired gave got get said says told asked wants wanted needs needed "
    "seems feels felt looks looked became become becomes started starts joined suits suit "
    "suited works worked fits fit wins won's last next first new old current latest "
    "confirmed noted updated update please, mode style-wise full stop period anyway though "
    "one's everyone's mornings"
)


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


def _last(pattern: re.Pattern[str], text: str) -> int:
    last = -1
    for match in pattern.finditer(text):
        last = match.start()
    return last


def _agents(left: str, speaker: str, other_name_at: int) -> tuple[int, int, int]:
    """Positions of the last first-person, third-party and second-person agent in ``left``."""
    third = max(_last(_THIRD, left), other_name_at)
    masked = _THIRD.sub(lambda m: " " * len(m.group(0)), left)
    first = _last(_FIRST, masked)
    if speaker in ("subject", "other"):
        third = max(third, _last(_PRONOUN_THIRD, masked))
    you = _last(_YOU, masked)
    return first, third, you


def frame_of(mention: MentionContext) -> tuple[Frame, str]:
    """The frame of one mention and the cue that decided it."""
    m = mention
    tag = (
        _TAG_RETRACT.search(m.left + m.phrase_raw.lower() + m.tail)
        or _VALIDITY_CLOSED.search(m.sentence_left)
        or _VALIDITY_CLOSED.search(m.tail)
    )
    if tag:
        return "retracted", tag.group(0).strip()
    if m.speaker == "other":
        return "not_about_subject", "another speaker's line"
    if _is_generic(m):
        return "generic_word", f"{m.phrase_raw!r} used as a common word"
    for text in (m.sentence, m.next_sentence if len(m.next_sentence.split()) <= 4 else ""):
        sarcasm = _SARCASM.search(text)
        if sarcasm:
            return "sarcasm", sarcasm.group(0)
    instruction = _INSTRUCTION.search(m.left) or (
        _REQUEST.search(m.sentence_left + m.phrase_raw.lower())
    )
    if not instruction and _STANDING.search(m.sentence) and re.match(
        r"^\W*(?:(?:so|ok|okay|hey|and|also|please|actually),?\s+)*(?:can|could|would|will)\s+you\b",
        m.sentence,
    ):
        instruction = _STANDING.search(m.sentence)  # "Can you … from here on?" asks for a habit
    if not instruction:
        if m.sentence.rstrip(" \"')]!.🙂😊").endswith("?") and not _CAUSAL.search(m.left):
            return "question", "asked, not stated"
        asked = _QUESTION_WORDS.search(m.sentence_left)
        if asked:
            return "question", asked.group(0)
    first, third, you = _agents(m.left, m.speaker, m.other_name_at)
    agent = max(first, third, you if m.speaker in ("assistant", "note") else -1)
    after_agent = m.left[agent:] if agent >= 0 else m.left
    window = m.window if len(m.window) < len(after_agent) else after_agent
    if not instruction:
        strong = _STRONG_HYPO.search(m.left)
        if strong:
            return "hypothetical", strong.group(0)
        weak = _WEAK_HYPO.search(after_agent[len(_agent_token(after_agent)) :])
        if weak or (agent >= 0 and _MODAL_AGENT.match(_agent_token(after_agent))):
            return "hypothetical", weak.group(0) if weak else _agent_token(after_agent)
        if _RIGHT_MODAL.search(m.right):
            return "hypothetical", m.right.split()[0]
        when = _WHEN_FUTURE.search(m.left)
        if when:
            return "hypothetical", when.group(0)
        if _PLANNED.search(after_agent) and _FUTURE_TIME.search(m.right):
            return "hypothetical", "a change still ahead"
    visit = _VISIT.search(window) or _VISIT_RIGHT.search(m.right)
    if visit:
        return "visit", visit.group(0).strip()
    if not m.negative_value:
        negation = _NEGATION.search(window[len(_agent_token(window)) :]) if window else None
        if negation:
            return "negated", negation.group(0)
    retraction = _RETRACT_WINDOW.search(window)
    if retraction:
        return "retracted", retraction.group(0)
    if _FROM_TO.search(window) and _TO_RIGHT.search(m.right):
        return "retracted", "from … to"
    if _CORRECTED.search(m.right) or _CORRECTED_NEXT.search(m.next_sentence):
        return "retracted", "corrected"
    if not m.negative_value and _RIGHT_RETRACT.search(m.right):
        return "retracted", m.right.strip()[:20]
    past = _PAST_STATE.search(window)
    if past:
        return "retracted", f"past state ({past.group(0)})"
    if _AT_MINE.search(m.left):
        return "asserted", "the subject's own place"
    if m.speaker == "assistant":
        if (
            (you >= 0 and you >= first and you >= third)
            or (first < 0 and third < 0 and (_YOU.search(m.sentence) or m.addressed))
            or (_YOU.search(m.right) and not _THIRD.search(m.right))
        ):
            return "asserted", "assistant restates the subject's statement"
        if first < 0 and third < 0 and m.line_has_ack:
            return "asserted", "assistant acknowledges it"
        return "not_about_subject", "the assistant's own words"
    if third > first or _FOR_OTHER.search(m.right):
        return "third_party", "someone else's fact"
    return "asserted", "stated as current"


def _agent_token(text: str) -> str:
    """The agent word ``text`` starts with (empty when it does not start with one)."""
    match = re.match(r"[\w']+", text)
    if match and (_FIRST.fullmatch(match.group(0)) or _YOU.fullmatch(match.group(0))):
        return match.group(0)
    return ""


def _is_generic(m: MentionContext) -> bool:
    given = m.phrase_given
    if " " in given.strip() or not given:
        return False
    raw = m.phrase_raw
    if m.weak and re.search(r"\b(?:a|an|every|each|any|some|no|another)\s*$", m.left):
        return True  # "a kestrel", "a window": a shortened name turned common noun
    if given[:1].isupper() and raw.islower() and any(c.isupper() for c in m.raw_sentence_left):
        return True  # "Kestrel" the company vs "a kestrel" the bird, in a cased sentence
    follower = re.match(r" ([a-z][\w'-]*)", m.right)
    if follower is None or follower.group(1) in _FUNCTION_WORDS:
        return False
    # "kestrel nesting boxes": a short alias run into a common noun. Capitals in mid-sentence
    # mark a proper noun ("first week at Leeds done"), so only a lower-case mention or one
    # that opens its sentence can be the common word.
    # After a definite determiner a one-word value names a kind of thing ("the Go services",
    # "the Lisbon office"), not the value itself.
    if re.search(r"\b(?:the|this|that|these|those|our|their)\s*$", m.left):
        return True
    return m.weak and (raw.islower() or m.sentence_start)
