"""Extract dated, attributed slot facts from a session, and decide ADD/UPDATE/DELETE/NOOP.

Shared by ``fact_store`` and ``temporal_graph``. Only what a human speaker (role ``user``, or an
attributed line of a ``system`` summary) says about themselves counts. A sentence is skipped
whole when it is a question, hypothetical or conditional, sarcastic, or quoted/reported speech;
a clause is skipped when its subject is someone else (``my sister…``, ``he…``). The clause rules
themselves live in ``_rules.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._instructions import instruction_fact
from drift_pipeline.memory.backends._lexicon import (
    MONTHS,
    THIRD_PARTY,
    TRANSIENT_WORDS,
    WEEKDAYS,
    strip_lead_ins,
)
from drift_pipeline.memory.backends._rules import Fact, positive_facts, retracted_facts
from drift_pipeline.memory.backends._slips import mend_slips
from drift_pipeline.memory.backends._stance import (
    choice_facts,
    implied_facts,
    naming_facts,
    stance_fact,
    strip_hedges,
)
from drift_pipeline.memory.backends._text import (
    CaseModel,
    is_question,
    message_date,
    split_statements,
)

__all__ = [
    "REMARK_PREFIX",
    "Operation",
    "Statement",
    "dated_by_first_mention",
    "decide",
    "extract_statements",
    "insincere",
    "normalise_value",
    "predicate_hint",
    "slot_topics",
    "succeed",
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
        said: The whole sentence, when the fact was read from one clause of it: the rest of
            the sentence often says what the clause is about ("having read up on nuclear
            power, I am sceptical"); empty when ``text`` says all the sentence did.
        instead_of: The value this one succeeds ("I left Acme for Initech"); see
            :func:`succeed`.

    """

    subject: str
    predicate: str
    value: str
    text: str
    date: str
    retraction: bool = False
    matchable: bool = True
    said: str = ""
    instead_of: str = ""


