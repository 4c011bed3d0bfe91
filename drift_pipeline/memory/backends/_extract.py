"""Extract dated, attributed slot facts from a session, and decide ADD/UPDATE/DELETE/NOOP.

Shared by ``fact_store`` and ``temporal_graph``. Only what a human speaker (role ``user``, or an
attributed line of a ``system`` summary) says about themselves counts. A sentence is skipped
whole when it is sarcastic or quoted/reported speech, and its statement part when that is
hypothetical or conditional; a question counts only for what it presupposes (``Since I'm engaged
now, can you…?``) or a standing request it makes (``Can you reply in French from now on?``);
a clause is skipped when its subject is someone else (``my sister…``, ``he…``).

Each sentence is read in context: a ``header: body`` sentence (``Heads up before you book:
I'm vegan``) gives the body a frame, and the sentence before can name a topic (``I changed my
mind about rent caps. I'm undecided.``), an option (``Could we use email? That works best for
me.``), a place (``Set my widget to Cork. That's home now.``) or a frame (``Where I work changed.
It's Acme now.``). A message typed all in lower case gets the names after strong cues
capitalised first. The clause rules live in ``_rules.py``; requests to the assistant in
``_instructions.py``. The module also says which fact families a question asks about, for the
retrieval ranking of both backends.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._instructions import (
    STANDING_MARKER,
    instruction_fact,
    workflow_fact,
)
from drift_pipeline.memory.backends._lexicon import THIRD_PARTY, TOPIC_CUE, word_set
from drift_pipeline.memory.backends._rules import (
    WORKPLACE_THIRD_PARTY,
    Fact,
    clean_topic,
    framed_facts,
    home_facts,
    positive_facts,
    preference_fact,
    retracted_facts,
    workplace_facts,
)
from drift_pipeline.memory.backends._text import (
    STOPWORDS,
    is_question,
    message_date,
    split_sentences,
    terms,
)

__all__ = [
    "ALL_FACTS_LIMIT",
    "Operation",
    "PreferenceEvidence",
    "QueryFocus",
    "Statement",
    "decide",
    "extract_statements",
    "normalise_value",
    "off_topic_views",
    "predicate_family",
    "predicate_hint",
    "query_families",
    "topic_overlap",
    "values_match",
]


class Operation(StrEnum):
    """What a statement does to the stored fact under its key (Mem0's vocabulary)."""

    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NOOP = "NOOP"


@dataclass(frozen=True)
class Statement:
    """A fact one speaker stated (or withdrew) about themselves on one date.

    Attributes:
        subject: Entity id of the speaker the fact is about.
        predicate: Normalised key (``works at``, ``diet``, ``instruction respond in``…).
        value: Surface value, compared loosely.
        text: Readable predicate phrase (``works at Acme Corp``); empty for a retraction.
        date: Calendar date of the message.
        retraction: The speaker withdrew the fact (``I am no longer vegetarian``).
        matchable: A retraction applies only when the stored value matches ``value``.

    """

    subject: str
    predicate: str
    value: str
    text: str
    date: str
    retraction: bool = False
    matchable: bool = True


_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|would(?! (?:rather|not|like to be (?:called|known as))\b)|could(?! not\b)|"
    r"might|maybe|perhaps|possibly|"
    r"probably|someday|some day|one day|imagine|imagining|suppose|supposing|hypothetically|"
    r"in theory|wish|wishing|"
    r"should(?! (?:mention|say|tell|add|note|point out|let you know|clarify))|"
    r"ought to|thinking (?:about|of)|considering|planning|plan to|plans to|hoping|hope to|"
    r"dream(?:ing)? (?:of|about)|want to(?! be (?:called|known as|addressed as))|wanna|"
    r"going to(?! (?:the|a|an|my|our|work|school|church|bed|class|classes|practice)\b)|"
    r"gonna|tempted|in case|what if)\b",
    re.IGNORECASE,
)
_ATTRIBUTED_LINE = re.compile(r"(?m)^(?P<speaker>[A-Za-z][\w.-]{0,63}): (?P<text>.+)$")
_MAY = re.compile(r"\bmay\b")  # lower-case only: "May" is a month
_SARCASM = re.compile(
    r"yeah,? right|\btotally\b|(?:^|\s)/s\b|\bas if\b|🙄|🙃|😒|😏|\bjust kidding\b|\bjk\b|"
    r"\bnot!|\bsure,? because\b|\boh,? great\b|\blol,? no\b|\bkidding\b|\boh,? sure\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"[\"“”«»]|(?<!\bI )\b(?:said|says|saying)\b|\b(?:told me|tells me|telling me|according to|"
    r"apparently|supposedly|allegedly|heard that|claims? (?:that|to)|claimed)\b|"
    r"\b(?:he|she|they|who) claims?\b",
    re.IGNORECASE,
)
_SINGLE_QUOTED = re.compile(r"(?:^|\s)'[A-Za-z][^']*'(?=[\s.,!?;:]|$)")
_CONTRACTIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bI'd rather\b", re.IGNORECASE), "I would rather"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "I would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "I will"),
    (re.compile(r"\bwe're\b", re.IGNORECASE), "we are"),
    (re.compile(r"\bwe've\b", re.IGNORECASE), "we have"),
    (re.compile(r"\bit's\b", re.IGNORECASE), "it is"),
    (re.compile(r"\bthat's\b", re.IGNORECASE), "that is"),
    (re.compile(r"\bcan't\b", re.IGNORECASE), "cannot"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will not"),
    (re.compile(r"\b(\w+)n't\b", re.IGNORECASE), r"\1 not"),
]
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|\s+[—–]\s+|\s+-\s+|"
    r",\s+(?:and|but|so|plus)\s+|"
    r",\s+(?:because|since|although|though|while|whereas)\s+(?=(?:I|we|my)\b)|"
    r"\s+(?:and|but|so|plus)\s+(?=(?:now\s+|then\s+)?(?:I|we|my)\b)|"
    r",\s+(?=(?:now\s+|then\s+)?(?:I|we|my)\b)"
)
_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Discourse openers that carry nothing ("Like I mentioned before, …", "Long story short, …").
_DISCOURSE_WORDS = (
    r"so|well|oh|ah|also|and|but|anyway|anyways|actually|btw|by the way|fyi|"
    r"just so you know|for the record|for what it is worth|quick question|quick update|"
    r"small update|big news|good news|personal news|bit of personal news|"
    r"hey|hi|hello|um|uh|hmm|honestly|basically|guess what|plus|"
    r"long story short|to be honest|to cut a long story short|heads up|still|"
    r"if (?:anyone|someone|you|people) (?:asks?|wonders?|wants to know)|"
    r"(?:like|as) I (?:mentioned|said|told you)(?: before| earlier| last time)?|"
    r"as (?:we|I) (?:discussed|talked about|agreed)(?: last time| before| earlier)?|"
    r"going back to our (?:earlier|last) (?:chat|conversation)|same as the other day|"
    r"small correction|correction|"
    # Interjections that open a sentence only when punctuation follows ("No meetings…" is not).
    r"ok so|okay so|"
    r"(?:no|nope|yes|yeah|yep|ok|okay|right|alright|great|perfect|cool|sorry|again|update|news|"
    r"yo|hiya|morning|evening)"
    r"(?=\s*[,.!:])"
)
_DISCOURSE = re.compile(rf"^(?:(?:{_DISCOURSE_WORDS})\b[\s,:!.\-]*)+", re.IGNORECASE)
_LEAD = re.compile(
    rf"^(?:(?:{_DISCOURSE_WORDS}|now|and now|lately|recently|these days|nowadays|"
    r"from now on|going forward|"
    r"as of (?:today|now|this \w+|last \w+)|since (?:last|this) \w+|"
    rf"(?:last|this|earlier this) (?:week|month|year|weekend|spring|summer|autumn|fall|winter|"
    rf"{_DAYS})|a (?:few|couple of) (?:days|weeks|months|years) ago|yesterday|today|"
    rf"in (?:{_MONTHS}|\d{{4}}))\b[\s,:!.\-]*)+",
    re.IGNORECASE,
)
_HEADER = re.compile(r"^(?P<header>[^:]{2,140}?):\s+(?P<body>\S.*)$")
# What a header or a preceding sentence says the next statement is about.
_FRAMES: list[tuple[str, re.Pattern[str]]] = [
    (
        "work",
        re.compile(
            r"\b(?:job|jobs|work|employer|company|workplace|career|bio|signature|desks?)\b",
            re.IGNORECASE,
        ),
    ),
    ("home", re.compile(r"\b(?:move|moved|moving|home|city|town|address|lease)\b", re.I)),
    (
        "health",
        re.compile(
            r"\b(?:health|health-wise|doctor|medical|diagnos\w*|results|check-?up|hospital|"
            r"physio\w*|injur\w*|scan|x-ray|mri|clinic|consultant|GP|specialist)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "constraint",
        re.compile(
            r"\b(?:constraints?|restrictions?|(?:keep|bear) (?:this|that|it) in mind|"
            r"factor (?:this|that|it) in|heads up|bookings?|plan(?:ning)? (?:the|a|for|anything)|"
            r"dinner|restaurant|form|never told you|allerg\w*|diet\w*)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\b(?:rule|rules|instruction|instructions|format|formatting|replies|responses|"
            r"from now on|going forward|starting today)\b",
            re.IGNORECASE,
        ),
    ),
    ("preference", re.compile(r"\b(?:you know me|my preference)\b", re.IGNORECASE)),
]
# "That works best for me" after "Could we go with email?"; "That's home now" after a place.
_PREFERS_THAT = re.compile(
    r"^(?:that|this|it)\s+(?:(?:really\s+)?(?:works|would work|is|suits me)\s+(?:best|better)"
    r"(?:\s+for me)?|suits me(?:\s+(?:best|better))?|is what I prefer|is my preference)\b",
    re.IGNORECASE,
)
_HOME_THAT = re.compile(
    r"^(?:that|this|it)\s+is\s+(?:my\s+|our\s+)?(?:home|where (?:I|we) live)"
    r"(?:\s+(?:now|these days|for good))?$",
    re.IGNORECASE,
)
_USE_THAT = re.compile(r"^(?:please\s+)?(?:use|call me)\s+(?:that|it)\b", re.IGNORECASE)
_NAME_PREFERRED = re.compile(r"^I\s+(?:\w+\s+)?prefer\s+(?P<v>[A-Z][a-z]+)$")
_CHOICE = re.compile(
    r"\b(?:go|stick|stay)\s+with\s+(?P<v>[^?,;]+)|\b(?:can|could|shall|should)\s+we\s+"
    r"(?:use|try|do|have|get)\s+(?P<w>[^?,;]+)",
    re.IGNORECASE,
)
_PLACE = re.compile(r"\b(?:to|in|at|for)\s+(?P<v>(?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_PRESUPPOSED = re.compile(
    r"^(?:since|now that|as|because)\s+(?P<c>I am\s+[^,]+?)(?:\s+now)?,", re.IGNORECASE
)


@dataclass
class _Context:
    """What one sentence leaves for the next: frames, a topic, a chosen option, a place."""

    frames: frozenset[str] = frozenset()
    topic: str | None = None
    choice: str | None = None
    place: str | None = None
    text: str = ""
    stated: bool = False


# Words added to a fact's index text so queries phrased differently still find it.
_PREDICATE_HINTS = {
    "works at": "job employer company workplace work career",
    "occupation": "job role profession career work title",
    "lives in": "home city town location live based country moved",
    "from": "origin hometown grew born",
    "name": "name called",
    "relationship status": "relationship partner married single dating engaged romantic",
    "health": "health medical condition situation",
    "age": "age old years",
}
_PREFIX_HINTS = (
    ("prefers ", "preference prefer"),
    ("favourite ", "favourite favorite preference"),
    ("opinion ", "opinion view think feel"),
    ("constraint ", "constraint restriction avoid cannot"),
    ("habit ", "activity habit hobby routine"),
    ("has ", "has owns"),
    ("instruction ", "instruction request rule always never"),
    ("workflow ", "work with you working preference"),
    ("completed ", "task completed done finished"),
)


def predicate_hint(predicate: str) -> str:
    """Return extra index words for a predicate (``works at`` → ``job employer company…``)."""
    if predicate in _PREDICATE_HINTS:
        return _PREDICATE_HINTS[predicate]
    for prefix, hint in _PREFIX_HINTS:
        if predicate.startswith(prefix):
            return hint
    return ""


# --- which facts a question is about -----------------------------------------------------------

_FAMILY_OF = {
    "name": "name", "works at": "work", "occupation": "work", "lives in": "home",
    "from": "home", "relationship status": "relationship", "health": "health", "age": "age",
}  # fmt: skip
_FAMILY_PREFIXES = (
    ("opinion ", "opinion"),
    ("constraint ", "constraint"),
    ("habit ", "habit"),
    ("prefers ", "preference"),
    ("favourite ", "preference"),
    ("instruction ", "instruction"),
    ("workflow ", "workflow"),
    ("completed ", "completed"),
)
_QUERY_FAMILIES: list[tuple[str, str]] = [
    ("name", r"\b(?:call|called|name|names|nickname|address|greet|greeting)\b"),
    (
        "work",
        r"\b(?:work|works|working|job|jobs|employer|employed|company|workplace|career|office|"
        r"colleagues?|signature|hired|boss)\b",
    ),
    (
        "home",
        r"\b(?:live|lives|living|city|town|home|move|moved|relocat\w*|based|address|"
        r"neighbou?rhood|local|nearby|search|where)\b",
    ),
    (
        "relationship",
        r"\b(?:relationship|partner|married|marriage|single|romantic|dating|engaged|spouse|"
        r"wife|husband)\b",
    ),
    (
        "health",
        r"\b(?:health|healthy|medical|doctor|condition|illness|ill|injur\w*|recover\w*|"
        r"physical|activity|activities|hike|exercise)\b",
    ),
    (
        "opinion",
        r"\b(?:view|views|opinion|opinions|think|thinks|feel|feels|stance|stand|position|believe)\b",
    ),
    (
        "constraint",
        r"\b(?:constraints?|restrictions?|diet|dietary|allerg\w*|food|eat|eats|drink|dinner|lunch|"
        r"restaurant|meal|book|booking|respect\w*|avoid\w*|schedul\w*|meetings?|plan|planning|"
        r"trip|travel|venue|attend)\b",
    ),
    (
        "habit",
        r"\b(?:habits?|routines?|hobby|hobbies|spend|weekend|saturday|sunday|morning|activity|"
        r"free time)\b",
    ),
    (
        "preference",
        r"\b(?:prefer\w*|like|likes|favou?rite|wants?|suits?|contact\w*|reach|units?|venues?|"
        r"answers?|format|laid out|layout|long)\b",
    ),
    (
        "instruction",
        r"\b(?:instructions?|rules?|format\w*|reply|replies|respond|response|answer|answers|"
        r"style|tone|write|message)\b",
    ),
    ("workflow", r"\b(?:like you to|work with|working|research|help|assist)\b"),
    ("completed", r"\b(?:tasks?|completed?|done|finished|to-?do)\b"),
]
_QUERY_FAMILY_PATTERNS = [(family, re.compile(p, re.IGNORECASE)) for family, p in _QUERY_FAMILIES]


def predicate_family(predicate: str) -> str:
    """The family of a key (``works at`` → ``work``, ``opinion remot work`` → ``opinion``)."""
    if predicate in _FAMILY_OF:
        return _FAMILY_OF[predicate]
    for prefix, family in _FAMILY_PREFIXES:
        if predicate.startswith(prefix):
            return family
    return "other"


def query_families(query: str) -> frozenset[str]:
    """The fact families a question asks about, from its wording (``Where … work`` → work)."""
    return frozenset(family for family, pattern in _QUERY_FAMILY_PATTERNS if pattern.search(query))


def topic_overlap(predicate: str, query_terms: frozenset[str]) -> float:
    """Share of an opinion key's topic terms that the question names (0 for other keys)."""
    if not predicate.startswith("opinion "):
        return 0.0
    topic = predicate.split()[1:]
    return sum(1 for term in topic if term in query_terms) / len(topic) if topic else 0.0


# A memory this small can afford to show every current fact; past it, the ranked head is shown.
ALL_FACTS_LIMIT = 40


@dataclass(frozen=True)
class QueryFocus:
    """What a question is about: the fact families it names and its content terms."""

    families: frozenset[str]
    terms: frozenset[str]

    @classmethod
    def of(cls, query: str) -> QueryFocus:
        """Read the families and terms of ``query``."""
        return cls(query_families(query), frozenset(terms(query)))


def off_topic_views(predicates: list[str], query_terms: frozenset[str]) -> frozenset[str]:
    """Opinion keys about another topic than the one the question names.

    ``What is X's view on electric cars?`` names one topic; the views on other topics would only
    put a stance word ("skeptical") beside the question's topic, so they are left out.
    """
    overlaps = {p: topic_overlap(p, query_terms) for p in predicates if p.startswith("opinion ")}
    best = max(overlaps.values(), default=0.0)
    if best < 0.5:
        return frozenset()
    return frozenset(p for p, share in overlaps.items() if share < best)


# --- values and operations ---------------------------------------------------------------------


def normalise_value(value: str) -> str:
    """Lower-case a value to its words, without a leading article."""
    words = re.findall(r"[a-z0-9]+", value.lower())
    if words and words[0] in {"the", "a", "an"}:
        words = words[1:]
    return " ".join(words)


def values_match(stored: str, stated: str) -> bool:
    """Return True when two values name the same thing (equal, or one contains the other)."""
    left, right = normalise_value(stored), normalise_value(stated)
    if not left or not right:
        return False
    return left == right or f" {right} " in f" {left} " or f" {left} " in f" {right} "


def decide(current_value: str | None, statement: Statement) -> Operation:
    """Decide what ``statement`` does given the value currently stored under its key."""
    if statement.retraction:
        if current_value is None:
            return Operation.NOOP
        if (
            statement.matchable
            and statement.value
            and not values_match(current_value, statement.value)
        ):
            return Operation.NOOP
        return Operation.DELETE
    if current_value is None:
        return Operation.ADD
    if normalise_value(current_value) == normalise_value(statement.value):
        return Operation.NOOP
    return Operation.UPDATE


class PreferenceEvidence:
    """How often each preference value was mentioned since its slot last changed.

    Preferences show in passing and not always consistently ("As usual, email please" after
    weeks of "I prefer phone calls"), so one mention does not overturn a preference the speaker
    has stated again and again: a challenger takes over a preference slot once it has been
    mentioned, since the slot was last set, as often as the current value has been. A first
    value is taken at once; explicit state (employer, city, …) is not weighed at all.
    """

    def __init__(self) -> None:
        self._strength: dict[tuple[str, str], int] = {}
        self._pending: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}

    def admits(self, current_value: str | None, statement: Statement) -> bool:
        """Record one mention; return whether the statement may change the slot now."""
        if statement.retraction or predicate_family(statement.predicate) != "preference":
            return True
        key = (statement.subject, statement.predicate)
        value = normalise_value(statement.value)
        pending = self._pending.setdefault(key, {})
        count = pending.get(value, (0, ""))[0] + 1
        held = normalise_value(current_value) if current_value is not None else None
        if held == value:
            self._strength[key] = self._strength.get(key, 0) + 1
            return True
        if held is None or count >= self._strength.get(key, 1):
            # The slot takes this value; evidence for the others starts again.
            self._strength[key] = count
            self._pending[key] = {}
            return True
        pending[value] = (count, statement.text)
        return False

    def pending_lines(self) -> list[str]:
        """Mentions that have not (yet) changed a slot, one line per value, for the snapshot."""
        return [
            f"{subject}: {text} (mentioned {count}x, not current)"
            for (subject, _), pending in sorted(self._pending.items())
            for _, (count, text) in sorted(pending.items())
        ]


