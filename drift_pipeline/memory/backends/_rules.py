"""Clause rules: generic English patterns that turn one first-person clause into slot facts.

A clause arrives already filtered (no question, hypothetical, sarcasm or reported speech), with
contractions expanded (``I am``, ``do not``) and leading discourse markers removed. Rules are tried
in order and the first that yields facts wins. Every key is a normalised predicate (``works at``,
``lives in``, ``diet``, ``opinion remot work``…): a later value under the same key replaces the
earlier one. Nothing here knows any scenario's vocabulary; the few closed word classes (diets,
relationship statuses, light verbs) are ordinary English.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from drift_pipeline.memory.backends._lexicon import (
    ADV,
    ATTR_EXCLUDE,
    COMPARISON,
    DURABLE_GERUNDS,
    EMPLOYER_ATTRS,
    FREQUENCY,
    HOME_ATTRS,
    JOB_ATTRS,
    MENTAL_VERBS,
    NAME_STOP,
    NON_OBJECTS,
    OP_ADV,
    PHRASE_STOP,
    POSSESSION_EXCLUDE,
    PREPOSITIONS,
    THIRD_PARTY,
    TRANSIENT_TIME,
    TRANSIENT_WORDS,
    activity_key,
    article,
    compile_ci,
    cut,
    first_word,
    name_value,
    proper,
    strip_article,
    word_count,
)
from drift_pipeline.memory.backends._text import terms

__all__ = ["Fact", "positive_facts", "retracted_facts"]


@dataclass(frozen=True)
class Fact:
    """One extracted fact about the speaker, before it is dated and attributed.

    Attributes:
        predicate: Normalised key; a new value under the same key replaces the old one.
        value: Surface value (``Acme Corp``); compared loosely for NOOP and retraction matching.
        text: Readable predicate phrase (``works at Acme Corp``), shown after the subject.
        matchable: A retraction of this key applies only when the stored value matches ``value``.
        retraction: The clause withdraws this fact instead of stating it.
        instead_of: The value this one succeeds ("I left Acme for Initech"): it belongs to
            whichever slot held that value, ``predicate`` when neither or both did.

    """

    predicate: str
    value: str
    text: str
    matchable: bool = True
    retraction: bool = False
    instead_of: str = ""


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], list[Fact]]]

# --- rule builders -----------------------------------------------------------------------------


def _name(match: re.Match[str]) -> list[Fact]:
    value = name_value(match.group("v"))
    return [Fact("name", value, f"goes by {value}")] if value else []


def _employer(match: re.Match[str]) -> list[Fact]:
    value = cut(match.group("v"), NAME_STOP)
    if not proper(value):
        return []
    facts = [Fact("works at", value, f"works at {value}")]
    role = match.groupdict().get("role")
    if role:
        role = cut(role, NAME_STOP)
        if role and word_count(role) <= 4:
            facts.append(Fact("occupation", role, f"works as {article(role)} {role}"))
    return facts


def _signed_with(match: re.Match[str]) -> list[Fact]:
    """An employer named by the paperwork of a job: a name, not "the Lisbon flat"."""
    if first_word(match.group("v")) in _DETERMINERS:
        return []
    return _employer(match)


def _occupation(match: re.Match[str]) -> list[Fact]:
    role = strip_article(cut(match.group("v"), NAME_STOP))
    if not role or word_count(role) > 5:
        return []
    return [Fact("occupation", role, f"works as {article(role)} {role}")]


def _location(match: re.Match[str]) -> list[Fact]:
    value = cut(match.group("v"), NAME_STOP)
    return [Fact("lives in", value, f"lives in {value}")] if proper(value) else []


def _origin(match: re.Match[str]) -> list[Fact]:
    value = cut(match.group("v"), NAME_STOP)
    return [Fact("from", value, f"is from {value}")] if proper(value) else []


def _relationship(match: re.Match[str]) -> list[Fact]:
    status = match.group("v").lower()
    partner = re.match(r"\s+(?:to|with)\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)", match.group("rest"))
    text = f"is {status}" + (f" to {partner.group(1)}" if partner else "")
    return [Fact("relationship status", status, text)]


def _broke_up(match: re.Match[str]) -> list[Fact]:
    return [Fact("relationship status", "single", "is single")]


def _dating(match: re.Match[str]) -> list[Fact]:
    partner = name_value(match.group("v"))
    if not partner:
        return []
    return [Fact("relationship status", f"dating {partner}", f"is dating {partner}")]


def _diet(match: re.Match[str]) -> list[Fact]:
    value = match.group("v").lower()
    return [Fact("diet", value, f"is {value}")]


def _age(match: re.Match[str]) -> list[Fact]:
    age = match.group("v")
    if not 1 <= int(age) <= 120:
        return []
    return [Fact("age", age, f"is {age} years old")]


def _prefer(match: re.Match[str]) -> list[Fact]:
    raw = match.group("v")
    comparison = COMPARISON.search(raw)
    main = raw[: comparison.start()] if comparison else raw
    main = re.sub(r"^to\s+", "", cut(main, PHRASE_STOP), flags=re.IGNORECASE)
    main_terms = terms(main)
    if not main_terms or first_word(main) in NON_OBJECTS or word_count(main) > 8:
        return []
    key = f"prefers {main_terms[-1]}"
    facts: list[Fact] = []
    if comparison:
        other = cut(raw[comparison.end() :], PHRASE_STOP)
        other_terms = terms(other)
        if other_terms and f"prefers {other_terms[-1]}" != key:
            # "I prefer tea to coffee" also withdraws an earlier "prefers coffee".
            facts.append(Fact(f"prefers {other_terms[-1]}", other, "", retraction=True))
    facts.append(Fact(key, main, f"prefers {main}"))
    return facts


_OPINION_VERBS = {
    "love": "loves", "like": "likes", "enjoy": "enjoys", "adore": "loves", "hate": "hates",
    "dislike": "dislikes", "detest": "hates", "loathe": "hates", "cannot stand": "cannot stand",
    "can not stand": "cannot stand", "do not like": "does not like",
    "do not enjoy": "does not enjoy", "do not love": "does not love",
    "do not care for": "does not care for", "am into": "is into",
    "am obsessed with": "is obsessed with", "am interested in": "is interested in",
    "am passionate about": "is passionate about", "am tired of": "is tired of",
    "am sick of": "is sick of", "am over": "is over",
}  # fmt: skip


def _opinion(match: re.Match[str]) -> list[Fact]:
    verb = re.sub(r"\s+", " ", match.group("verb").lower())
    if verb.startswith("am") and "fan of" in verb:
        phrase = "is not a fan of" if " not " in f" {verb} " else "is a fan of"
    else:
        phrase = _OPINION_VERBS.get(verb, verb)
    obj = re.sub(r"^to\s+", "", cut(match.group("v"), PHRASE_STOP), flags=re.IGNORECASE)
    object_terms = terms(obj)
    if not object_terms or first_word(obj) in NON_OBJECTS or word_count(obj) > 8:
        return []
    return [Fact(f"opinion {' '.join(object_terms[:3])}", obj, f"{phrase} {obj}", False)]


def _belief(match: re.Match[str]) -> list[Fact]:
    topic = match.group("topic").strip()
    claim = cut(match.group("v"), PHRASE_STOP)
    topic_terms = terms(topic)
    if (
        not topic_terms
        or not claim
        or first_word(topic) in NON_OBJECTS
        or THIRD_PARTY.match(topic)
        or word_count(topic) > 6
        or word_count(claim) > 8
    ):
        return []
    text = f"thinks {topic} {match.group('cop').lower()} {claim}"
    return [Fact(f"opinion {' '.join(topic_terms[:3])}", claim, text, False)]


_NEGATIVE_PHRASES = {
    "do not": "does not", "cannot": "cannot", "can not": "cannot", "never": "never",
    "am unable to": "is unable to", "am not able to": "is not able to",
    "am not allowed to": "is not allowed to", "must not": "must not", "must avoid": "must avoid",
    "avoid": "avoids", "refuse to": "refuses to",
}  # fmt: skip


def _constraint(match: re.Match[str]) -> list[Fact]:
    rest = cut(match.group("v"), PHRASE_STOP)
    rest_terms = terms(rest)
    first = first_word(rest)
    if not rest_terms or first in MENTAL_VERBS or first in NON_OBJECTS or word_count(rest) > 8:
        return []
    negation = _NEGATIVE_PHRASES.get(re.sub(r"\s+", " ", match.group("neg").lower()), "not")
    key = f"constraint {' '.join(rest_terms[:2])}"
    return [Fact(key, rest, f"{negation} {rest}", False)]


def _taken_up(match: re.Match[str]) -> list[Fact]:
    activity = cut(match.group("v"), PHRASE_STOP)
    if re.match(r"^(?:a|an|the|my)?\s*(?:new\s+)?(?:job|role|position|gig)\b", activity, re.I):
        return []
    key = activity_key(activity)
    if key is None or first_word(activity) in NON_OBJECTS or word_count(activity) > 8:
        return []
    return [Fact(key, activity, f"started {activity}", False)]


def _ongoing(match: re.Match[str]) -> list[Fact]:
    activity = cut(match.group("v"), PHRASE_STOP)
    key = activity_key(activity)
    if key is None or not FREQUENCY.search(activity) or word_count(activity) > 10:
        return []
    return [Fact(key, activity, f"has been {activity}", False)]


def _main_verb(phrase: str) -> str:
    """The verb a habit is about: ``do not mind the rain`` → ``mind``."""
    for word in phrase.lower().split():
        if word not in {"do", "does", "not", "really", "just", "even", "ever"}:
            return word.strip(",.;:!?")
    return ""


def _habit(match: re.Match[str]) -> list[Fact]:
    adverb = match.group("adv").lower()
    rest = cut(match.group("v"), PHRASE_STOP)
    rest_terms = terms(rest)
    if not rest_terms or _main_verb(rest) in MENTAL_VERBS or word_count(rest) > 10:
        return []
    return [Fact(f"habit {' '.join(rest_terms[:2])}", rest, f"{adverb} {rest}", False)]


def _routine(match: re.Match[str]) -> list[Fact]:
    rest = cut(match.group("v"), PHRASE_STOP)
    rest_terms = terms(rest)
    if not rest_terms or _main_verb(rest) in MENTAL_VERBS or word_count(rest) > 10:
        return []
    return [Fact(f"habit {' '.join(rest_terms[:2])}", rest, rest, False)]


# A person's health news is one story: the latest status ("recovering from knee surgery",
# "managing asthma", "cleared after a check-up") is what holds now, so every status shares one
# key and the newest replaces the one before.
_HEALTH_KEY = "health"


def _health(match: re.Match[str]) -> list[Fact]:
    condition = cut(match.group("v"), PHRASE_STOP)
    condition_terms = terms(condition)
    if not condition_terms or word_count(condition) > 6:
        return []
    verb = match.group("verb").lower()
    if verb.startswith(("suffer", "am suffer")):
        text = f"suffers from {condition}"
    elif "diagnosed" in verb:
        text = f"was diagnosed with {condition}"
    else:
        text = f"{verb} their {condition}"
    return [Fact(_HEALTH_KEY, condition, text)]


_AMBIGUOUS_STATUS = frozenset(
    {"managing", "living with", "dealing with", "coping with", "undergoing"}
)
_DETERMINERS = frozenset(
    {"a", "an", "the", "my", "our", "his", "her", "their", "your", "this", "that", "these",
     "those", "some", "two", "three", "several", "many", "lots", "all"}
)  # fmt: skip


def _health_status(match: re.Match[str]) -> list[Fact]:
    """``I am recovering from X``, ``managing X``, ``living with X``: the current health status."""
    status = re.sub(r"\s+", " ", match.group("verb").lower())
    condition = cut(match.group("v"), PHRASE_STOP)
    if not terms(condition) or word_count(condition) > 6 or first_word(condition) in NON_OBJECTS:
        return []
    # One manages a condition ("managing gout") but also a team or a stand ("managing the
    # stand"): after those verbs a condition is named bare, without an article or a possessive.
    if status in _AMBIGUOUS_STATUS and first_word(condition) in _DETERMINERS:
        return []
    value = f"{status} {condition}"
    return [Fact(_HEALTH_KEY, value, f"is {value}")]


def _health_cleared(match: re.Match[str]) -> list[Fact]:
    """``I got a clean bill of health``, ``I have fully recovered``: no condition holds now."""
    said = cut(match.group(0), PHRASE_STOP)
    said = re.sub(r"^I\s+(?:have\s+|am\s+|was\s+)?", "", said, flags=re.IGNORECASE)
    return [Fact(_HEALTH_KEY, said, f"health: {said}")]


def _possession(match: re.Match[str]) -> list[Fact]:
    owned = cut(match.group("v"), PHRASE_STOP)
    owned_terms = terms(owned)
    if not owned_terms or owned_terms[0] in POSSESSION_EXCLUDE or word_count(owned) > 6:
        return []
    if first_word(owned) in POSSESSION_EXCLUDE:
        return []
    determiner = match.group("det").lower()
    return [Fact(f"has {owned_terms[0]}", owned, f"has {determiner} {owned}", False)]


def _state(match: re.Match[str]) -> list[Fact]:
    """``I am X``: an identity (``a nurse``), a lasting activity, or a lasting state."""
    raw = match.group("v")
    if re.match(r"^(?:a|an)\s", raw, re.IGNORECASE):
        noun_phrase = strip_article(cut(raw, NAME_STOP))
        np_terms = terms(noun_phrase)
        first = first_word(noun_phrase)
        if not np_terms or first in TRANSIENT_WORDS or first in {"bit", "lot", "little"}:
            return []
        if "fan" in noun_phrase.lower().split():  # "a huge fan of your summaries": an opinion
            return []
        if word_count(noun_phrase) > 5:
            return []
        return [
            Fact(
                f"is a {np_terms[-1]}",
                noun_phrase,
                f"is {article(noun_phrase)} {noun_phrase}",
                False,
            )
        ]
    state = cut(raw, PHRASE_STOP)
    first = first_word(state)
    if first in DURABLE_GERUNDS:
        key = activity_key(state)
        if key is None or word_count(state) > 8:
            return []
        return [Fact(key, state, f"is {state}", False)]
    if not first or first in TRANSIENT_WORDS or first.endswith("ing") or word_count(state) > 6:
        return []
    if not first[0].isalpha():
        return []
    state_terms = terms(state)
    if not state_terms:
        return []
    return [Fact(f"is {' '.join(state_terms[:3])}", state, f"is {state}", False)]


def _my_attribute(match: re.Match[str]) -> list[Fact]:
    attribute = re.sub(r"\s+", " ", match.group("attr").lower()).strip()
    raw_value = match.group("v")
    value = cut(raw_value, PHRASE_STOP)
    first = first_word(value)
    attribute_terms = terms(attribute)
    if not value or not attribute_terms or set(attribute.split()) & ATTR_EXCLUDE:
        return []
    if first in PREPOSITIONS:
        # "my birthday is on March 3" keeps; "my car is in the shop" is passing news.
        if not re.search(r"\b(?:[A-Z]\w*|\d+)", value.split(None, 1)[-1]):
            return []
    elif first in TRANSIENT_WORDS or first.endswith("ing") or word_count(value) > 8:
        return []
    if attribute in JOB_ATTRS:
        role = strip_article(value)
        return [Fact("occupation", role, f"works as {article(role)} {role}")]
    if attribute in EMPLOYER_ATTRS:
        employer = re.sub(r"^(?:at|with|for)\s+", "", value, flags=re.IGNORECASE)
        return [Fact("works at", employer, f"works at {employer}")] if proper(employer) else []
    if attribute in HOME_ATTRS:
        place = re.sub(r"^in\s+", "", value, flags=re.IGNORECASE)
        return [Fact("lives in", place, f"lives in {place}")] if proper(place) else []
    if attribute == "name":
        return []
    if attribute.startswith(("favorite ", "favourite ")):
        attribute = "favourite " + attribute.split(" ", 1)[1]
        return [Fact(attribute, value, f"{attribute} is {value}")]
    return [Fact(f"my {' '.join(attribute_terms)}", value, f"{attribute} is {value}")]


_DIETS = (
    r"vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore|omnivore|keto|paleo|"
    r"gluten[- ]free|dairy[- ]free|on an? [\w-]+ diet"
)

_RULES: list[_Rule] = [
    (
        compile_ci(
            r"^(?:please\s+)?(?:you (?:can|should|may|must)\s+|feel free to\s+)?"
            r"call me\s+(?P<v>.+)$"
        ),
        _name,
    ),
    (compile_ci(r"^my name is\s+(?P<v>.+)$"), _name),
    # "The name I use day to day is Max", "the name I go by these days is Jo".
    (
        compile_ci(
            r"^(?:the|my)\s+(?:first\s+|usual\s+|preferred\s+)?name\s+(?:that\s+)?I\s+"
            r"(?:use|go by|answer to|prefer)(?:\s+(?:day to day|day-to-day|these days|now|"
            r"most of the time|every day|at work|with friends))?\s+is\s+(?:now\s+|just\s+)?"
            r"(?P<v>.+)$"
        ),
        _name,
    ),
    (compile_ci(r"^I (?:go by|am called)\s+(?P<v>.+)$"), _name),
    (compile_ci(r"^(?:everyone|people|friends) calls? me\s+(?P<v>.+)$"), _name),
    (compile_ci(rf"^(?:I|we)\s+{ADV}work\s+as\s+(?:a|an)\s+(?P<v>.+)$"), _occupation),
    (compile_ci(rf"^I am\s+{ADV}working\s+as\s+(?:a|an)\s+(?P<v>.+)$"), _occupation),
    (
        compile_ci(r"^I\s+(?:have\s+been|was|got|just\s+got)\s+promoted\s+to\s+(?P<v>.+)$"),
        _occupation,
    ),
    (compile_ci(r"^I am\s+(?:a|an)\s+(?P<v>.+?)\s+by\s+(?:profession|trade)$"), _occupation),
    (compile_ci(rf"^(?:I|we)\s+{ADV}work\s+(?:at|for)\s+(?P<v>.+)$"), _employer),
    (compile_ci(rf"^I am\s+{ADV}(?:working|employed)\s+(?:at|for|by)\s+(?P<v>.+)$"), _employer),
    # "I am with Initech these days": with a name that is not a person's title, an employer.
    (
        compile_ci(
            rf"^I am\s+{ADV}(?:now\s+)?with\s+(?P<v>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*\b.*)$"
        ),
        _employer,
    ),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:started|begun|began)\s+(?:(?:a\s+|my\s+)?(?:new\s+)?"
            r"(?:job|role|position|gig)\s+|working\s+|work\s+)?(?:at|with|for)\s+(?P<v>.+)$"
        ),
        _employer,
    ),
    (compile_ci(rf"^I\s+(?:have\s+)?{ADV}joined\s+(?P<v>.+)$"), _employer),
    # The employer as the subject: "Pemberton Foods hired me", "Acme became my employer". Its
    # name must be capitalised, so "they hired me" or "my sister hired me" name no employer.
    (
        re.compile(
            r"^(?!(?:Nobody|No one|None|Nothing|It|This|That)\b)"
            r"(?P<v>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})\s+(?:has\s+|have\s+)?"
            r"(?:(?:just|finally|officially|now)\s+)?"
            r"(?:[Hh]ired|[Rr]ecruited|took on|taken on|brought on)\s+me\b.*$"
        ),
        _employer,
    ),
    (
        re.compile(
            r"^(?!(?:Nobody|No one|None|Nothing|It|This|That)\b)"
            r"(?P<v>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})\s+(?:has\s+become|became|is)\s+"
            r"(?:now\s+|officially\s+)?my\s+(?:new\s+)?(?:employer|workplace|company)\b.*$"
        ),
        _employer,
    ),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:got|gotten|landed|accepted|took|taken)\s+"
            r"(?:a\s+|an\s+|the\s+)?(?:new\s+)?(?:job|role|position|offer|gig)\s+"
            r"(?:at|with|from)\s+(?P<v>.+)$"
        ),
        _employer,
    ),
    # Taking a job by its paperwork: "I signed the contract with Initech", "signed on with
    # Hooli", "I have accepted Acme's offer", "put pen to paper with Globex". An employer only
    # when its name is capitalised: "I signed the contract with the landlord" names none, and a
    # lease or a mortgage is no job.
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:signed|inked|countersigned)\s+(?:on\s+)?"
            r"(?:(?:the|a|an|my|our)\s+(?:new\s+)?(?:employment\s+|job\s+|work\s+|"
            r"permanent\s+|full[- ]time\s+|part[- ]time\s+)?(?:contract|offer|offer letter|"
            r"papers|paperwork|agreement)\s+)?(?:with|at|for|from)\s+(?P<v>.+)$"
        ),
        _signed_with,
    ),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:accepted|took|taken|signed)\s+"
            r"(?P<v>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})'s\s+(?:job\s+|employment\s+)?"
            r"(?:offer|contract)\b.*$"
        ),
        _signed_with,
    ),
    (
        compile_ci(rf"^I\s+(?:have\s+)?{ADV}put pen to paper\s+(?:with|at)\s+(?P<v>.+)$"),
        _signed_with,
    ),
    (
        compile_ci(rf"^I\s+(?:have\s+)?{ADV}switched\s+(?:jobs\s+|companies\s+)?to\s+(?P<v>.+)$"),
        _employer,
    ),
    (
        compile_ci(
            rf"^I am\s+{ADV}(?:a|an)\s+(?P<role>[\w\s-]+?)\s+(?:at|for|with)\s+(?P<v>[A-Z].*)$"
        ),
        _employer,
    ),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:moved|relocated)\s+(?:back\s+)?(?:to|into)\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:moved|relocated)\s+(?:here\s+|over\s+)?from\s+"
            r"(?P<old>.+?)\s+(?:to|into)\s+(?P<v>.+)$"
        ),
        _location,
    ),
    # Someone or something moved the speaker: "work relocated me to Oslo for good".
    (
        compile_ci(
            r"^(?:[\w&'-]+\s+){1,3}?(?:has\s+|have\s+)?(?:just\s+|finally\s+)?"
            r"(?:relocated|transferred|posted|moved)\s+(?:me|us)\s+(?:over\s+|out\s+)?"
            r"(?:to|into)\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^my\s+(?:home\s+|postal\s+|mailing\s+)?address\s+(?:has\s+)?(?:just\s+)?"
            r"(?:changed|moved)\s+to\s+(?:(?:a|an|the)\s+(?:[\w'-]+\s+){0,3}?in\s+)?(?P<v>.+)$"
        ),
        _location,
    ),
    (compile_ci(rf"^(?:I|we)\s+{ADV}live\s+in\s+(?P<v>.+)$"), _location),
    (
        compile_ci(
            rf"^(?:I am|we are)\s+{ADV}(?:living|based|settled|located|settling|unpacking)\s+"
            r"(?:down\s+)?(?:in|into)\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (
        compile_ci(rf"^(?:I|we)\s+(?:have\s+)?{ADV}settled\s+(?:down\s+)?(?:in|into)\s+(?P<v>.+)$"),
        _location,
    ),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:bought|rented|found)\s+(?:a|an)\s+(?:\w+\s+)?"
            r"(?:place|flat|apartment|house|home)\s+in\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (compile_ci(r"^I am\s+(?:originally\s+)?from\s+(?P<v>.+)$"), _origin),
    (compile_ci(r"^I\s+(?:grew up|was born|was raised)\s+in\s+(?P<v>.+)$"), _origin),
    (
        compile_ci(
            rf"^I (?:am|have been)\s+{ADV}(?P<v>single|married|engaged|divorced|separated|widowed|"
            r"in an? (?:[\w-]+\s+){0,2}?relationship|(?:seeing|dating) someone(?: new)?|"
            r"living with (?:a|my) partner|living together)\b(?P<rest>.*)$"
        ),
        _relationship,
    ),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}got\s+(?P<v>married|engaged|divorced|separated)\b"
            r"(?P<rest>.*)$"
        ),
        _relationship,
    ),
    (compile_ci(rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:broke|broken)\s+up\b"), _broke_up),
    (compile_ci(rf"^I (?:am|have been)\s+{ADV}dating\s+(?P<v>.+)$"), _dating),
    (compile_ci(rf"^I am\s+{ADV}(?:a\s+|an\s+)?(?:strict\s+)?(?P<v>{_DIETS})\b"), _diet),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:gone|went|turned|became|become)\s+(?P<v>{_DIETS})\b"
        ),
        _diet,
    ),
    (
        compile_ci(
            r"^I am\s+(?:now\s+)?(?P<v>\d{1,3})(?:\s+(?:years|yrs)(?:\s+old)?|\s*y/?o)?"
            r"(?!\s*(?:%|percent|minutes?|mins?|hours?|km|miles?|kg|lbs?|pounds?|dollars?|"
            r"euros?|days?|weeks?|months?|times?|\w))"
        ),
        _age,
    ),
    (compile_ci(r"^I\s+(?:just\s+)?turned\s+(?P<v>\d{1,3})\b"), _age),
    (compile_ci(rf"^I\s+{OP_ADV}prefer\s+(?P<v>.+)$"), _prefer),
    # Choosing one option by habit is preferring it: "I go for X", "X is my usual choice".
    # Going for a run or a walk is an outing, and one made every day a routine, no choice.
    (
        compile_ci(
            rf"^I\s+{OP_ADV}(?:(?:usually|always|normally|typically|tend to|would)\s+)?"
            r"(?:go for(?!\s+(?:(?:a|an)\s+)?(?:[\w-]+\s+)?(?:run|walk|swim|jog|hike|ride|"
            r"drive|stroll|spin|paddle|climb|coffee|drink|beer|meal|bite)s?\b)|"
            r"lean towards?|opt for|gravitate towards?|stick (?:with|to)|default to)\s+"
            r"(?!.*\b(?:every|each|daily|weekly|nightly|twice|times a)\b)(?P<v>.+)$"
        ),
        _prefer,
    ),
    (
        compile_ci(
            r"^(?P<v>(?!(?:it|this|that|these|those|which|what)\b)[\w'-]+(?:\s+[\w'-]+){0,5}?)"
            r"\s+(?:is|are)\s+(?:still\s+|now\s+|always\s+)?my\s+(?:usual|default|preferred|"
            r"go-to|first|standard)\s+(?:choice|option|pick|preference)\b.*$"
        ),
        _prefer,
    ),
    (
        compile_ci(
            r"^my\s+(?:usual\s+)?(?:default|go-to|preference|usual choice|usual pick)\s+"
            r"(?:is|are)\s+(?:still\s+|now\s+|always\s+)?(?P<v>.+)$"
        ),
        _prefer,
    ),
    (compile_ci(r"^I would\s+(?:much\s+)?rather\s+(?!not\b)(?P<v>.+)$"), _prefer),
    (
        compile_ci(
            rf"^I\s+{OP_ADV}(?P<verb>love|like|enjoy|adore|hate|dislike|detest|loathe|"
            r"cannot stand|can not stand|do not (?:really\s+)?(?:like|enjoy|love|care for)|"
            r"am (?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fan of|am into|am obsessed with|"
            r"am interested in|am passionate about|am tired of|am sick of|am over)\s+(?P<v>.+)$"
        ),
        _opinion,
    ),
    (
        compile_ci(
            rf"^I\s+{OP_ADV}(?:think|believe|feel|find|reckon|consider)\s+(?:that\s+)?"
            r"(?P<topic>.+?)\s+(?P<cop>is|are|has become|have become|seems|seem)\s+(?P<v>.+)$"
        ),
        _belief,
    ),
    (
        compile_ci(
            rf"^I am\s+{ADV}(?P<verb>recovering from|managing|living with|dealing with|"
            r"coping with|being treated for|in treatment for|undergoing|on medication for|"
            r"in remission from|getting over|in rehab for|on the mend from|"
            r"(?:in|having|doing|getting|on)\s+(?:\w+\s+)?(?:therapy|physio|physiotherapy|"
            r"rehab|rehabilitation|treatment|medication|antibiotics|chemo|chemotherapy|dialysis|"
            r"crutches|steroids|insulin)\s+for)\s+(?P<v>.+)$"
        ),
        _health_status,
    ),
    (
        compile_ci(
            r"^I\s+(?:have\s+|am\s+|was\s+)?(?:just\s+|now\s+|finally\s+)?(?:got|been given|"
            r"given|been)\s+(?:a\s+)?(?:clean bill of health|cleared|the all-clear|all clear)\b.*$"
        ),
        _health_cleared,
    ),
    (
        compile_ci(r"^I\s+(?:have\s+)?(?:fully\s+|finally\s+|completely\s+)?recovered\b.*$"),
        _health_cleared,
    ),
    (compile_ci(r"^I am\s+(?:now\s+|fully\s+|officially\s+)*cleared\b.*$"), _health_cleared),
    (
        compile_ci(
            r"^I\s+(?P<verb>(?:have\s+been|was|got|just\s+got|recently\s+got)\s+diagnosed|"
            r"suffer|am suffering)\s+(?:with|from)\s+(?P<v>.+)$"
        ),
        _health,
    ),
    (
        compile_ci(r"^I\s+(?P<verb>broke|sprained|injured|hurt|tore|fractured)\s+my\s+(?P<v>.+)$"),
        _health,
    ),
    (
        compile_ci(
            r"^I\s+(?P<neg>do not|cannot|can not|am unable to|am not able to|am not allowed to|"
            r"must not|must avoid|avoid|never|refuse to)\s+(?P<v>.+)$"
        ),
        _constraint,
    ),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:started|begun|began|taken up|took up|picked up|"
            r"gotten into|got into)\s+(?P<v>.+)$"
        ),
        _taken_up,
    ),
    (compile_ci(r"^I have been\s+(?P<v>\w+ing\b.+)$"), _ongoing),
    (
        compile_ci(
            r"^I\s+(?P<adv>usually|always|often|normally|typically|generally|regularly|rarely|"
            r"sometimes|tend to)\s+(?P<v>.+)$"
        ),
        _habit,
    ),
    (
        compile_ci(
            r"^I\s+(?:now\s+|also\s+|still\s+)?(?:have|own|have got)\s+"
            r"(?P<det>a|an|two|three|four|five|\d+)\s+(?P<v>.+)$"
        ),
        _possession,
    ),
    (compile_ci(rf"^I am\s+{ADV}(?P<v>.+)$"), _state),
    (
        compile_ci(
            r"^my\s+(?:new\s+|current\s+|updated\s+|usual\s+)?"
            r"(?P<attr>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s+(?:is|are)\s+"
            r"(?:now\s+|still\s+|currently\s+|officially\s+)?(?P<v>.+)$"
        ),
        _my_attribute,
    ),
    (
        compile_ci(
            r"^I\s+(?P<v>(?!am\b|have\b|had\b|was\b|will\b|would\b|did\b)[a-z]+\b.*\b"
            r"(?:every|each|daily|weekly|nightly|twice|times a|on weekends|"
            r"on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b.*)$"
        ),
        _routine,
    ),
]

# Rules whose key depends on the clause's time words: passing mentions are not facts.
_TIME_SENSITIVE = {_opinion, _belief, _state, _constraint, _my_attribute, _possession}


def positive_facts(clause: str) -> list[Fact]:
    """Return the facts one affirmative clause states (first matching rule wins)."""
    for pattern, build in _RULES:
        match = pattern.match(clause)
        if match is None:
            continue
        if build in _TIME_SENSITIVE and TRANSIENT_TIME.search(clause):
            return []
        facts = build(match)
        if facts:
            return facts
    return []


_RETRACTION_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (compile_ci(r"^I am no longer\s+(?P<rest>.+)$"), "I am {rest}"),
    (compile_ci(r"^(?:I|we) (?:do\s+)?no longer\s+(?P<rest>.+)$"), "I {rest}"),
    (
        compile_ci(r"^I am not\s+(?P<rest>.+?)\s+(?:anymore|any more|any longer)\b.*$"),
        "I am {rest}",
    ),
    (compile_ci(r"^I do not\s+(?P<rest>.+?)\s+(?:anymore|any more|any longer)\b.*$"), "I {rest}"),
    (compile_ci(r"^I used to be\s+(?P<rest>.+)$"), "I am {rest}"),
    (compile_ci(r"^I used to\s+(?P<rest>.+)$"), "I {rest}"),
]
_STOPPED = compile_ci(
    r"^I\s+(?:have\s+)?(?:just\s+)?(?:stopped|quit|given up|gave up|dropped)\s+(?P<v>.+)$"
)
_LEFT = compile_ci(
    r"^(?:I|we)\s+(?:have\s+)?(?:just\s+|finally\s+)?(?:left|resigned from|said goodbye to|"
    r"bid farewell to|waved goodbye to|moved on from)\s+(?P<v>.+)$"
)
_MOVED_AWAY = compile_ci(
    r"^(?:I|we)\s+(?:have\s+)?(?:just\s+)?moved\s+(?:out of|away from)\s+(?P<v>.+)$"
)
_SUCCESSOR = compile_ci(r"^\s+(?:for|to go to|to join)\s+(?P<v>.+)$")
_JOB = compile_ci(r"^(?:my\s+)?(?:job|position|role)(?:\s+(?:at|with)\s+(?P<org>.+))?$")
_WORK_AT = compile_ci(r"^(?:working|work)\s+(?:at|for)\s+(?P<org>.+)$")


def retracted_facts(clause: str) -> list[Fact] | None:
    """Return the facts a clause withdraws, or ``None`` when it withdraws nothing.

    ``I am no longer vegetarian``, ``I do not live in Leeds anymore``, ``I used to smoke``,
    ``I quit my job``, ``I left Acme``. The returned facts name what to delete; values are only
    required to match for slots like employer or city (``I left Acme`` leaves ``Globex`` alone).
    """
    found = _retracted(clause)
    if found is None:
        return None
    return [fact if fact.instead_of else replace(fact, retraction=True) for fact in found]


def _retracted(clause: str) -> list[Fact] | None:
    for pattern, template in _RETRACTION_REWRITES:
        match = pattern.match(clause)
        if match:
            rest = match.group("rest")
            stated = [f for f in positive_facts(template.format(rest=rest)) if not f.retraction]
            if stated or template.startswith("I am"):
                return stated
            # "I used to smoke", "I no longer run every morning": an activity or a habit.
            rest_terms = terms(rest)
            key = activity_key(rest)
            found = [Fact(key, rest, "", matchable=False)] if key else []
            if len(rest_terms) >= 1:
                habit = f"habit {' '.join(rest_terms[:2])}"
                found.append(Fact(habit, rest, "", matchable=False))
            return found
    match = _STOPPED.match(clause)
    if match:
        target = cut(match.group("v"), PHRASE_STOP)
        job = _JOB.match(target) or _WORK_AT.match(target)
        if job:
            org = cut(job.group("org") or "", NAME_STOP)
            return [Fact("works at", org, "", matchable=bool(org))]
        if proper(target):
            return [Fact("works at", target, "")]
        key = activity_key(target)
        return [Fact(key, target, "", matchable=False)] if key else []
    match = _LEFT.match(clause)
    if match:
        target = cut(match.group("v"), NAME_STOP)
        if _JOB.match(target):
            return [Fact("works at", "", "", matchable=False)]
        if not proper(target):
            return []
        withdrawn = [Fact("works at", target, ""), Fact("lives in", target, "")]
        successor = _SUCCESSOR.match(match.group("v")[len(target) :])
        new = cut(successor.group("v"), NAME_STOP) if successor else ""
        if not new or not proper(new):
            return withdrawn
        # "I left Acme for Initech": the newcomer first, so that it finds the slot that held
        # the old value before the withdrawals let it go.
        return [Fact("works at", new, f"works at {new}", instead_of=target), *withdrawn]
    match = _MOVED_AWAY.match(clause)
    if match:
        target = cut(match.group("v"), NAME_STOP)
        return [Fact("lives in", target, "")] if proper(target) else []
    return None
