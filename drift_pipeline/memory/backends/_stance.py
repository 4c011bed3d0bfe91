"""Sentence rules: a stance on a named topic, and news that implies a new home or employer.

Both need the whole sentence. News implies a new home or employer without "I live in" or "I work
at" being said.

A stance is often said with its topic set apart from the clause that holds it: "when it comes to
remote work, I am sceptical now", "on nuclear power, count me as undecided", "my view on
electric cars has shifted to cautiously optimistic", "I have come round on tariffs; in favour is
my position". Read clause by clause, the stance loses its topic ("is sceptical"), so two stances
on different topics never meet and a new one on the same topic never replaces the old. Here the
stance is keyed by its topic, the same key ``I think X is Y`` gets (``opinion <topic terms>``).

Likewise "my new team at Globex took me out for lunch" or "I got my library card in Porto"
report a change of employer or home in passing; they are read as the slot facts they imply.
Nothing here knows any scenario's vocabulary: the patterns are ordinary English.
"""

from __future__ import annotations

import re

from drift_pipeline.memory.backends._lexicon import (
    MONTHS,
    NAME_STOP,
    NON_OBJECTS,
    PHRASE_STOP,
    THIRD_PARTY,
    TRANSIENT_TIME,
    WEEKDAYS,
    compile_ci,
    cut,
    first_word,
    name_value,
    proper,
    word_count,
    word_set,
)
from drift_pipeline.memory.backends._rules import Fact, positive_facts
from drift_pipeline.memory.backends._text import terms

__all__ = ["choice_facts", "implied_facts", "naming_facts", "stance_fact", "strip_hedges"]

_VIEW_NOUNS = r"(?:stance|view|views|position|opinion|take|feelings?|thinking|verdict)"
_TOPIC = r"(?P<t>[^,;:.!?]{2,60}?)"
# What the stance clause can look like once its topic is set apart.
_HELD = [
    compile_ci(r"^(?:I am|I feel|I would say I am)\s+(?:now\s+|still\s+)?(?P<v>.+)$"),
    compile_ci(r"^(?:count|put|mark)\s+me\s+(?:down\s+)?(?:as|in|among|for)\s+(?P<v>.+)$"),
    compile_ci(rf"^(?P<v>.+?)\s+is\s+(?:now\s+)?my\s+(?:new\s+)?{_VIEW_NOUNS}\b.*$"),
    compile_ci(rf"^my\s+(?:new\s+)?{_VIEW_NOUNS}\s+is\s+(?:now\s+)?(?:that\s+I am\s+)?(?P<v>.+)$"),
    compile_ci(
        r"^I\s+(?:have\s+)?(?:ended up|landed|came out|come out)\s+(?:as\s+|at\s+)?(?P<v>.+)$"
    ),
]
_FRAMED = [
    # "when it comes to X, I am Y" / "on X, count me as Y" / "as for X: Y is my view"
    compile_ci(
        rf"^(?:.*?\s)?(?:when it comes to|as for|as regards|regarding|"
        rf"concerning|on the (?:subject|topic|question|matter) of|on|about|re)\s+{_TOPIC}"
        r"\s*[,;:]\s*(?P<s>.+)$"
    ),
    # "I have come round on X; Y is my position" / "I changed my mind about X: I am Y now"
    compile_ci(
        r"^I\s+(?:have\s+)?(?:come round|come around|came round|came around|changed my mind|"
        r"turned|flipped|done a u-?turn|did a u-?turn|rethought|reconsidered|shifted)\s+"
        rf"(?:on|about|regarding|over)\s+{_TOPIC}(?:\s*[,;:]\s*|,?\s+(?:and|so)\s+)(?P<s>.+)$"
    ),
]
_DIRECT = [
    # "my stance on X (has) shifted to Y" / "my view on X is now Y"
    compile_ci(
        rf"^my\s+(?:current\s+|new\s+)?{_VIEW_NOUNS}\s+(?:on|about|of|regarding|towards?)\s+"
        r"(?P<t>.+?)\s+(?:(?:has|have)\s+)?(?:now\s+)?(?:(?:shifted|changed|moved|swung|gone|"
        r"turned|switched|evolved|come round|come around)\s+(?:to|into)|is|are)\s+(?:now\s+)?"
        r"(?P<v>.+)$"
    ),
    # "where I stand on X these days is Y"
    compile_ci(
        r"^where\s+I\s+(?:land|stand|am|sit|come down)\s+on\s+(?P<t>.+?)\s+(?:these days\s+|now\s+|"
        r"at this point\s+)?is\s+(?:now\s+)?(?P<v>.+)$"
    ),
    # "reading about X made me Y", "the debate on X has left me Y"
    compile_ci(
        r"^.*?\b(?:about|on|over|regarding)\s+(?P<t>[^,;:.!?]{2,60}?)\s+(?:has\s+|have\s+)?"
        r"(?:made|left|got|gotten)\s+me\s+(?:feeling\s+)?(?:more\s+|rather\s+)?(?P<v>.+)$"
    ),
    # "(my friend and) I argued about X and I came out Y"
    compile_ci(
        r"^(?:.*?\s)?(?:I|we)\s+(?:have\s+)?(?:argued|debated|talked|chatted|spoke|disagreed|"
        r"went back and forth)\s+(?:(?:about|over|on)\s+)?(?P<t>.+?),?\s+and\s+I\s+"
        r"(?:came out|ended up|came away|landed|walked away)\s+(?:as\s+|being\s+|feeling\s+)?"
        r"(?P<v>.+)$"
    ),
]
# Hedges and frames that open a sincere statement; "if I am honest" is no condition, "I
# suppose" no guess, "please note that" no order.
_HEDGE = compile_ci(
    r"^(?:(?:so|ok|okay|well|and|but|right|basically|honestly|also|oh)[,\s]+)*"
    r"(?:if I am (?:being )?honest|to be (?:fair|honest|frank)|I suppose|I guess|"
    r"(?:the )?short version is(?: that)?|long story short|in short|to cut a long story short|"
    r"the (?:plain |simple |honest )?(?:fact|truth) is(?: that)?|"
    r"(?:please )?note that|please note|truth be told|to set the record straight|to be clear|"
    r"for what it is worth|as it happens)"
    r"\b[\s,:]*"
)
# States of the moment, never a stance ("in favour" and "on the fence" are stances).
_PASSING_STATES = frozenset(
    {
        "busy", "late", "early", "tired", "free", "exhausted", "hungry", "sick", "ill", "swamped",
        "slammed", "stuck", "away", "off", "out", "back", "home", "here", "there", "ready", "done",
        "sorry", "glad",
    }
)  # fmt: skip
_VALUE_TAIL = compile_ci(r"\s+(?:on|about|regarding)\s+(?:it|that|this|them|the matter)\b.*$")