# --- extraction --------------------------------------------------------------------------------


def extract_statements(messages: Sequence[Message]) -> list[Statement]:
    """Return, in order, the facts the human speakers of a session state or withdraw."""
    found: list[Statement] = []
    for speaker, content, date in _human_turns(messages):
        for fact in _message_facts(content):
            found.append(
                Statement(
                    subject=speaker,
                    predicate=fact.predicate,
                    value=fact.value,
                    text=fact.text,
                    date=date,
                    retraction=fact.retraction,
                    matchable=fact.matchable,
                )
            )
    return found


def _human_turns(messages: Sequence[Message]) -> list[tuple[str, str, str]]:
    """``(speaker, text, date)`` of what humans said.

    Turns with role ``user``, plus the ``name: text`` lines of a ``system`` message: that is how a
    pre-compressed session (the summary gate) arrives, one attributed sentence per line.
    """
    turns: list[tuple[str, str, str]] = []
    for message in messages:
        date = message_date(message["timestamp"])
        if message["role"] == "user":
            turns.append((message["speaker"], message["content"], date))
        elif message["role"] == "system":
            for line in _ATTRIBUTED_LINE.finditer(message["content"]):
                turns.append((line.group("speaker"), line.group("text"), date))
    return turns


# Cues after which a casual all-lower-case message names a place, an employer or a name.
_NAME_CUE = re.compile(
    r"\b(?:live in|living in|lives in|moved to|move to|moving to|based in|here in|settled in|"
    r"lease in|place in|flat in|apartment in|off in|widget to|move from|from|"
    r"work at|work for|working at|working for|joined|joining|job at|offer from|notice at|"
    r"day at|week at|i'm at|i am at|hr at|manager at|boss at|team at|"
    r"call me|go by|be called|it's|it is)\s+"
    r"(?P<name>[a-z][\w'-]*(?:\s+(?:&\s+)?[a-z][\w'-]*){0,2})"
)
_NOT_NAME_WORD = word_set(
    """a an the my our your this that these those it its some any no now here there home work
    town city again today tonight tomorrow yesterday last next from since and or but so to in
    on at by for with of me you him her them us i we they he she not one two three week month
    year weekend monday tuesday wednesday thursday friday saturday sunday morning evening night
    is are was were be been being soon later then too also just still already please thanks"""
)