_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|would(?! rather| like| prefer)|could|might|maybe|perhaps|possibly|"
    r"probably|someday|some day|one day|imagine|imagining|(?<!\bI )suppose|supposing|"
    r"hypothetically|"
    r"in theory|wish|wishing|"
    r"(?<!you )should(?! (?:mention|say|tell|add|note|point out|let you know|clarify))|"
    r"ought to|thinking (?:about|of)|considering|planning|plan to|plans to|hoping|hope to|"
    r"dream(?:ing)? (?:of|about)|want to|wants to|wanna|"
    r"going to(?! (?:the|a|an|my|our|work|school|church|bed|class|classes|practice)\b)|"
    r"gonna|tempted|in case|what if)\b",
    re.IGNORECASE,
)
_ATTRIBUTED_LINE = re.compile(r"(?m)^(?P<speaker>[A-Za-z][\w.-]{0,63}): (?P<text>.+)$")
_MAY = re.compile(r"\bmay\b")  # lower-case only: "May" is a month
_SARCASM = re.compile(
    r"yeah,? right|\btotally\b|(?:^|\s)/s\b|\bas if\b|🙄|🙃|😒|😏|\bjust kidding\b|\bjk\b|"
    r"\bnot!|\bsure,? because\b|\boh,? great\b|\blol,? no\b|\bkidding\b|\b(?:I am|I'm) joking\b|"
    r"\bonly joking\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"[\"“”«»]|(?<!\bI )\b(?:said|says|saying)\b|\b(?:told me|tells me|telling me|according to|"
    r"apparently|supposedly|allegedly|heard that|claims?|claimed)\b",
    re.IGNORECASE,
)
# The speaker's own words reported by themselves: "I handed HR a note saying I am …".
_OWN_REPORT = re.compile(
    r"\bI\b[^.!?\"“”«»]*?\b(?:saying|said|told \w+(?: \w+)?|to say)\s+(?:that\s+)?I\b"
    r"(?![^\"“”«»]*[\"“”«»])",
    re.IGNORECASE,
)
# Someone telling the speaker about the speaker: "the doctor says I am…", "the clinic confirmed
# on Wednesday that I am…". Quoted words are someone's own, never the speaker's.
_TOLD_OF_ME = re.compile(
    r"^(?P<who>[^\"“”«»]{1,60}?)\s+(?:says|said|has said|tells me|told me|has told me|"
    r"confirms|confirmed|has confirmed)(?:\s+(?:on|this|last|in)\s+\w+)?,?\s+(?:that\s+)?"
    r"(?P<rest>(?:I|I'm|I've)\b[^\"“”«»]*)$",
    re.IGNORECASE,
)
# Those whose word on the speaker's health is the record of it.
_RECORD_KEEPER = re.compile(
    r"\b(?:doctor|doctors|GP|clinic|hospital|surgery|physio\w*|therapist|specialist|consultant|"
    r"nurse|dentist|surgeon|cardiologist|dermatologist|scan|scans|x-rays?|MRI|test results|"
    r"blood tests?|results|tests?)\b",
    re.IGNORECASE,
)
# Who heard it second-hand, or doubts it, is no source.
_HEARSAY = re.compile(
    r"\b(?:apparently|supposedly|allegedly|rumou?rs?|heard|claims?|claimed|I|joke|joking)\b",
    re.IGNORECASE,
)
_SEEN_BY_ME = re.compile(
    r"\s+(?:that\s+|who\s+|whom\s+)?I\s+(?:saw|see|visited|consulted|went to|go to|spoke to|"
    r"spoke with|have been seeing|was referred to|got referred to)\b[^\"“”«»]*$",
    re.IGNORECASE,
)
# Speech in single quotes; one or two quoted words are a label ("I ticked 'separated' on a form").
_SINGLE_QUOTED = re.compile(r"(?:^|\s)'[A-Za-z][^'\s]*(?:\s[^'\s]+){2,}'(?=[\s.,!?;:]|$)")
_CONTRACTIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bI'd rather\b", re.IGNORECASE), "I would rather"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "I would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "I will"),
    (re.compile(r"\bwe're\b", re.IGNORECASE), "we are"),
    (re.compile(r"\bwe've\b", re.IGNORECASE), "we have"),
    (re.compile(r"\bcan't\b", re.IGNORECASE), "cannot"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will not"),
    (re.compile(r"\b(\w+)n't\b", re.IGNORECASE), r"\1 not"),
]
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|\s+[—–]\s+|\s+-\s+|"
    r",?\s+(?:and|but|so|because|since|although|though|while|whereas|plus)\s+(?=(?:I|we|my)\b)|"
    r",\s+(?=(?:I|we|my)\b)|"
    # "…and I keep meaning to mention it, but bullet points is my usual choice, so there you
    # go": after a comma, "but" and "so" open a clause of their own whatever its subject.
    r",\s+(?:but|so)\s+"
)
# "I wanted to let you know that …": a frame around what is said, not part of it.
_FRAME_WORDS = (
    r"I (?:just )?(?:wanted|want) to (?:let you know|tell you|say|mention|add)(?: that)?|"
    r"I (?:just )?(?:wanted|want) you to know(?: that)?|"
    r"I should (?:mention|say|add|tell you)(?: that)?|(?:I am )?not sure I mentioned (?:it|this)"
    r"(?:,? but)?|let me correct (?:that|this)"
)
_FRAME = re.compile(rf"^(?:{_FRAME_WORDS})\b[\s,:]*", re.IGNORECASE)
# A tail that offers context, not a condition: "…, in case that matters for anything".
_IN_CASE_TAIL = re.compile(
    r",?\s+(?:just )?in case \w+ (?:matters|helps|is (?:useful|relevant|important))"
    r"\b[^.!?]*[.!?]*$",
    re.IGNORECASE,
)
_LEAD = re.compile(
    r"^(?:(?:so|well|oh|ah|also|and|but|anyway|anyways|actually|btw|by the way|fyi|yo|hiya|heya|"
    r"(?:good )?(?:morning|afternoon|evening)|"
    r"just so you know|for the record|quick update|small update|update|news|big news|"
    r"good news|ok|okay|yeah|yes|yep|no|nope|hey|hi|hello|um|uh|hmm|honestly|basically|"
    r"guess what|plus|lately|recently|these days|nowadays|from now on|going forward|"
    r"(?:as )?(?:it )?turns? out(?: that)?|"
    rf"{_FRAME_WORDS}|"
    r"as of (?:today|now|this \w+|last \w+)|since (?:last|this) \w+|"
    rf"(?:last|this|earlier this) (?:week|month|year|weekend|spring|summer|autumn|fall|winter|"
    rf"{WEEKDAYS})|a (?:few|couple of) (?:days|weeks|months|years) ago|yesterday|today|"
    rf"in (?:{MONTHS}|\d{{4}}))\b[\s,:!.\-]*)+",
    re.IGNORECASE,
)