def strip_hedges(sentence: str) -> str:
    """Drop hedges that open a sentence (``If I am honest, I moved`` → ``I moved``)."""
    while True:
        stripped = _HEDGE.sub("", sentence, count=1)
        if stripped == sentence or not stripped.strip():
            return sentence
        sentence = stripped


def _stance_value(raw: str) -> str:
    value = _VALUE_TAIL.sub("", cut(raw, PHRASE_STOP)).strip()
    value = re.sub(r"^(?:as|being)\s+", "", value, flags=re.IGNORECASE)
    if not value or not 1 <= word_count(value) <= 5 or first_word(value) in NON_OBJECTS:
        return ""
    first = first_word(value)
    if first in {"i", "my", "we", "me", "our", "is", "am", "are"}:
        return ""
    # "About the meeting: I am running late" is a passing state, no stance.
    if first in _PASSING_STATES or first.endswith("ing") or TRANSIENT_TIME.search(value):
        return ""
    return value


# "On Tuesday, I am free": a time is when, not what about.
_TIME_TOPIC = compile_ci(
    r"^(?:(?:this|next|last|the|that|every)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
    r"^(?:(?:this|next|last|the|that|every)\s+)?(?:weekends?|mornings?|afternoons?|evenings?|"
    r"nights?|days?|weeks?|months?|years?|today|tomorrow|tonight|yesterday|holidays?)\b|"
    r"^(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)\b|^\d|^(?:second|first|other|top|average)\b"
)


def _topic(raw: str) -> str:
    topic = re.sub(r"^(?:the|a|an)\s+", "", raw.strip(), flags=re.IGNORECASE)
    if not topic or word_count(topic) > 6 or first_word(topic) in NON_OBJECTS:
        return ""
    if _TIME_TOPIC.match(raw.strip()):
        return ""
    if THIRD_PARTY.match(topic) or first_word(topic) in {"i", "my", "me", "we", "our"}:
        return ""
    return topic


def _fact(topic_raw: str, value_raw: str) -> Fact | None:
    topic, value = _topic(topic_raw), _stance_value(value_raw)
    topic_terms = terms(topic)
    if not topic or not value or not topic_terms:
        return None
    return Fact(f"opinion {' '.join(topic_terms[:3])}", value, f"stance on {topic}: {value}", False)


