"""English word classes and phrase helpers for the fact rules (``_rules``, ``_instructions``).

Ordinary English only: stop words for cutting a value out of a clause, passing-state words,
relation nouns for third-party subjects, light verbs. Nothing here comes from any scenario.
"""

from __future__ import annotations

import re

from drift_pipeline.memory.backends._text import terms


def word_set(words: str) -> frozenset[str]:
    """Return the set of whitespace-separated words in ``words``."""
    return frozenset(words.split())


def compile_ci(pattern: str) -> re.Pattern[str]:
    """Compile a case-insensitive pattern."""
    return re.compile(pattern, re.IGNORECASE)


MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
"""The month names, as alternatives of a pattern."""
WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
"""The weekday names, as alternatives of a pattern."""

ADV = r"(?:(?:now|currently|still|also|actually|officially|finally|just|recently|already|really|happily|newly|permanently)\s+)*"  # noqa: E501
OP_ADV = r"(?:(?:really|absolutely|genuinely|kind of|sort of|honestly|still|now|also|actually|truly|just|especially|particularly|much|strongly|generally|definitely|personally)\s+)*"  # noqa: E501

NAME_STOP = re.compile(
    r"\s*(?:[,;:.!?()\[\]]|\s[-—–]\s)|\s+(?:last|this|next|a few|a couple|recently|yesterday|"
    r"today|tomorrow|tonight|now|since|because|for|with|as|and|but|so|which|who|where|when|"
    r"after|before|until|from|in|on|at|by|about|to|over|during|ever|earlier|"
    r"these days|already|again|anymore|any more|"
    r"full[- ]time|part[- ]time|though|although|while|lol|haha|btw|back|permanently|"
    r"temporarily|officially|finally|instead|starting|effective|originally)\b",
    re.IGNORECASE,
)
PHRASE_STOP = re.compile(
    r"\s*(?:[,;:.!?()\[\]]|\s[-—–]\s)|\s+(?:because|since|but|though|although|so that|which|"
    r"whereas|while|these days|nowadays|anymore|any more|any longer|lately|recently|now|"
    r"at the moment|right now|for now|lol|haha|btw|too|as well|again|instead)\b",
    re.IGNORECASE,
)
COMPARISON = re.compile(r"\s+(?:over|to|than|rather than|instead of|versus|vs\.?)\s+", re.I)
TRANSIENT_TIME = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening)|right now|at the moment|tomorrow|"
    r"yesterday|just now|for now|this week)\b",
    re.IGNORECASE,
)
FREQUENCY = re.compile(
    r"\b(?:every|each|daily|weekly|nightly|twice|times a|on weekends|"
    r"on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b",
    re.IGNORECASE,
)
RELATIONS = (
    r"sister|brother|sibling|friend|colleague|coworker|co-worker|mum|mom|mother|dad|father|"
    r"parent|partner|wife|husband|spouse|boyfriend|girlfriend|fianc[eé]e?|boss|manager|son|"
    r"daughter|kid|child|children|baby|neighbou?r|cousin|aunt|uncle|niece|nephew|roommate|"
    r"flatmate|housemate|grandma|grandmother|grandpa|grandfather|grandparent|family|team|"
    r"teammate|client|landlord|doctor|therapist|ex|[\w-]+-in-law|dog|cat|pet"
)
THIRD_PARTY = re.compile(
    rf"^(?:my|our|his|her|their|your)\s+(?:[\w-]+\s+)?(?:{RELATIONS})s?\b|"
    r"^(?:he|she|they|his|her|their|him|them|everyone|everybody|someone|somebody|people)\b",
    re.IGNORECASE,
)

# Words that open a passing state, not a lasting fact ("I am tired", "I am looking for…").
TRANSIENT_WORDS = word_set(
    """good fine ok okay great well sorry glad happy sad sure unsure excited busy tired exhausted
    sleepy back here there home done ready curious bored hungry thirsty late early free available
    confused stuck worried nervous stressed alright so really very pretty quite just about afraid
    not also still kind sort fed starving dying shocked surprised amazed impressed disappointed
    annoyed frustrated upset angry jealous proud grateful thankful lucky honest serious kidding
    joking aware the this that all in on at out with up down off over into of for to from by
    gonna going trying hoping wondering thinking looking feeling doing getting having coming
    leaving heading planning considering working living moving staying sitting waiting calling
    writing reading watching listening eating drinking cooking driving walking running sick ill
    unwell cold hot warm stressed overwhelmed swamped slammed relieved in-between between
    able unable allowed supposed meant"""
)
DURABLE_GERUNDS = word_set(
    """learning studying training practising practicing recovering renting saving volunteering
    teaching coaching building raising caring mentoring"""
)
LIGHT_VERB_STEMS = word_set(
    """going go play tak take practis practic practice learn study attend try start begin do
    doing get getting train"""
)
MENTAL_VERBS = word_set(
    """know think mind remember understand get care see feel want need believe agree mean recall
    expect intend wish hope seem appear recognize recognise suppose trust guess like love enjoy
    really even usually always have see understand buy follow worry forget blame disagree"""
)
NON_OBJECTS = word_set(
    """it this that these those them you your yours him her everything nothing something
    anything here there how what when where which who whatever"""
)
POSSESSION_EXCLUDE = word_set(
    """question quick idea feeling meeting minute second moment call doubt thought look chance
    lot bit few favour favor appointment deadline busy great good nice long hard bad rough crazy
    day week weekend time presentation test exam interview headache cold point suggestion
    request problem issue date plan"""
)
ATTR_EXCLUDE = word_set(
    """point question guess bad fault pleasure plan day week weekend morning evening night
    meeting flight train bus order package delivery computer laptop phone battery internet wifi
    connection head back stomach throat nose eyes coffee tea lunch dinner breakfast code build
    test tests answer apologies turn hands schedule mind thought thoughts feeling feelings
    understanding concern worry"""
)
TITLES = frozenset({"Dr", "Mr", "Mrs", "Ms", "Mx", "Prof"})
PARTICLES = frozenset({"de", "da", "van", "von", "der", "den", "la", "le", "del", "al", "bin"})
HOME_ATTRS = frozenset({"home", "base", "city", "town", "location", "address"})
JOB_ATTRS = frozenset({"job", "role", "title", "job title", "position", "profession", "occupation"})
# "my desk is at Initech", "my office is now with Globex": where one works.
EMPLOYER_ATTRS = frozenset({"employer", "company", "workplace", "desk", "office", "work desk"})