# Words added to a fact's index text so queries phrased differently still find it.
_PREDICATE_HINTS = {
    "works at": "job employer company workplace work career",
    "occupation": "job role profession career work title",
    "lives in": "home city town location live based country moved",
    "from": "origin hometown grew born",
    "name": "name called",
    "relationship status": "relationship partner married single dating engaged",
    "diet": "diet food eat meal",
    "age": "age old years",
    "health": "health medical condition recovering",
}
_PREFIX_HINTS = (
    ("prefers ", "preference prefer"),
    ("favourite ", "favourite favorite preference"),
    ("opinion ", "opinion view think feel"),
    ("constraint ", "constraint restriction avoid cannot"),
    ("activity ", "activity habit hobby routine"),
    ("habit ", "habit routine"),
    ("health ", "health medical condition"),
    ("has ", "has owns"),
    ("instruction ", "instruction request rule always never"),
)


# What a remark is about, from the words it uses: the same index words a slot fact of that kind
# gets, so "I gave notice at Acme and moved over to Initech" answers a question about work.
_TOPIC_CUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(cues, re.IGNORECASE), hint)
    for cues, hint in (
        (
            r"\b(?:job|jobs|work|works|worked|working|employer|company|office|hired|notice|"
            r"colleagues?|promot\w*|resign\w*|quit|career|salary|contract|position|role|team|"
            r"desk|boss|manager|payslip|pay slip|paycheck|pay cheque|payroll|wages|shifts?|"
            r"onboarding|badge|interview\w*|employ\w*|laid off|redundan\w*|HR|clients?)\b",
            _PREDICATE_HINTS["works at"],
        ),
        (
            r"\b(?:mov(?:e|ed|ing)|relocat\w*|live|lives|lived|living|flat|apartment|house|home|"
            r"city|town|neighbou?rhood|rent|commute|settl\w*|landlord|lease|postcode|zip code|"
            r"movers|unpack\w*|registered|GP|council|local|residen\w*|address)\b",
            _PREDICATE_HINTS["lives in"],
        ),
        (
            r"\b(?:every|each|daily|weekly|nightly|routine|habit|usually|regularly|"
            r"took up|taken up|taking up|started|practi[cs]e|practi[cs]ing)\b",
            "habit routine activity hobby",
        ),
        (
            r"\b(?:cannot|can not|avoid\w*|allerg\w*|intoleran\w*|never|no longer|restrict\w*|"
            r"(?:do|does) not (?:eat|drink|fly|take)|free|for me)\b",
            "constraint restriction avoid cannot diet",
        ),
        (
            r"\b(?:prefer\w*|rather|favou?rite|enjoy\w*|like|likes|love|loves|best for me|"
            r"go for|stick (?:to|with)|choos\w*|appreciate)\b",
            "preference prefer favourite like",
        ),
        (
            r"\b(?:doctor|diagnos\w*|surgery|injur\w*|condition|health|medication|therapy|"
            r"recover\w*|check[- ]?ups?|pain|chronic|asthma|diabet\w*|migraines?|physio\w*|"
            r"pharmac\w*|prescri\w*|test results|symptoms?|treatment|blood pressure|hospital|"
            r"broken|fracture\w*|sprain\w*|illness|ill|sick|cast|clinic|consultant|scan)\b",
            _PREDICATE_HINTS["health"],
        ),
        (
            r"\b(?:think|feel|opinion|view|believe|sceptic\w*|skeptic\w*|favou?r of|against|"
            r"optimistic|pessimistic|convinced|undecided|on the fence|count me)\b",
            "opinion view think feel",
        ),
        (
            r"\b(?:married|single|divorced|dating|engaged|partner|girlfriend|boyfriend|wife|"
            r"husband|relationship|broke up|separated|widowed|fianc\w*|wedding|proposed|"
            r"long-distance|moved in together|anniversary)\b",
            _PREDICATE_HINTS["relationship status"],
        ),
        (
            r"\b(?:call me|my name|the name|name I|go by|goes by|greet\w*|address me|nickname)\b",
            _PREDICATE_HINTS["name"],
        ),
        (r"\b(?:when you|you to|you always|you never)\b", "instruction request work"),
        (
            r"\b(?:your (?:answers|replies|messages|responses)|you(?: would| had|'d) better|"
            r"format\w*|tone|jargon|bullet\w*|paragraphs?|headings?|emojis?|TL;DR|summary|"
            r"action list|British English|American English|plain language)\b",
            "instruction request rule format replies standing",
        ),
    )
)