def stance_fact(sentence: str) -> Fact | None:
    """The speaker's stance on a named topic, keyed by the topic, or ``None``.

    Args:
        sentence: One sincere first-person sentence, contractions expanded, lead-ins dropped.
    """
    text = sentence.strip().rstrip(".!…").strip()
    for pattern in _DIRECT:
        match = pattern.match(text)
        if match is not None and (fact := _fact(match.group("t"), match.group("v"))):
            return fact
    for pattern in _FRAMED:
        match = pattern.match(text)
        if match is None:
            continue
        held = match.group("s").strip()
        if any(not fact.predicate.startswith("is ") for fact in positive_facts(held)):
            # "After reading about the dairy industry, I am vegan": a diet, not a stance.
            continue
        for clause in _HELD:
            inner = clause.match(held)
            if inner is not None and (fact := _fact(match.group("t"), inner.group("v"))):
                return fact
    return None


_NEW_JOB = [
    compile_ci(
        r"\bmy\s+(?:new\s+|first\s+)?(?:team|colleagues|co-?workers|boss|manager|office|desk|"
        r"staff badge|badge|staff card|work email|contract|onboarding|employer|payslip|pay slip|"
        r"paycheck|pay cheque|salary|wages|shifts?|rota)\s+(?:is\s+|are\s+)?(?:now\s+)?"
        r"(?:at|from|with)\s+(?P<v>[A-Z][^,;:.!?]*)"
    ),
    compile_ci(
        r"\bI\s+(?:have\s+)?(?:just\s+)?(?:took|taken|accepted|signed|said yes to)\s+"
        r"(?:the|their|an|a)\s+(?:job\s+)?offer\s+(?:from|at|with)\s+(?P<v>[A-Z][^,;:.!?]*)"
    ),
    # Case matters: "IT at Globex handed me a laptop", never "it at ...".
    re.compile(
        r"\b(?:IT|HR|[Tt]he office)\s+at\s+(?P<v>[A-Z][^,;:.!?]*?)\s+(?:just\s+)?"
        r"(?:gave|handed|sent|issued|set)\s+me\b"
    ),
]
_NEW_HOME = [
    compile_ci(
        r"\b(?:my|our)\s+(?:commute|move|flat|apartment|house|lease|landlord|neighbou?rs|"
        r"new (?:place|building|street|neighbou?rhood|flat|apartment|house|home))\s+"
        r"(?:since the move\s+)?(?:to|in)\s+(?P<v>[A-Z][^,;:.!?]*)"
    ),
    # "a transit pass for Tallinn, since that is home now"
    compile_ci(
        r"\b(?:for|in|to)\s+(?P<v>[A-Z][^,;:.!?]*?),?\s+(?:since|as|because)\s+"
        r"(?:that|it)(?:\s+is|'s)\s+(?:my\s+|our\s+)?home(?:\s+now)?\b"
    ),
    compile_ci(r"\bsince (?:the|my|our) move to\s+(?P<v>[A-Z][^,;:.!?]*)"),
    compile_ci(
        r"\bthe movers\s+(?:have\s+)?(?:unloaded|delivered|dropped off|brought)\s+(?:the\s+)?"
        r"(?:last\s+)?(?:of\s+(?:the|my|our)\s+)?(?:boxes|furniture|things|stuff)\s+in\s+"
        r"(?P<v>[A-Z][^,;:.!?]*)"
    ),
    compile_ci(
        r"\bI\s+(?:have\s+)?(?:just\s+)?(?:got|registered (?:for|with|at)|signed up (?:for|with)|"
        r"joined)\s+(?:my|a|the)\s+(?:new\s+|local\s+)?(?:library card|library|gp|doctor|dentist|"
        r"clinic|gym membership|gym|parking permit|resident permit|surgery)\s+in\s+"
        r"(?P<v>[A-Z][^,;:.!?]*)"
    ),
    # "home is Wellington these days", "home base is now Lyon"
    compile_ci(r"^(?:my\s+)?home(?:\s+base)?\s+is\s+(?:now\s+)?(?P<v>[A-Z][^,;:.!?]*)"),
]
# Dates and days that close a place or an employer ("in Porto on Tuesday").
_NAME_END = compile_ci(
    r"\s+(?:on|this|last|next|yesterday|today|finally|just|which|and|is|was|took|gave|handed)\b"
)