VERB_GROUPS = {
    "reply": "respond", "respond": "respond", "answer": "respond", "writ": "respond",
    "talk": "respond", "speak": "respond", "messag": "respond", "text": "respond",
    "communicat": "respond", "book": "book", "reserv": "book", "schedul": "schedule",
    "arrang": "schedule", "plan": "schedule", "set": "schedule", "suggest": "recommend",
    "recommend": "recommend", "propos": "recommend", "keep": "keep", "mak": "keep",
    "make": "keep", "us": "use", "use": "use", "using": "use", "includ": "use", "add": "use",
    "mention": "mention", "bring": "mention", "address": "address", "refer": "address",
}  # fmt: skip
PREPOSITIONS = word_set("in with to on for before after at by about without using from into during")


def cut(value: str, stop: re.Pattern[str]) -> str:
    """Cut a value at the first ``stop`` match (a comma, ``last week``, ``because``…)."""
    match = stop.search(value)
    kept = value[: match.start()] if match else value
    return re.sub(r"[^\w)&+'’]+$", "", kept.strip(" '\"")).strip()


def proper(value: str) -> bool:
    """Look like a name: a capital or a digit opens the first word after an article."""
    words = value.split()
    if words and words[0].lower() in {"the", "a", "an"}:
        words = words[1:]
    return bool(words) and len(words) <= 6 and (words[0][0].isupper() or words[0][0].isdigit())


def article(noun_phrase: str) -> str:
    """Return ``a`` or ``an`` for a noun phrase."""
    return "an" if noun_phrase[:1].lower() in "aeiou" else "a"


def strip_article(phrase: str) -> str:
    """Drop a leading ``a``/``an``/``the``."""
    return re.sub(r"^(?:a|an|the)\s+", "", phrase, flags=re.IGNORECASE)


def word_count(phrase: str) -> int:
    """Count the words of a phrase."""
    return len(phrase.split())


def first_word(phrase: str) -> str:
    """Return the first word of a phrase, lower-cased, without punctuation."""
    words = phrase.lower().split()
    return words[0].strip(",.;:!?\"'()") if words else ""


def activity_key(phrase: str) -> str | None:
    """Key an activity by what it is about: ``doing yoga`` and ``quit yoga`` share ``yoga``."""
    found = terms(phrase)
    while len(found) > 1 and found[0] in LIGHT_VERB_STEMS:
        found = found[1:]
    return f"activity {found[0]}" if found else None


def name_value(raw: str) -> str:
    """Return the leading capitalised words of ``raw`` (``Dr. Smith`` of ``Dr. Smith please``)."""
    kept: list[str] = []
    for word in raw.split():
        bare = word.strip(",.;:!?\"'()")
        if not bare or not (bare[0].isupper() or bare.lower() in PARTICLES) or len(kept) == 4:
            break
        title = bare in TITLES and word.endswith(".")
        kept.append(word if title else bare)
        if word[-1:] in ",.;:!?" and not title:
            break
    return " ".join(kept)


# A short opening phrase set off by a comma or colon ("Random aside:", "Before I forget,",
# "Dear assistant,"): it frames what follows but is not its subject. A phrase that opens with a
# first-person, second-person or third-party subject ("I moved, ...", "you should call me Kit,
# but ...", "my sister, ...") is content, not a frame.
_LEAD_IN = re.compile(r"^(?P<lead>[^,:;.!?]{1,48}?)\s*[,:]\s+(?P<rest>\S.*)$")
_SUBJECT_OPENING = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|we|we're|my|our|me|us|he|she|they|his|her|their|it|it's|"
    r"you(?! know\b)|your|"
    r"this|that|there|when|whenever|while|if|unless|once|until|after|because|since|as soon as|"
    r"although|though)\b",
    re.IGNORECASE,
)
_LEAD_IN_MAX_WORDS = 6


def strip_lead_ins(text: str) -> str:
    """Drop framing phrases before the first comma or colon (at most three in a row).

    ``Random aside: my dad took up chess`` → ``my dad took up chess``; ``Dear assistant, In
    other news, I moved`` → ``I moved``. A phrase is dropped only when it has at most six words,
    does not open with a subject pronoun, a possessive or a subordinating conjunction (``When I
    was a kid, ...`` is a clause of its own), and at least two words follow it.
    """
    for _ in range(3):
        match = _LEAD_IN.match(text)
        if match is None:
            break
        lead, rest = match.group("lead"), match.group("rest")
        if (
            len(lead.split()) > _LEAD_IN_MAX_WORDS
            or _SUBJECT_OPENING.match(lead.strip())
            or len(rest.split()) < 2
        ):
            break
        text = rest
    return text