@lru_cache(maxsize=8192)  # a memory indexes the same predicates again at every restatement
def predicate_hint(predicate: str) -> str:
    """Return extra index words for a predicate (``works at`` → ``job employer company…``).

    A remark (``said …``) gets the words of every topic its own words point to.
    """
    if predicate in _PREDICATE_HINTS:
        return _PREDICATE_HINTS[predicate]
    if predicate.startswith(_REMARK_PREFIX):
        said = predicate.removeprefix(_REMARK_PREFIX)
        return " ".join(hint for cues, hint in _TOPIC_CUES if cues.search(said))
    for prefix, hint in _PREFIX_HINTS:
        if predicate.startswith(prefix):
            return hint
    return ""


def _names_its_topic(predicate: str) -> bool:
    """Whether a fact's own text says what it is about (``works at X``, ``prefers X``)."""
    return predicate in _PREDICATE_HINTS or predicate.startswith("prefers ")


def dated_by_first_mention(predicate: str) -> bool:
    """Whether a restated fact keeps the date it was first stated.

    An employer, a home, a name or a status started on a day that a later "I still work at
    Acme" does not move. A preference, an opinion or a habit is as current as its latest
    mention: dated by it, a reader comparing two of them sees which one was said last.
    """
    return predicate in _PREDICATE_HINTS


def slot_topics(predicate: str) -> frozenset[str]:
    """The slots dated by their first mention (employer, home…) a fact under ``predicate`` is about.

    A slot is about itself; a remark is about every such slot whose topic words its own words
    point to ("the movers unloaded the boxes in Porto" is about ``lives in``).
    """
    if predicate in _PREDICATE_HINTS:
        return frozenset((predicate,))
    if not predicate.startswith(_REMARK_PREFIX):
        return frozenset()
    hints = predicate_hint(predicate)
    return frozenset(slot for slot, hint in _PREDICATE_HINTS.items() if hint in hints)


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


# The slots a successor may belong to, the first the one it goes to when nothing says otherwise:
# "I left X for Y" names a new employer more often than a new home.
_SUCCESSOR_SLOTS = ("works at", "lives in")


def succeed(statement: Statement, held: Callable[[str], str | None]) -> Statement:
    """Put a successor ("I left Lisbon for Porto") under the slot that held what it succeeds.

    Args:
        statement: Any statement; one without ``instead_of`` is returned as it is.
        held: The value the speaker currently holds under a predicate, or ``None``.

    """
    if not statement.instead_of or statement.predicate not in _SUCCESSOR_SLOTS:
        return statement
    holding = [
        slot
        for slot in _SUCCESSOR_SLOTS
        if (value := held(slot)) is not None and values_match(value, statement.instead_of)
    ]
    if len(holding) != 1 or holding[0] == statement.predicate:
        return statement
    # Both slots' predicates read as the phrase a line shows: "works at X", "lives in X".
    slot = holding[0]
    return replace(statement, predicate=slot, text=f"{slot} {statement.value}")


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