_NAME_JOINERS = frozenset({"&", "and", "of", "de", "del", "la", "le", "von", "van"})


def _name(raw: str) -> str:
    """The capitalised name a phrase opens with: ``Umbrella Labs threw me…`` → ``Umbrella Labs``."""
    words: list[str] = []
    for word in cut(cut(raw, _NAME_END), NAME_STOP).split():
        if not (word[0].isupper() or word[0].isdigit() or word.lower() in _NAME_JOINERS):
            break
        words.append(word)
    while words and words[-1].lower() in _NAME_JOINERS:
        words.pop()
    value = " ".join(words)
    return value if value and proper(value) else ""


def implied_facts(sentence: str) -> list[Fact]:
    """Employer or home facts implied by news of a new team, a job offer, a move.

    Args:
        sentence: One sincere sentence of the speaker, contractions expanded.
    """
    # The job patterns name the speaker themselves ("my new colleagues at…", "handed me");
    # "since the move to…" does not, so a sentence about someone else implies no home.
    for pattern in _NEW_JOB:
        match = pattern.search(sentence)
        if match is not None and (value := _name(match.group("v"))):
            return [Fact("works at", value, f"works at {value}")]
    if THIRD_PARTY.match(sentence.strip()):
        return []
    for pattern in _NEW_HOME:
        match = pattern.search(sentence)
        if match is not None and (value := _name(match.group("v"))):
            return [Fact("lives in", value, f"lives in {value}")]
    return []


# A standing choice said without "prefer": "I'd pick X every time", "X works best for me", "I
# always end up choosing X", "when my team asked, I said X again". "Would" here is a habit, not
# a condition, so these are read before the hypothetical test; each is read as "I prefer X", so
# it shares that rule's key (the head noun) and replaces an earlier choice of the same kind.
_CHOICES = [
    compile_ci(
        r"^I\s+(?:would|will)?\s*(?:always\s+)?(?:pick|choose|go for|opt for|take)\s+(?P<v>.+?)"
        r"\s+(?:every time|every single time|each time|any day|hands down)\b.*$"
    ),
    compile_ci(r"^I\s+would\s+always\s+(?:pick|choose|go for|opt for)\s+(?P<v>.+)$"),
    compile_ci(
        r"^(?:what|the thing that)\s+(?:works|suits me)\s+best(?:\s+for me)?\s+is\s+(?P<v>.+)$"
    ),
    compile_ci(r"^(?P<v>[^,;:]+?)\s+(?:works|suits me)\s+best(?:\s+for me)?$"),
    compile_ci(
        r"^I\s+(?:always\s+|usually\s+|generally\s+|tend to\s+)?end up\s+(?:choosing|picking|"
        r"going for|going with|with)\s+(?P<v>.+)$"
    ),
    compile_ci(
        r"^when\s+(?:my|our|the)\s+[\w\s-]{1,30}?\s+asked(?:\s+me)?,?\s+I\s+said\s+(?P<v>.+?)"
        r"(?:\s+again)?$"
    ),
]


def choice_facts(sentence: str) -> list[Fact]:
    """A standing choice of the speaker, read as ``I prefer X``, or ``[]``.

    Args:
        sentence: One sincere sentence of the speaker, contractions expanded, lead-ins dropped.
    """
    text = re.sub(r"(?:\s+(?:lol|haha|again))+$", "", sentence.strip().rstrip(".!…").strip())
    for pattern in _CHOICES:
        match = pattern.match(text)
        if match is None:
            continue
        value = cut(match.group("v"), PHRASE_STOP)
        if not value or first_word(value) in NON_OBJECTS or word_count(value) > 6:
            continue
        return [fact for fact in positive_facts(f"I prefer {value}") if not fact.retraction]
    return []