def _truecase(text: str) -> str:
    """Capitalise the names after strong cues in a message typed all in lower case.

    ``i live in kyoto now`` → ``i live in Kyoto now``; a message with any capital is left as is.
    """
    if any(char.isupper() for char in text):
        return text

    def capitalise(match: re.Match[str]) -> str:
        words = match.group("name").split()
        kept: list[str] = []
        for word in words:
            if word == "&":
                kept.append(word)
                continue
            if word in _NOT_NAME_WORD or word in STOPWORDS:
                break
            kept.append(word[:1].upper() + word[1:])
        while kept and kept[-1] == "&":
            kept.pop()
        if not kept:
            return match.group(0)
        rest = words[len(kept) :]
        start = match.start("name") - match.start()
        return match.group(0)[:start] + " ".join([*kept, *rest])

    return _NAME_CUE.sub(capitalise, text)


def _message_facts(content: str) -> list[Fact]:
    text = _truecase(content.replace("’", "'").replace("‘", "'"))
    sentences = split_sentences(text)
    skipped: set[int] = set()
    for index, sentence in enumerate(sentences):
        if _SARCASM.search(sentence):
            skipped.add(index)
            # A bare marker ("Yeah, right.", "🙄") mocks the sentence before it.
            if len(_SARCASM.sub("", sentence).split()) <= 3:
                skipped.add(index - 1)
    facts: list[Fact] = []
    previous = _Context()
    for index, sentence in enumerate(sentences):
        if index in skipped or _is_reported(sentence):
            previous = _Context()
            continue
        following = sentences[index + 1] if index + 1 < len(sentences) else ""
        found, previous = _sentence_facts(sentence, previous, following)
        facts.extend(found)
    return facts