def extract_statements(
    messages: Sequence[Message], case: CaseModel | None = None
) -> list[Statement]:
    """Return, in order, the facts the human speakers of a session state or withdraw.

    Args:
        messages: One session.
        case: The memory's model of which words are names. It learns from every message of the
            session first (the assistant's replies included), then recases the sentences typed
            without case ("i moved to lisbon") so that the rules see the names in them.
    """
    if case is not None:
        for message in messages:
            case.learn(message["content"])
    found: list[Statement] = []
    for speaker, content, date in _human_turns(messages):
        for fact, said in _message_facts(content, case):
            found.append(
                Statement(
                    subject=speaker,
                    predicate=fact.predicate,
                    value=fact.value,
                    text=fact.text,
                    date=date,
                    retraction=fact.retraction,
                    matchable=fact.matchable,
                    said=said,
                    instead_of=fact.instead_of,
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


def _message_facts(content: str, case: CaseModel | None) -> list[tuple[Fact, str]]:
    """The facts of one message, each with the sentence it was read from when that says more."""
    text = mend_slips(
        content.replace("’", "'").replace("‘", "'"), case.is_name if case is not None else None
    )
    sentences = split_statements(text)
    if case is not None:
        sentences = [case.recase(sentence) for sentence in sentences]
    skipped = insincere(sentences)
    facts: list[tuple[Fact, str]] = []
    for index, sentence in enumerate(sentences):
        if index not in skipped:
            facts.extend(_sentence_facts(sentence))
    return facts


@lru_cache(maxsize=8192)
def _sentence_facts(sentence: str) -> tuple[tuple[Fact, str], ...]:
    """The facts of one sentence of a message, not a mocking one, read once per process.

    People say the same sentences again (greetings, standing preferences restated, asides), and
    what a sentence states depends on its text alone: the memory's own state (the names it has
    learnt) shaped the text before it got here, and whether a neighbour mocks it is decided
    before. Facts are frozen, so the answer is shared.
    """
    if is_question(sentence):
        return ()
    if _is_reported(sentence):
        # Read past an opening frame ("Not sure I mentioned it, but the doctor says …").
        told = _TOLD_OF_ME.match(_FRAME.sub("", strip_lead_ins(_LEAD.sub("", sentence))))
        # "The specialist I saw last week says …": whom the speaker saw is no hearsay.
        who = _SEEN_BY_ME.sub("", told.group("who")) if told else ""
        if told is None or _HEARSAY.search(who) or not _RECORD_KEEPER.search(who):
            return ()
        # "The doctor says I am recovering from pneumonia": news of the speaker's own health,
        # told by whoever keeps the record of it; read as the speaker saying it. Anyone
        # else's word about them ("he told me I am vegan") stays theirs.
        sentence = told.group("rest")
    return tuple(_read_sentence(sentence))


def _read_sentence(sentence: str) -> list[tuple[Fact, str]]:
    """The facts of one sincere sentence, each with the sentence when it was read from a clause."""
    sentence = _IN_CASE_TAIL.sub("", _expand(sentence))
    instruction = instruction_fact(sentence)
    if instruction is None:
        unframed = strip_lead_ins(_FRAME.sub("", strip_lead_ins(sentence)))
        if unframed != sentence:
            instruction = instruction_fact(unframed)
    if instruction is not None:
        return [(instruction, "")]
    # A hedge that opens the sentence ("if I am honest", "I suppose") is no condition.
    sentence = strip_hedges(_FRAME.sub("", strip_hedges(_LEAD.sub("", sentence))))
    unframed = strip_hedges(_LEAD.sub("", strip_lead_ins(sentence)))
    chosen = choice_facts(unframed) or naming_facts(unframed) or naming_facts(sentence)
    if chosen:
        return [(fact, "") for fact in chosen]
    if _is_hypothetical(sentence):
        return []
    # Before lead-ins are dropped: "on remote work, I am sceptical" opens with its topic.
    stance = stance_fact(sentence) or stance_fact(unframed)
    if stance is not None:
        return [(stance, "")]
    clauses = _clauses(sentence)
    found = [fact for clause in clauses for fact in _clause_facts(clause)]
    if found:
        # A fact read from one clause of several is shown with its sentence, which may name
        # what the clause is about ("having read up on it, I am sceptical"). A fact that names
        # its own topic (an employer, a home, a status, a preference) is shown alone: the rest
        # of the sentence would only wrap it in asides and hedges. A retraction shows nothing.
        said = _said(sentence) if len(clauses) > 1 else ""
        return [
            (fact, "" if fact.retraction or _names_its_topic(fact.predicate) else said)
            for fact in found
        ]
    found = implied_facts(sentence)
    if not found and ":" in sentence:
        # "Right, the news I mentioned: home is Lisbon these days": what follows the colon is
        # what is said.
        told = sentence.rsplit(":", 1)[1].strip()
        if told and told != sentence:
            return _read_sentence(told)
    return [(fact, "") for fact in found or _remark(sentence)]


def _said(sentence: str) -> str:
    """The sentence as a line shows it: lead-ins and the closing stop dropped; long ones not."""
    text = _LEAD.sub("", strip_lead_ins(_LEAD.sub("", sentence))).strip().rstrip(".!…").strip()
    return text if len(text.split()) <= _REMARK_MAX_WORDS else ""


# Asking for something, thanking or greeting is not saying something about oneself; nor is a
# sentence that opens with an order ("Give me three ideas", "Convert 8 degrees for me").
_REQUEST = re.compile(
    r"^(?:please\b|(?:can|could|would|will) you\b|help me\b|remind me\b|let me know\b|"
    r"tell me\b|thanks\b|thank you\b|cheers\b|many thanks\b|kind regards\b|best regards\b|"
    r"(?:hi|hello|hey|greetings|good (?:morning|afternoon|evening|day|night))\b|"
    r"(?:I )?hope you(?: are|'re)? (?:well|doing well|good|keeping well)\b|how are you\b|"
    r"(?:add|book|block|brainstorm|calculate|check|compare|convert|create|draft|edit|estimate|"
    r"explain|find|fix|give|list|look up|make|outline|plan|proofread|put|recommend|reply|"
    r"rewrite|scale|schedule|search|send|set up|show|suggest|summari[sz]e|translate|write)\b)",
    re.IGNORECASE,
)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our|ours)\b", re.IGNORECASE)
# Appointments and passing moments: "a meeting at 3", "heading out now", "rain later", "hang
# on"; a thing that is broken right now ("my formula returns an error"); talk about the memory
# itself ("the notes you have for me are wrong") rather than about oneself.
_PASSING = re.compile(
    r"\bat \d{1,2}(?::\d\d)?\b|\b\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|"
    r"\b(?:later|soon|right away|in a (?:minute|bit|sec|second|moment))\b|"
    r"\b(?:hang on|hold on|one moment|one sec|bear with me|give me a (?:sec|second|minute))\b|"
    r"\b(?:returns? an error|throws? an error|an error|crash(?:es|ed|ing)?|"
    r"(?:is|are|was|got|keeps? being) broken|broke (?:again|down)|"
    r"(?:is|keeps|kept) freezing|not working|(?:does|will) not work)\b|"
    r"\b(?:your notes|you have (?:for|on|about) me|you have down|you noted|on file)\b",
    re.IGNORECASE,
)
# Someone else as the subject without a possessive: "a guy on my team…", "one of my friends…".
_OTHER_PERSON = re.compile(
    r"^(?:a|an|one of my|one of our|some|this|that)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:guy|guys|man|men|woman|women|person|people|lady|kid|friend|friends|colleague|"
    r"colleagues|coworker|neighbou?r|stranger|relative|someone)\b",
    re.IGNORECASE,
)
_SELF_STATE = re.compile(r"\bI am\b")
_PASSING_DAY = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening)|tomorrow|yesterday|just now)\b",
    re.IGNORECASE,
)
_STATE_OPENING = re.compile(r"^(?:I|we) (?:am|are|was|were) (?P<word>[\w-]+)", re.IGNORECASE)
_REMARK_PREFIX = "said "
REMARK_PREFIX = _REMARK_PREFIX
"""The predicate prefix of a remark: ``predicate_hint(REMARK_PREFIX + text)`` gives its topics."""
_REMARK_MIN_WORDS = 5
_REMARK_MAX_WORDS = 40