# What the speaker asks to be called, however it is put: "you can keep calling me Jo", "I'd
# rather be called Jo", "I want to be addressed as Dr. Lee", "drop the formal Priya, it's Bea".
# "Would rather" and "want to" here state a standing wish, not a condition, so these are read
# before the hypothetical test. The name itself must be capitalised ("call me back" is no name).
_NAMING = [
    # How others call the speaker is the name they go by: "my family has always called me
    # Nico", "everyone calls me Bea". A call by mistake, a name no one uses or one they used
    # to use is none (see ``_NOT_MY_NAME``).
    compile_ci(r"(?:^|\s)(?<!not )(?<!never )(?:call|calls|calling|called)\s+me\s+(?P<v>\S.*)$"),
    # "I am Robin to everyone", "…, I'm just Jo to my friends".
    compile_ci(
        r"(?:^|[,;:]\s*)I am\s+(?:just\s+|simply\s+|only\s+)?(?P<v>\S+(?:\s+\S+)?)\s+to\s+"
        r"(?:everyone|everybody|all|(?:most\s+)?people|(?:my\s+)?(?:friends|family|mates|"
        r"colleagues|co-?workers|team|folks|relatives|kids|parents|partner))\b"
    ),
    # "Just Jo is fine when you address me", "Sam works if you need to call me something".
    compile_ci(
        r"^(?:just\s+|simply\s+|plain\s+)?(?P<v>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+"
        r"(?:(?:is|would be|will be)\s+(?:just\s+|perfectly\s+|totally\s+)?(?:fine|good|great|"
        r"perfect|ok|okay|enough|best)|works|will do|does nicely)\b[^.!?]*?"
        r"\b(?:address|call|greet|refer to)(?:ing)?\s+me\b"
    ),
    compile_ci(
        r"\b(?:be|being|get|getting)\s+(?:called|addressed as|known as|referred to as)\s+"
        r"(?P<v>\S.*)$"
    ),
    compile_ci(r"^I\s+(?:now\s+)?(?:go|am going)\s+by\s+(?P<v>\S.*)$"),
]
_CONDITION = compile_ci(r"\b(?:if|unless|in case|suppose|supposing|imagine|what if)\b")
_CALENDAR_WORDS = word_set(f"{WEEKDAYS} today tonight tomorrow {MONTHS}".replace("|", " "))
_GROUP = compile_ci(
    r"\b(?:everyone|everybody|people|folks|all|family|friends|mates|colleagues|co-?workers|team|"
    r"teammates|relatives|kids|parents|classmates)\b"
)
# A name refused, dropped, mistaken or someone else's: "nobody calls me Sisa", "I hate it when
# people call me Bob", "my aunt used to call me Bea", "he called me Tom by mistake".
_NOT_MY_NAME = compile_ci(
    r"\b(?:nobody|no one|no-one|none|never|not|no longer|used to|stop|stopped|quit|hate|hates|"
    r"dislike|dislikes|cannot stand|mistake|mistakenly|wrongly|accident|accidentally|"
    r"instead of|anymore|any more)\b"
)
# "…the formal Priya, it's Bea": a sentence about what to call the speaker that ends by giving
# the name.
_NAMING_CUE = compile_ci(r"\b(?:name|names|named|formal|nickname|call|calling|called|address)\b")
_GIVEN_NAME = re.compile(
    r"[,;:]\s*(?:[Ii]t is|[Ii]t's|[Jj]ust|[Ss]imply)\s+(?P<v>[A-Z][\w'-]*)"
    r"(?:\s+(?:now|these days|from now on|going forward|please))?[.!]*$"
)


def naming_facts(sentence: str) -> list[Fact]:
    """The name the speaker asks to be called by, as a ``name`` fact, or ``[]``.

    Args:
        sentence: One sincere sentence of the speaker, contractions expanded, lead-ins dropped.
    """
    text = sentence.strip()
    for pattern in _NAMING:
        match = pattern.search(text)
        if match is None or _CONDITION.search(text[: match.start()]):
            continue  # "if you ever call me Sam, …" asks for nothing
        # Only the clause the name is given in: "nobody uses Sisa, I am Robin to everyone".
        clause_before = re.split(r"[,;:]", text[: match.start()])[-1]
        if _NOT_MY_NAME.search(clause_before) or _NOT_MY_NAME.search(match.group(0)):
            continue
        # What one person calls the speaker ("my grandma calls me Sunshine", "he calls me
        # Tommy") is their name for them; what family, friends or everyone call them is the name
        # they go by.
        # "Calls" and "called" have a subject: it must be such a group ("Acme called me
        # Monday" is a phone call).
        opening = clause_before.strip()
        said_of_me = re.search(r"\b(?:calls|called)\s+me\b", match.group(0), re.IGNORECASE)
        if not _GROUP.search(opening) and (said_of_me or THIRD_PARTY.match(opening)):
            continue
        value = name_value(match.group("v"))
        if value and value.lower() not in _CALENDAR_WORDS:
            return [Fact("name", value, f"goes by {value}")]
    given = _GIVEN_NAME.search(text)
    if given is not None and _NAMING_CUE.search(text[: given.start()]):
        value = given.group("v")
        return [Fact("name", value, f"goes by {value}")]
    return []