def _sentence_facts(raw: str, previous: _Context, following: str) -> tuple[list[Fact], _Context]:
    """The facts of one sentence, given what the sentence before it left."""
    sentence = _DISCOURSE.sub("", _expand(raw).strip()).strip().rstrip(" .!…").strip()
    standing = STANDING_MARKER.search(sentence)
    if standing and standing.start() > 0:
        sentence = sentence[: standing.start()].strip()
    header, body = "", sentence
    split = _HEADER.match(sentence)
    if split and len(split.group("header").split()) <= 14:
        header = _DISCOURSE.sub("", split.group("header")).strip()
        body = _DISCOURSE.sub("", split.group("body")).strip()
    own_frames = _frames(header)
    carried = previous.frames if not previous.stated else frozenset()
    frames = own_frames | carried
    topic = _topic(header) or _topic(body) or (None if previous.stated else previous.topic)
    context = _Context(
        frames=own_frames | _frames(body),
        topic=topic,
        choice=_choice(body),
        place=_place(body),
        text=sentence,
    )
    if is_question(raw):
        found = _question_facts(body)
    else:
        found = _statement_facts(sentence, header, body, frames, topic, previous, following)
        found = found or ([] if standing is None else _standing_facts(body))
    context.stated = bool(found)
    return found, context