def _remark(sentence: str) -> list[Fact]:
    """A sincere first-person sentence that no slot rule reads, kept as said.

    People say lasting things about themselves in more ways than any rule list covers ("IT
    finally gave me a laptop at the new place", "the commute to Leeds is killing me"). Such a
    sentence is kept verbatim under a key of its own, so it never replaces another; its date
    lets a reader tell which of two remarks is newer. Requests, thanks, appointments and
    passing states are left out, as in the slot rules.
    """
    text = _LEAD.sub("", strip_lead_ins(_LEAD.sub("", sentence))).strip().rstrip(".!…").strip()
    words = text.split()
    if not (_REMARK_MIN_WORDS <= len(words) <= _REMARK_MAX_WORDS):
        return []
    # Someone else opens it, but the speaker says something of themselves in it ("my physio
    # knows I am recovering from a broken wrist"): kept, for the reader to weigh.
    someone_else = bool(THIRD_PARTY.match(text) or _OTHER_PERSON.match(text))
    if (
        _REQUEST.match(text)
        or (someone_else and not _SELF_STATE.search(text))
        or not _FIRST_PERSON_WORD.search(text)
    ):
        return []
    # Second-person words are no cue either way: people tell an assistant about themselves
    # ("as I told you, ...") as often as they talk about its work.
    # "At the moment" and "this week" date a lasting state as often as a passing one ("I am
    # managing asthma at the moment"); the day words do not.
    if _PASSING.search(text) or _PASSING_DAY.search(text):
        return []
    opening = _STATE_OPENING.match(text)
    if opening is not None and opening.group("word").lower() in TRANSIENT_WORDS:
        return []
    whole = _LEAD.sub("", sentence).strip().rstrip(".!…").strip()
    if any(cues.search(whole) and not cues.search(text) for cues, _ in _TOPIC_CUES):
        text = whole  # the framing named the topic ("Health-wise, I am managing gout")
    key = normalise_value(text)
    if not key:
        return []
    return [Fact(f"{_REMARK_PREFIX}{key}", text, f"said: {text}", matchable=False)]


def _clause_facts(clause: str) -> list[Fact]:
    clause = _LEAD.sub("", strip_lead_ins(_LEAD.sub("", clause))).strip().rstrip(".!…").strip()
    # A hedge may open a clause after a lead-in ("Same as before, I suppose the short version
    # is that I am divorced").
    clause = strip_hedges(clause)
    if not clause or THIRD_PARTY.match(clause) or _OTHER_PERSON.match(clause):
        return []
    withdrawn = retracted_facts(clause)
    if withdrawn is not None:
        return withdrawn
    return positive_facts(clause)


def _expand(sentence: str) -> str:
    for pattern, replacement in _CONTRACTIONS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def _clauses(sentence: str) -> list[str]:
    return [part for part in _CLAUSE_BREAK.split(sentence) if part and part.strip()]


def insincere(sentences: Sequence[str]) -> set[int]:
    """The positions of the sentences that mock or take themselves back, in one message.

    A sentence carrying a marker ("yeah, right", "I am joking") is one; so is the sentence
    before a bare marker ("Yeah, right.", "🙄"), which mocks what was just said.
    """
    skipped: set[int] = set()
    for index, sentence in enumerate(sentences):
        plain = sentence.replace("’", "'")
        if _SARCASM.search(plain):
            skipped.add(index)
            if index and len(_SARCASM.sub("", plain).split()) <= 3:
                skipped.add(index - 1)
    return skipped


# "It is easier for me to scan if you reply in short paragraphs": an "if you" after a word of
# liking or ease states how the speaker likes to be served, no condition on their own life.
_LIKED_IF_YOU = re.compile(
    r"\b(?P<liked>easier|better|clearer|nicer|simpler|quicker|faster|more useful|more helpful|"
    r"helps?|like it|love it|prefer it|appreciate it)\b(?P<between>[^.!?;]{0,40}?)\s+if you\b",
    re.IGNORECASE,
)


def _is_hypothetical(sentence: str) -> bool:
    sentence = _LIKED_IF_YOU.sub(r"\g<liked>\g<between> when you", sentence)
    return bool(_HYPOTHETICAL.search(sentence) or _MAY.search(sentence))


def _is_reported(sentence: str) -> bool:
    if _SINGLE_QUOTED.search(sentence):
        return True
    cue = _REPORTED.search(sentence)
    # The speaker reporting what they themselves told someone ("I handed HR a note saying I am
    # in physiotherapy", "I told my boss that I am moving") still says it of themselves.
    return cue is not None and not _OWN_REPORT.search(sentence)