def _statement_facts(
    sentence: str,
    header: str,
    body: str,
    frames: frozenset[str],
    topic: str | None,
    previous: _Context,
    following: str,
) -> list[Fact]:
    # Anaphora: "That works best for me", "That's home now", "I prefer Sam. Please use that."
    if previous.choice and _PREFERS_THAT.match(body):
        return preference_fact(previous.choice)
    if previous.place and _HOME_THAT.match(body):
        return home_facts(previous.place)
    named = _NAME_PREFERRED.match(body)
    if named and _USE_THAT.match(_DISCOURSE.sub("", following.strip())):
        value = named.group("v")
        return [Fact("name", value, f"goes by {value}")]
    scope = f"{header} {previous.text}"
    instruction = instruction_fact(sentence, context=previous.text)
    if instruction is None and header:
        instruction = instruction_fact(body, ruled="instruction" in _frames(header), context=scope)
    if instruction is not None:
        return [instruction]
    workflow = workflow_fact(sentence) or (workflow_fact(body) if header else None)
    if workflow is not None:
        return [workflow]
    if _is_hypothetical(body):
        return []
    found: list[Fact] = []
    for clause in _clauses(body):
        found.extend(_clause_facts(clause, frames, topic))
    return found


def _standing_facts(body: str) -> list[Fact]:
    """``Remember to X; that's how I like it``: a request the marker makes standing."""
    workflow = workflow_fact(body, standing=True)
    return [workflow] if workflow is not None else []


def _question_facts(body: str) -> list[Fact]:
    """What a question still states.

    ``Since I'm engaged now, can you…?`` presupposes a fact; ``Can you X from now on?`` is a
    standing request phrased as a question.
    """
    presupposed = _PRESUPPOSED.match(body)
    if presupposed:
        return _clause_facts(presupposed.group("c"), frozenset(), None)
    instruction = instruction_fact(body.rstrip(" ?"))
    return [instruction] if instruction is not None else []


def _clause_facts(clause: str, frames: frozenset[str], topic: str | None) -> list[Fact]:
    clause = _LEAD.sub("", clause).strip().rstrip(".!…").strip()
    if not clause:
        return []
    workplace = WORKPLACE_THIRD_PARTY.match(clause)
    if workplace:
        return workplace_facts(workplace.group("v"))
    if THIRD_PARTY.match(clause):
        return []
    withdrawn = retracted_facts(clause)
    if withdrawn is not None:
        return withdrawn
    return positive_facts(clause) or framed_facts(clause, frames, topic)


def _frames(text: str) -> frozenset[str]:
    if not text:
        return frozenset()
    return frozenset(name for name, pattern in _FRAMES if pattern.search(text))


def _topic(text: str) -> str | None:
    match = TOPIC_CUE.search(text) if text else None
    if match is None:
        return None
    topic = clean_topic(match.group("topic"))
    return topic if topic and terms(topic) else None


def _choice(text: str) -> str | None:
    match = _CHOICE.search(text)
    if match is None:
        return None
    return (match.group("v") or match.group("w") or "").strip() or None


def _place(text: str) -> str | None:
    places = [m.group("v") for m in _PLACE.finditer(text)]
    return places[-1] if places else None


def _expand(sentence: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def _clauses(sentence: str) -> list[str]:
    return [part for part in _CLAUSE_BREAK.split(sentence) if part and part.strip()]


def _is_hypothetical(sentence: str) -> bool:
    return bool(_HYPOTHETICAL.search(sentence) or _MAY.search(sentence))


def _is_reported(sentence: str) -> bool:
    return bool(_REPORTED.search(sentence) or _SINGLE_QUOTED.search(sentence))
