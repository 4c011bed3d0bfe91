"""Clause rules: generic English patterns that turn one first-person clause into slot facts.

A clause arrives already filtered (no question, hypothetical, sarcasm or reported speech), with
contractions expanded (``I am``, ``do not``) and leading discourse markers removed. Rules are tried
in order and the first that yields facts wins. Every key is a normalised predicate (``works at``,
``lives in``, ``health``, ``opinion remot work``, ``constraint vegetarian``…): a later value under
the same key replaces the earlier one, so single-valued slots (employer, city, relationship,
health, a view on one topic) are keyed by the slot and set-like ones (constraints, habits,
completed tasks) by their content. Nothing here knows any scenario's vocabulary; the closed word
classes (diets, relationship statuses, stance words, medical nouns, light verbs) are ordinary
English.

``framed_facts`` reads the clauses that only make sense in context: a bare stance (``I'm
undecided``) after a sentence that names the topic, ``It's Acme now`` after ``Where I work
changed``, ``I need step-free access`` under a ``keep this in mind for bookings:`` header.
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
    MEDICAL,
    MENTAL_VERBS,
    NAME_STOP,
    NON_OBJECTS,
    NOT_CONSTRAINT_VERBS,
    OP_ADV,
    PHRASE_STOP,
    POSSESSION_EXCLUDE,
    PREFERENCE_TOPICS,
    PREPOSITIONS,
    STANCE,
    THIRD_PARTY,
    TOPIC_STOP,
    TRANSIENT_TIME,
    TRANSIENT_WORDS,
    WORKPLACE_START,
    article,
    compile_ci,
    cut,
    first_word,
    habit_key,
    name_value,
    proper,
    strip_article,
    word_count,
    word_set,
)
from drift_pipeline.memory.backends._text import terms

__all__ = [
    "Fact",
    "framed_facts",
    "opinion_fact",
    "positive_facts",
    "preference_fact",
    "retracted_facts",
    "workplace_facts",
]


@dataclass(frozen=True)
class Fact:
    """One extracted fact about the speaker, before it is dated and attributed.

    Attributes:
        predicate: Normalised key; a new value under the same key replaces the old one.
        value: Surface value (``Acme Corp``); compared loosely for NOOP and retraction matching.
        text: Readable predicate phrase (``works at Acme Corp``), shown after the subject.
        matchable: A retraction of this key applies only when the stored value matches ``value``.
        retraction: The clause withdraws this fact instead of stating it.

    """

    predicate: str
    value: str
    text: str
    matchable: bool = True
    retraction: bool = False


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], list[Fact]]]

# Proper-noun value: capitalised words, possibly after "the".
_PROPER = (
    r"(?:the\s+)?[A-Z0-9][\w&'.-]*(?:\s+(?:[A-Z0-9][\w&'.-]*|&|and|of|de|du|la|le|upon|on|am))*"
)
_AND_MORE = re.compile(
    r"\s+and\s+(?:I|need|needs|have|has|am|can|will|must|should|so|then|it|that|now|felt|feel)\b"
    r"|\s+which\b|\s+(?:at the moment|right now|for now|these days|lately)\b",
    re.IGNORECASE,
)


def _phrase(raw: str) -> str:
    """A value phrase: cut at a clause stop (comma, ``because``…) or a following ``and I …``."""
    kept = cut(raw, PHRASE_STOP)
    match = _AND_MORE.search(kept)
    return kept[: match.start()].strip() if match else kept


def _proper_value(raw: str) -> str:
    """The leading name of ``raw`` (``Acme Corp`` of ``Acme Corp last week``), or ``""``."""
    value = re.sub(r"\s+I\b.*$", "", cut(raw, NAME_STOP))  # "Bristol I sleep better"
    return value if proper(value) else ""


# --- name ----------------------------------------------------------------------------------------


def _name(match: re.Match[str]) -> list[Fact]:
    value = name_value(match.group("v"))
    return [Fact("name", value, f"goes by {value}")] if value else []


# --- work --------------------------------------------------------------------------------------


def workplace_facts(value: str) -> list[Fact]:
    """``works at <value>`` when ``value`` looks like a name."""
    value = _proper_value(value)
    return [Fact("works at", value, f"works at {value}")] if value else []


def _employer(match: re.Match[str]) -> list[Fact]:
    facts = workplace_facts(match.group("v"))
    if not facts:
        return []
    role = match.groupdict().get("role")
    if role:
        role = cut(role, NAME_STOP)
        if role and word_count(role) <= 4:
            facts.append(Fact("occupation", role, f"works as {article(role)} {role}"))
    return facts


def _left_job(match: re.Match[str]) -> list[Fact]:
    value = _proper_value(match.groupdict().get("v") or "")
    return [Fact("works at", value, "", matchable=bool(value), retraction=True)]


def _occupation(match: re.Match[str]) -> list[Fact]:
    role = strip_article(cut(match.group("v"), NAME_STOP))
    if not role or word_count(role) > 5:
        return []
    return [Fact("occupation", role, f"works as {article(role)} {role}")]


# --- home ------------------------------------------------------------------------------------


def home_facts(value: str) -> list[Fact]:
    """``lives in <value>`` when ``value`` looks like a place name."""
    value = re.sub(r"^the\s+", "", value.strip())
    place = name_value(value) if value[:1].isupper() else ""
    place = re.sub(r"\s+I$", "", cut(place, NAME_STOP)) if place else ""
    return [Fact("lives in", place, f"lives in {place}")] if proper(place) else []


def _location(match: re.Match[str]) -> list[Fact]:
    return home_facts(match.group("v"))


def _origin(match: re.Match[str]) -> list[Fact]:
    value = cut(match.group("v"), NAME_STOP)
    return [Fact("from", value, f"is from {value}")] if proper(value) else []


# --- relationship ---------------------------------------------------------------------------

_RELATIONSHIP = (
    r"single|married|engaged|divorced|separated|widowed|newly ?wed|a newlywed|"
    r"in an? (?:[\w-]+\s+){0,2}relationship|in a civil partnership|"
    r"seeing someone(?: new)?|dating(?: someone)?(?: new)?|"
    r"living (?:with (?:a|my) (?:partner|girlfriend|boyfriend|fianc[eé]e?)|together)|cohabiting"
)


def _relationship(match: re.Match[str]) -> list[Fact]:
    status = re.sub(r"\s+", " ", match.group("v").lower())
    rest = match.groupdict().get("rest") or ""
    partner = re.match(r"\s+(?:to|with)\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)", rest)
    text = f"relationship status: {status}" + (f" (to {partner.group(1)})" if partner else "")
    return [Fact("relationship status", status, text)]


def _broke_up(match: re.Match[str]) -> list[Fact]:
    return [Fact("relationship status", "single", "relationship status: single")]


def _dating(match: re.Match[str]) -> list[Fact]:
    partner = name_value(match.group("v"))
    if not partner:
        return []
    status = f"dating {partner}"
    return [Fact("relationship status", status, f"relationship status: {status}")]


# --- health ----------------------------------------------------------------------------------


def health_fact(state: str) -> list[Fact]:
    """The current health situation (one slot: a new situation replaces the old one)."""
    state = _phrase(state)
    if not state or word_count(state) > 9:
        return []
    return [Fact("health", state, f"health: {state}", matchable=False)]


def _health_strong(match: re.Match[str]) -> list[Fact]:
    return health_fact(match.group("v"))


def _health_weak(match: re.Match[str]) -> list[Fact]:
    """``managing …``, ``dealing with …``: health only when the object is medical."""
    state = match.group("v")
    return health_fact(state) if MEDICAL.search(_phrase(state)) else []


def _diagnosed(match: re.Match[str]) -> list[Fact]:
    condition = _phrase(match.group("v"))
    if not terms(condition):
        return []
    verb = match.group("verb").lower()
    if verb.startswith(("suffer", "am suffer")):
        return health_fact(f"suffering from {condition}")
    return health_fact(f"diagnosed with {condition}")


def _injury(match: re.Match[str]) -> list[Fact]:
    part = _phrase(match.group("v"))
    if not terms(part) or word_count(part) > 4:
        return []
    return health_fact(f"{match.group('verb').lower()} their {part}")


# --- constraints ------------------------------------------------------------------------------


def constraint_fact(text: str) -> list[Fact]:
    """A standing constraint, keyed by its content so several can hold at once."""
    text = re.sub(r"\s+(?:completely|entirely|altogether|whatsoever)$", "", _phrase(text))
    found = terms(text)
    while len(found) > 1 and found[0] in _CONSTRAINT_VERBS:
        found = found[1:]  # "cannot eat gluten" and "avoids gluten" are about gluten
    if not found or word_count(text) > 10:
        return []
    return [Fact(f"constraint {' '.join(found[:3])}", text, f"constraint: {text}", False)]


_CONSTRAINT_VERBS = word_set(
    "cannot never avoid need keep use must refus unabl allow has able strictly"
)


_DIET_WORDS = (
    r"vegetarian|vegan|pescatarian|pescetarian|flexitarian|plant[- ]based|gluten[- ]free|"
    r"dairy[- ]free|lactose[- ]intolerant|nut[- ]free|kosher|halal|sober|teetotal|tee-?total|"
    r"alcohol[- ]free|coeliac|celiac|diabetic|on an? [\w-]+ diet|[\w-]+ intolerant"
)


def _diet(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"is {match.group('v').lower()}")


def _allergy(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"is {match.group('v')}")


def _has_allergy(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"has {match.group('v')}")


def _eats(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"{match.group('verb').lower()}s {match.group('v')}")


def _keeps(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"keeps {match.group('v')}")


def _must(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"has to {match.group('v')}")


def _needs(match: re.Match[str]) -> list[Fact]:
    value = match.group("v")
    if first_word(value) in NON_OBJECTS or first_word(value) in {"to", "some", "a", "an", "help"}:
        return []
    return constraint_fact(f"needs {value}")


def _uses_aid(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"uses {match.group('v')}")


def _for_me(match: re.Match[str]) -> list[Fact]:
    """``dairy is a problem for me``, ``long-haul travel is off the table``."""
    subject = match.group("s").strip()
    if first_word(subject) in NON_OBJECTS or THIRD_PARTY.match(subject):
        return []
    if word_count(subject) > 6 or not terms(subject):
        return []
    return constraint_fact(f"{subject} {match.group('p')}")


def _no_x_for_me(match: re.Match[str]) -> list[Fact]:
    value = match.group("v").strip()
    if not terms(value) or word_count(value) > 7 or first_word(value) in _NO_IDIOMS:
        return []
    return constraint_fact(f"no {value}")


# "No problem for me", "no rush": idioms, not constraints.
_NO_IDIOMS = word_set(
    "problem problems worries worry rush idea clue way thanks doubt need pressure"
)


def _everything(match: re.Match[str]) -> list[Fact]:
    return constraint_fact(f"everything has to be {match.group('v')}")


_NEGATIVE_PHRASES = {
    "do not": "does not", "cannot": "cannot", "can not": "cannot", "never": "never",
    "am unable to": "is unable to", "am not able to": "is not able to",
    "am not allowed to": "is not allowed to", "must not": "must not", "must avoid": "must avoid",
    "avoid": "avoids", "refuse to": "refuses to",
}  # fmt: skip


def _constraint(match: re.Match[str]) -> list[Fact]:
    rest = _phrase(match.group("v"))
    rest_terms = terms(rest)
    first = first_word(rest)
    if (
        not rest_terms
        or first in MENTAL_VERBS
        or first in NOT_CONSTRAINT_VERBS
        or first in NON_OBJECTS
        or word_count(rest) > 8
    ):
        return []
    negation = _NEGATIVE_PHRASES.get(re.sub(r"\s+", " ", match.group("neg").lower()), "not")
    return constraint_fact(f"{negation} {rest}")


# --- habits ----------------------------------------------------------------------------------


def habit_fact(activity: str) -> list[Fact]:
    """A habit, keyed by the activity (``habit cold shower``); several can hold at once."""
    activity = _phrase(activity)
    key = habit_key(activity)
    if key is None or first_word(activity) in NON_OBJECTS or word_count(activity) > 8:
        return []
    if THIRD_PARTY.match(activity):
        return []
    return [Fact(key, activity, f"habit: {activity}", False)]


def _habit_subject(match: re.Match[str]) -> list[Fact]:
    return habit_fact(match.group("v"))


def _taken_up(match: re.Match[str]) -> list[Fact]:
    activity = _phrase(match.group("v"))
    started = match.group(0).lower().split()[1:3]
    if {"started", "begun", "began"} & set(started) and first_word(activity) in _DETERMINERS:
        return []  # "I started the washing machine": a one-off, not an activity taken up
    if re.match(r"^(?:a|an|the|my)?\s*(?:new\s+)?(?:job|role|position|gig)\b", activity, re.I):
        return []
    if first_word(activity) in NON_OBJECTS:
        return []
    return habit_fact(activity)


_DETERMINERS = word_set("the a an this that my our his her their its some")


def _ongoing(match: re.Match[str]) -> list[Fact]:
    activity = _phrase(match.group("v"))
    if not FREQUENCY.search(activity):
        return []
    return habit_fact(activity)


def _main_verb(phrase: str) -> str:
    """The verb a habit is about: ``do not mind the rain`` → ``mind``."""
    for word in phrase.lower().split():
        if word not in {"do", "does", "not", "really", "just", "even", "ever"}:
            return word.strip(",.;:!?")
    return ""


def _habit(match: re.Match[str]) -> list[Fact]:
    rest = _phrase(match.group("v"))
    if not terms(rest) or _main_verb(rest) in MENTAL_VERBS or word_count(rest) > 10:
        return []
    if set(rest.lower().split()[1:3]) & NON_OBJECTS:  # "hear it every morning"
        return []
    if _main_verb(rest) in NOT_CONSTRAINT_VERBS:
        return []
    return habit_fact(rest)


# --- preferences and views ---------------------------------------------------------------------


def preference_fact(value: str) -> list[Fact]:
    """``prefers <value>``, keyed by what the preference is about (``contact``, ``answer``)."""
    value = strip_article(_phrase(value))
    value_terms = terms(value)
    if not value_terms or first_word(value) in NON_OBJECTS or word_count(value) > 8:
        return []
    value_words = set(value.lower().split())
    if value_words & {"you", "your", "yours"} or value_words & _CHOICE_NOUNS:
        return []  # "the second option you gave": a choice in passing, not a preference
    words = re.findall(r"[a-z][a-z-]*", value.lower())
    topic = next((PREFERENCE_TOPICS[w] for w in words if w in PREFERENCE_TOPICS), None)
    return [Fact(f"prefers {topic or value_terms[-1]}", value, f"prefers {value}")]


_CHOICE_NOUNS = word_set(
    "option options one ones choice version idea suggestion draft former latter"
)


def _prefer(match: re.Match[str]) -> list[Fact]:
    raw = match.group("v")
    comparison = COMPARISON.search(raw)
    main = raw[: comparison.start()] if comparison else raw
    main = re.sub(r"^to\s+", "", _phrase(main), flags=re.IGNORECASE)
    facts: list[Fact] = []
    stated = preference_fact(main)
    if not stated:
        return []
    if comparison:
        other = preference_fact(raw[comparison.end() :])
        if other and other[0].predicate != stated[0].predicate:
            # "I prefer tea to coffee" also withdraws an earlier "prefers coffee".
            facts.append(replace(other[0], text="", retraction=True))
    return [*facts, *stated]


def _suits_me(match: re.Match[str]) -> list[Fact]:
    subject = match.group("v").strip()
    if first_word(subject) in NON_OBJECTS or THIRD_PARTY.match(subject):
        return []
    return preference_fact(subject)


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
    obj = re.sub(r"^to\s+", "", _phrase(match.group("v")), flags=re.IGNORECASE)
    object_terms = terms(obj)
    if not object_terms or first_word(obj) in NON_OBJECTS or word_count(obj) > 8:
        return []
    if first_word(obj) in {"when", "it", "that"}:
        return []
    return [Fact(f"opinion {' '.join(object_terms[:3])}", obj, f"{phrase} {obj}", False)]


def _belief(match: re.Match[str]) -> list[Fact]:
    topic = match.group("topic").strip()
    claim = _phrase(match.group("v"))
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


def clean_topic(raw: str) -> str:
    """The topic of a view: ``the four-day work week`` of ``the four-day work week last year``."""
    topic = raw.strip()
    stop = TOPIC_STOP.search(topic)
    if stop:
        topic = topic[: stop.start()]
    return re.sub(r"[^\w)'’-]+$", "", topic.strip()).strip()


def opinion_fact(topic: str, stance: str) -> list[Fact]:
    """``view on <topic>: <stance>``, keyed by the topic (one current view per topic)."""
    topic = clean_topic(topic)
    stance = re.sub(r"\s+", " ", _phrase(stance)).strip()
    stance = re.sub(r"^(?:still|now)\s+", "", stance, flags=re.IGNORECASE)
    topic_terms = terms(topic)
    if not topic_terms or not stance or word_count(topic) > 7:
        return []
    if first_word(topic) in NON_OBJECTS or THIRD_PARTY.match(topic):
        return []
    key = f"opinion {' '.join(topic_terms[:4])}"
    return [Fact(key, stance.lower(), f"view on {topic}: {stance.lower()}")]


def _stance_on(match: re.Match[str]) -> list[Fact]:
    return opinion_fact(match.group("topic"), match.group("stance"))


# --- completed tasks ---------------------------------------------------------------------------


def completed_fact(task: str) -> list[Fact]:
    """A finished task, keyed by what it is; finished tasks accumulate."""
    task = _phrase(task)
    found = terms(task)
    if not found or word_count(task) > 8 or first_word(task) in NON_OBJECTS:
        return []
    if THIRD_PARTY.match(task):
        return []
    return [Fact(f"completed {' '.join(found[:4])}", task, f"completed task: {task}", False)]


def _completed(match: re.Match[str]) -> list[Fact]:
    return completed_fact(match.group("v"))


# --- everything else -------------------------------------------------------------------------


def _age(match: re.Match[str]) -> list[Fact]:
    age = match.group("v")
    if not 1 <= int(age) <= 120:
        return []
    return [Fact("age", age, f"is {age} years old")]


def _possession(match: re.Match[str]) -> list[Fact]:
    owned = _phrase(match.group("v"))
    owned_terms = terms(owned)
    if not owned_terms or owned_terms[0] in POSSESSION_EXCLUDE or word_count(owned) > 6:
        return []
    if first_word(owned) in POSSESSION_EXCLUDE:
        return []
    # "I've got 300 things to fit in", "I have two calls to make": a to-do, not a possession.
    if re.search(r"\bto\s+[a-z]+", owned) or owned_terms[0] in _TODO_NOUNS:
        return []
    determiner = match.group("det").lower()
    return [Fact(f"has {owned_terms[0]}", owned, f"has {determiner} {owned}", False)]


_TODO_NOUNS = word_set("thing stuff task errand item email call meeting chore job deadline")


def _state(match: re.Match[str]) -> list[Fact]:
    """``I am X``: an identity (``a nurse``), a lasting activity, or a lasting state."""
    raw = match.group("v")
    if re.match(r"^(?:a|an)\s", raw, re.IGNORECASE):
        noun_phrase = strip_article(cut(raw, NAME_STOP))
        np_terms = terms(noun_phrase)
        first = first_word(noun_phrase)
        if not np_terms or first in TRANSIENT_WORDS or first in {"bit", "lot", "little"}:
            return []
        if set(noun_phrase.lower().split()) & _STANCE_NOUNS:  # "a huge fan of…", "a convert"
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
    state = _phrase(raw)
    first = first_word(state)
    if first in DURABLE_GERUNDS:
        second = state.lower().split()[1:2]
        if word_count(state) > 8 or set(second) & {"a", "so", "more", "how", "about", "to"}:
            return []  # "I'm learning a lot", "I'm learning how it works"
        return habit_fact(state)
    if not first or first in TRANSIENT_WORDS or first.endswith("ing") or word_count(state) > 6:
        return []
    if not first[0].isalpha() or re.fullmatch(STANCE, state, re.IGNORECASE):
        return []  # a bare stance needs its topic (framed_facts)
    state_terms = terms(state)
    if not state_terms or first in _STATE_EXCLUDE:
        return []
    return [Fact(f"is {' '.join(state_terms[:3])}", state, f"is {state}", False)]


_STANCE_NOUNS = word_set("fan supporter critic sceptic skeptic believer convert advocate opponent")
_STATE_EXCLUDE = word_set(
    """hooked thrilled delighted sold convinced done finished cleared positive sure certain
    definitely totally literally officially at with"""
)


def _my_attribute(match: re.Match[str]) -> list[Fact]:
    attribute = re.sub(r"\s+", " ", match.group("attr").lower()).strip()
    raw_value = match.group("v")
    value = _phrase(raw_value)
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
        return workplace_facts(value)
    if attribute in HOME_ATTRS:
        return home_facts(re.sub(r"^in\s+", "", value, flags=re.IGNORECASE))
    if attribute in {"name", "health", "diet"} or attribute.startswith(("relationship", "view")):
        return []
    if attribute.startswith(("favorite ", "favourite ")):
        attribute = "favourite " + attribute.split(" ", 1)[1]
        return [Fact(attribute, value, f"{attribute} is {value}")]
    return [Fact(f"my {' '.join(attribute_terms)}", value, f"{attribute} is {value}")]


_EMPLOY_NOUNS = (
    r"manager|boss|team|colleagues|coworkers|co-workers|office|desk|employer|company|job|role|"
    r"position|contract|badge|onboarding|start date"
)
_HABIT_WORDS = (
    r"(?:habit|routine|ritual|thing|"
    r"part of (?:my|the) (?:daily |morning |evening )?(?:routine|day|week))"
)

_RULES: list[_Rule] = [
    # --- name
    (compile_ci(r"^(?:please\s+)?(?:you can\s+|feel free to\s+)?call me\s+(?P<v>.+)$"), _name),
    (compile_ci(r"^my name is\s+(?P<v>.+)$"), _name),
    (compile_ci(r"^I (?:go by|am called|am known as)\s+(?P<v>.+)$"), _name),
    (
        compile_ci(
            r"^I\s+(?:would like|want|prefer|like|wish)\s+to be (?:called|known as)\s+(?P<v>.+)$"
        ),
        _name,
    ),
    (compile_ci(r"^(?:everyone|people|friends) calls? me\s+(?P<v>.+)$"), _name),
    (
        re.compile(
            r"^(?i:it is|it's)\s+(?P<v>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)(?:,?\s+not\s+[^,]+)?,?\s+"
            r"(?i:when (?:you|people) (?:address|call|greet|write to|talk to) me)\b"
        ),
        _name,
    ),
    # --- work
    (compile_ci(rf"^(?:I|we)\s+{ADV}work\s+as\s+(?:a|an)\s+(?P<v>.+)$"), _occupation),
    (compile_ci(rf"^I am\s+{ADV}working\s+as\s+(?:a|an)\s+(?P<v>.+)$"), _occupation),
    (
        compile_ci(r"^I\s+(?:have\s+been|was|got|just\s+got)\s+promoted\s+to\s+(?P<v>.+)$"),
        _occupation,
    ),
    (compile_ci(r"^I am\s+(?:a|an)\s+(?P<v>.+?)\s+by\s+(?:profession|trade)$"), _occupation),
    (compile_ci(rf"^(?:I|we)\s+{ADV}work\s+(?:at|for|with)\s+(?P<v>.+)$"), _employer),
    (
        compile_ci(rf"^I am\s+{ADV}(?:working|employed)\s+(?:at|for|by|with)\s+(?P<v>.+)$"),
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
    (compile_ci(rf"^I\s+(?:am|will be)\s+{ADV}joining\s+(?P<v>.+)$"), _employer),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:got|gotten|landed|accepted|took|taken|signed)\s+"
            r"(?:a\s+|an\s+|the\s+|their\s+)?(?:new\s+)?(?:job|role|position|offer|gig|contract)"
            r"(?:\s+offer)?\s+(?:at|with|from)\s+(?P<v>.+)$"
        ),
        _employer,
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
    # "I'm at Acme now, not Globex": a contrast names the new employer.
    (
        re.compile(
            rf"^(?i:I am)\s+(?i:now\s+)?(?i:at|with)\s+(?P<v>{_PROPER})"
            r"(?:\s+(?i:now|these days))?,?"
            rf"\s+(?i:not)\s+(?:at\s+|with\s+)?{_PROPER}$"
        ),
        _employer,
    ),
    (
        re.compile(
            r"^(?:(?i:today|yesterday|tomorrow|it|this|that)\s+)?(?:(?i:is|was)\s+)?(?i:my\s+)?"
            rf"(?i:{WORKPLACE_START})\s+(?i:full\s+)?(?i:day|week|month)\s+(?i:at|with)\s+"
            rf"(?P<v>{_PROPER})"
        ),
        _employer,
    ),
    (
        re.compile(
            rf"^(?P<v>{_PROPER})\s+(?i:made|gave|offered)\s+me\s+(?i:an?|the)\s+"
            r"(?i:job(?:\s+offer)?|offer|position|role)\b.*\b"
            r"(?i:could not|cannot|can not|did not|would not) (?i:refuse|resist)"
        ),
        _employer,
    ),
    (re.compile(rf"^(?P<v>{_PROPER})\s+(?i:has\s+)?(?i:hired|took on|taken on)\s+me\b"), _employer),
    (
        re.compile(
            rf"^(?i:HR|human resources|the recruiter|recruiting|payroll|the hiring team)\s+"
            rf"(?i:at|from)\s+(?P<v>{_PROPER})\s+(?i:sent|emailed|mailed|confirmed|finalised|"
            r"finalized|signed)\b.*\b(?i:my)\s+(?i:contract|offer|start date|paperwork)"
        ),
        _employer,
    ),
    (
        re.compile(
            rf"^(?i:my)\s+(?i:new\s+|current\s+)?(?i:{_EMPLOY_NOUNS})\s+(?i:at|with)\s+(?P<v>{_PROPER})"
        ),
        _employer,
    ),
    (
        compile_ci(
            r"^(?:the company I (?:work for|work at|am with)|where I work|my workplace)\s+is\s+"
            r"(?:now\s+)?(?P<v>.+)$"
        ),
        _employer,
    ),
    (
        compile_ci(
            r"^I\s+(?:have\s+)?(?:just\s+)?(?:handed|turned|put|gave|given|submitted)\s+(?:in\s+)?"
            r"my\s+(?:notice|resignation)(?:\s+(?:in\s+)?(?:at|to)\s+(?P<v>.+))?$"
        ),
        _left_job,
    ),
    (
        compile_ci(
            r"^(?:.*?\b(?:is|was)\s+)?my last day at\s+(?P<v>.+?)(?:\s+(?:is|was|will be)\b.*)?$"
        ),
        _left_job,
    ),
    # --- home
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:moved|relocated)\s+(?:back\s+)?(?:to|into)\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (compile_ci(rf"^(?:I|we)\s+{ADV}live\s+in\s+(?P<v>.+)$"), _location),
    (
        compile_ci(rf"^(?:I am|we are)\s+{ADV}(?:living|based|settled|located)\s+in\s+(?P<v>.+)$"),
        _location,
    ),
    (compile_ci(rf"^(?:I|we)\s+(?:have\s+)?{ADV}settled\s+(?:down\s+)?in\s+(?P<v>.+)$"), _location),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:bought|rented|found)\s+(?:a|an)\s+(?:\w+\s+)?"
            r"(?:place|flat|apartment|house|home)\s+in\s+(?P<v>.+)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^(?:(?:I|we)\s+)?(?:have\s+)?(?:just\s+|finally\s+)?signed\s+(?:the|a|our|my)\s+"
            r"(?:new\s+)?(?:lease|rental agreement|tenancy|mortgage)\b.*?\bin\s+(?P<v>[A-Z].*)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^(?:the\s+(?:city|town|place)\s+(?:I|we)\s+(?:live in|call home)|where (?:I|we) live|"
            r"home)\s+is\s+(?:now\s+)?(?P<v>[A-Z].*)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^(?:the\s+)?(?:movers|removal (?:van|men|company|team)|moving (?:van|truck|company))"
            r"\b.*?\b(?:in|to|at)\s+(?P<v>[A-Z].*)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^.*?\b(?:our|my)\s+new\s+(?:place|flat|apartment|house|home|city)\s+in\s+"
            r"(?P<v>[A-Z].*)$"
        ),
        _location,
    ),
    (
        compile_ci(
            r"^.*?\bhere in\s+(?P<v>[A-Z][^,;]*?)\s+since\s+(?:I|we)\s+(?:moved|arrived)\b.*$"
        ),
        _location,
    ),
    (
        compile_ci(r"^.*?\b(?:the|our|my)\s+move\s+(?:from\s+.+?\s+)?to\s+(?P<v>[A-Z].*)$"),
        _location,
    ),
    (compile_ci(r"^I am\s+(?:originally\s+)?from\s+(?P<v>.+)$"), _origin),
    (compile_ci(r"^I\s+(?:grew up|was born|was raised)\s+in\s+(?P<v>.+)$"), _origin),
    # --- relationship
    (
        compile_ci(
            rf"^I am\s+{ADV}(?P<v>{_RELATIONSHIP})(?P<rest>(?:\s+(?:to|with)\s+[A-Z][\w-]*)?)"
            r"(?:\s+(?:now|these days|again|at last))?$"
        ),
        _relationship,
    ),
    (
        compile_ci(
            rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:got|gotten)\s+(?P<v>married|engaged|divorced|separated)\b"
            r"(?P<rest>.*)$"
        ),
        _relationship,
    ),
    (compile_ci(rf"^(?:I|we)\s+(?:have\s+)?{ADV}(?:broke|broken)\s+up\b"), _broke_up),
    (compile_ci(rf"^I am\s+{ADV}dating\s+(?P<v>[A-Z].*)$"), _dating),
    # --- health
    (
        compile_ci(
            rf"^I am\s+{ADV}(?P<v>(?:recovering|recuperating|convalescing)\s+from\s+.+|"
            r"being treated for\s+.+|undergoing\s+.+|"
            r"in\s+(?:physio(?:therapy)?|rehab(?:ilitation)?|treatment|remission|recovery|a cast|"
            r"hospital)\b.*|"
            r"on\s+(?:medication|antibiotics|crutches|bed rest|sick leave|medical leave)\b.*|"
            r"(?:cleared|discharged|given the all-clear|in the clear|fully recovered|recovered|"
            r"healthy again|back to full health|pregnant)\b.*)$"
        ),
        _health_strong,
    ),
    (
        compile_ci(
            rf"^I am\s+{ADV}(?P<v>(?:managing|dealing with|living with|battling|fighting|"
            r"coping with|struggling with|nursing)\s+.+)$"
        ),
        _health_weak,
    ),
    (
        compile_ci(
            r"^I\s+(?P<verb>(?:have\s+been|was|got|just\s+got|recently\s+got)\s+diagnosed|"
            r"suffer|am suffering)\s+(?:with|from)\s+(?P<v>.+)$"
        ),
        _diagnosed,
    ),
    (
        compile_ci(
            r"^I\s+(?:have\s+)?(?P<verb>broke|broken|sprained|injured|hurt|tore|torn|fractured)\s+"
            r"my\s+(?P<v>.+)$"
        ),
        _injury,
    ),
    # --- constraints
    (
        compile_ci(
            rf"^I am\s+{ADV}(?:a\s+|an\s+)?(?:strict\s+|strictly\s+|fully\s+|completely\s+|"
            rf"totally\s+)?(?P<v>{_DIET_WORDS})\b"
        ),
        _diet,
    ),
    (
        compile_ci(
            rf"^I\s+(?:have\s+)?{ADV}(?:gone|went|turned|became|become)\s+(?:fully\s+)?"
            rf"(?P<v>{_DIET_WORDS})\b"
        ),
        _diet,
    ),
    (
        compile_ci(
            rf"^I am\s+{ADV}(?:severely\s+|very\s+|really\s+|mildly\s+|seriously\s+)?"
            r"(?P<v>(?:allergic|intolerant|sensitive)\s+to\s+.+)$"
        ),
        _allergy,
    ),
    (
        compile_ci(
            r"^I\s+(?:have|have got)\s+(?P<v>(?:a|an)\s+(?:\w+\s+){0,2}(?:allergy|intolerance|"
            r"sensitivity)(?:\s+to\s+.+)?)$"
        ),
        _has_allergy,
    ),
    (
        compile_ci(
            rf"^I\s+{ADV}(?P<verb>eat|drink)\s+(?P<v>(?:only\s+)?(?:vegan|vegetarian|kosher|halal|"
            r"gluten[- ]free|dairy[- ]free|plant[- ]based|pescatarian)\b.*)$"
        ),
        _eats,
    ),
    (
        compile_ci(
            rf"^I\s+{ADV}keep\s+(?P<v>kosher|halal|(?:my\s+)?\w+\s+(?:\w+\s+)?(?:free|clear)\s+"
            r"(?:of|from)\s+.+)$"
        ),
        _keeps,
    ),
    (
        compile_ci(
            r"^I\s+(?:have to|must|need to|got to|have got to)\s+(?P<v>(?:eat|drink|stay|avoid|"
            r"keep|stick to)\b.+)$"
        ),
        _must,
    ),
    (
        compile_ci(
            r"^I\s+(?:really\s+)?need\s+(?P<v>.+?)\s+(?:everywhere|wherever I go|at all times|"
            r"always|no matter what)\b.*$"
        ),
        _needs,
    ),
    (
        compile_ci(
            r"^I\s+(?:use|rely on|need)\s+(?P<v>(?:a|an)\s+(?:wheelchair|cane|walking stick|walker|"
            r"mobility scooter|hearing aid|guide dog|white cane)|crutches)\b"
        ),
        _uses_aid,
    ),
    (
        compile_ci(
            r"^(?P<s>[\w\s'-]+?)\s+(?P<p>(?:is|are)\s+(?:a\s+(?:big\s+|real\s+|serious\s+)?"
            r"(?:problem|issue|no-go|no go|dealbreaker|deal-breaker)|off (?:the table|limits)|"
            r"out of the question|not an option|a no|non-negotiable|essential|a must)|matters?)"
            r"(?:\s+for\s+(?:me|work|[\w-]+))?$"
        ),
        _for_me,
    ),
    (compile_ci(r"^(?:.*,\s*)?no\s+(?P<v>[^,]+?)\s+for me\b.*$"), _no_x_for_me),
    (compile_ci(r"^everything\s+(?:has|needs)\s+to be\s+(?P<v>.+?)\s+for me$"), _everything),
    # --- habits
    (
        compile_ci(
            rf"^(?P<v>(?!it\b|this\b|that\b)[\w\s'-]+?)\s+(?:is|has been|are)\s+"
            r"(?:slowly\s+|really\s+|finally\s+|quickly\s+|now\s+|officially\s+)*"
            r"(?:becoming|turning into|now|part of)\s+(?:a\s+|an\s+|my\s+|part of my\s+)?"
            rf"(?:(?:proper|real|daily|regular|weekly|new|morning|evening|fixed)\s+)*{_HABIT_WORDS}\b"
        ),
        _habit_subject,
    ),
    (
        compile_ci(
            r"^my\s+(?:(?:new|daily|morning|evening|weekly)\s+)*(?:habit|routine|ritual)\s+of\s+"
            r"(?P<v>.+?)\s+is\s+(?:really\s+|finally\s+)?(?:sticking|working|going (?:well|strong)|"
            r"holding|paying off)\b"
        ),
        _habit_subject,
    ),
    (
        compile_ci(
            r"^(?:day|week|month|year)\s+(?:\w+|\d+)\s+of\s+(?!(?:the|a|an|my|our|this|that)\b)"
            r"(?P<v>.+?)(?:\s+(?:and\s+I am\s+(?:hooked|loving it|still going|going strong)|"
            r"done|complete|completed|in the bag))?$"
        ),
        _habit_subject,
    ),
    (compile_ci(rf"^I am\s+{ADV}(?:hooked on|addicted to)\s+(?P<v>.+)$"), _habit_subject),
    (
        compile_ci(
            r"^(?:I\s+)?(?:(?:have|just)\s+)?(?:squeezed|fitted|fit|snuck|got)\s+in\s+"
            r"(?:some|my|a bit of|a little|another|a quick|a spot of)\s+(?P<v>.+?)\s+"
            r"(?:again|as usual|first thing|before anything else)\b.*$"
        ),
        _habit_subject,
    ),
    (
        compile_ci(
            r"^(?:I\s+)?did\s+my\s+(?P<v>.+?)\s+(?:before anything else|first thing|as usual|"
            r"again)\b.*$"
        ),
        _habit_subject,
    ),
    (
        compile_ci(
            r"^(?:I\s+)?(?:skipped|missed)\s+(?:my\s+)?(?P<v>.+?)\s+"
            r"(?:yesterday|today|this morning|"
            r"last night|on \w+)\s+and\s+(?:I\s+)?(?:felt|was)\s+(?:off|weird|strange|terrible|"
            r"awful|bad|grumpy|wrong|lost)\b.*$"
        ),
        _habit_subject,
    ),
    # --- completed tasks
    (
        compile_ci(r"^(?:.*?\b(?:that|this)\s+)?wraps up\s+(?P<v>.+)$"),
        _completed,
    ),
    (
        compile_ci(
            r"^(?:you can\s+|please\s+|go ahead and\s+)?mark\s+(?P<v>.+?)\s+as\s+(?:a\s+)?"
            r"(?:done|complete|completed|finished)\b.*$"
        ),
        _completed,
    ),
    # "The visa application is submitted"; a one-word subject ("the meeting is done") is news.
    (
        compile_ci(
            r"^(?P<v>(?:the|my|our)\s+(?!\w+(?:'s)?\s+(?:is|are)\b)[\w\s'-]+?)\s+(?:is|are)\s+"
            r"(?:now\s+|finally\s+|all\s+|officially\s+|completely\s+)*(?:done|finished|complete|"
            r"completed|wrapped up|sorted|submitted|signed off)\b"
        ),
        _completed,
    ),
    (
        compile_ci(
            r"^I\s+(?:have\s+)?(?:just\s+|finally\s+)?"
            r"(?:finished|completed|wrapped up|submitted)\s+"
            r"(?P<v>(?:the|my|our)\s+.+)$"
        ),
        _completed,
    ),
    # --- views on topics
    (
        compile_ci(
            rf"^I am\s+(?P<stance>{STANCE})\s+(?:on|about|of|to|towards|regarding|"
            r"when it comes to)\s+(?P<topic>.+)$"
        ),
        _stance_on,
    ),
    (
        compile_ci(
            r"^(?:.*?\b(?:but|and|so|now)\s+)?(?:on|about|regarding|when it comes to|as for)\s+"
            rf"(?P<topic>[^,]+?),?\s+I am\s+(?P<stance>{STANCE})\b.*$"
        ),
        _stance_on,
    ),
    # --- age, preferences, likes
    (
        compile_ci(
            r"^I am\s+(?:now\s+)?(?P<v>\d{1,3})(?:\s+(?:years|yrs)(?:\s+old)?|\s*y/?o)?"
            r"(?!\s*(?:%|percent|minutes?|mins?|hours?|km|miles?|kg|lbs?|pounds?|dollars?|"
            r"euros?|days?|weeks?|months?|times?|\w))"
        ),
        _age,
    ),
    (compile_ci(r"^I\s+(?:just\s+)?turned\s+(?P<v>\d{1,3})\b"), _age),
    (compile_ci(rf"^I\s+{OP_ADV}(?:do\s+)?{OP_ADV}prefer\s+(?P<v>.+)$"), _prefer),
    (compile_ci(r"^I would\s+(?:much\s+)?rather\s+(?!not\b)(?P<v>.+)$"), _prefer),
    (
        compile_ci(r"^as (?:usual|always|ever),?\s+(?P<v>[\w\s'-]+?),?\s+please$"),
        _suits_me,
    ),
    (
        compile_ci(
            r"^(?P<v>[\w\s'-]+?)\s+(?:suits?|suited)\s+me\s+(?:better|best|fine|perfectly)\b.*$"
        ),
        _suits_me,
    ),
    (
        compile_ci(
            r"^(?P<v>[\w\s'-]+?)\s+(?:works?|is|are)\s+(?:always\s+)?(?:best|better)\s+for me\b.*$"
        ),
        _suits_me,
    ),
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
        _habit,
    ),
]

# Rules whose key depends on the clause's time words: passing mentions are not facts.
_TIME_SENSITIVE = {_opinion, _belief, _state, _constraint, _my_attribute, _possession}

# Clauses that name the speaker's workplace through someone else there ("my new manager at X").
WORKPLACE_THIRD_PARTY = re.compile(
    rf"^(?i:my)\s+(?i:new\s+|current\s+)?(?i:{_EMPLOY_NOUNS})\s+(?i:at|with)\s+(?P<v>{_PROPER})"
)


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


# --- context-dependent clauses ---------------------------------------------------------------

_BARE_STANCE = compile_ci(
    rf"^(?:I am\s+|I have become\s+|I feel\s+|now\s+I am\s+)?(?P<stance>{STANCE})"
    r"(?:\s+(?:now|these days|nowadays|at the moment|about it|on it|on that))?$"
)
_IT_IS = re.compile(
    rf"^(?i:it is|it's|that is|now it is|these days it is)\s+(?P<v>{_PROPER})"
    r"(?:\s+(?i:now|these days|from now on|again))?$"
)
_IN_FRAME_AT = re.compile(rf"^(?i:I am)\s+(?i:now\s+)?(?i:at|with)\s+(?P<v>{_PROPER})(?:\s+.*)?$")
_NEED = compile_ci(r"^I\s+(?:really\s+|also\s+)?need\s+(?P<v>.+)$")
_NP = compile_ci(
    r"^(?P<v>(?:no\s+)?[\w'-]+(?:\s+[\w'-]+){0,5}?)(?:,?\s+(?:every time|always|please))?$"
)


def framed_facts(clause: str, frames: frozenset[str], topic: str | None) -> list[Fact]:
    """Facts a clause states only in context (a header or the previous sentence).

    Args:
        clause: The clause, contractions expanded and leading markers removed.
        frames: Slot families the context names (``work``, ``home``, ``health``, ``constraint``,
            ``preference``).
        topic: The topic of a view the context names (``remote work``), if any.
    """
    if topic:
        stance = _BARE_STANCE.match(clause)
        if stance:
            return opinion_fact(topic, stance.group("stance"))
    if "work" in frames:
        match = _IT_IS.match(clause) or _IN_FRAME_AT.match(clause)
        if match:
            return workplace_facts(match.group("v"))
    if "home" in frames:
        match = _IT_IS.match(clause)
        if match:
            return home_facts(match.group("v"))
    if "health" in frames:
        match = re.match(r"^I am\s+(?:now\s+|currently\s+|still\s+)?(?P<v>\w+ing\s+.+)$", clause)
        if match and first_word(match.group("v")) not in TRANSIENT_WORDS:
            return health_fact(match.group("v"))
    if "constraint" in frames:
        match = _NEED.match(clause)
        if match:
            return _needs(match)
        if re.match(r"^no\s+\w", clause, re.IGNORECASE) and word_count(clause) <= 8:
            return constraint_fact(clause)
    if "preference" in frames:
        match = _NP.match(clause)
        if match and first_word(match.group("v")) not in NON_OBJECTS | {"i", "we", "my"}:
            return preference_fact(match.group("v"))
    return []


# --- retractions -----------------------------------------------------------------------------

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
_LEFT = compile_ci(r"^I\s+(?:have\s+)?(?:just\s+)?(?:left|resigned from)\s+(?P<v>.+)$")
_MOVED_AWAY = compile_ci(
    r"^(?:I|we)\s+(?:have\s+)?(?:just\s+)?moved\s+(?:out of|away from)\s+(?P<v>.+)$"
)
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
    return [replace(fact, retraction=True) for fact in found]


def _retracted(clause: str) -> list[Fact] | None:
    for pattern, template in _RETRACTION_REWRITES:
        match = pattern.match(clause)
        if match:
            rest = match.group("rest")
            stated = [f for f in positive_facts(template.format(rest=rest)) if not f.retraction]
            if stated or template.startswith("I am"):
                return stated
            # "I used to smoke", "I no longer run every morning": a habit.
            if first_word(rest) in MENTAL_VERBS | NOT_CONSTRAINT_VERBS:
                return []
            key = habit_key(rest)
            return [Fact(key, rest, "", matchable=False)] if key else []
    match = _STOPPED.match(clause)
    if match:
        target = _phrase(match.group("v"))
        job = _JOB.match(target) or _WORK_AT.match(target)
        if job:
            org = cut(job.group("org") or "", NAME_STOP)
            return [Fact("works at", org, "", matchable=bool(org))]
        if proper(target):
            return [Fact("works at", target, "")]
        key = habit_key(target)
        return [Fact(key, target, "", matchable=False)] if key else []
    match = _LEFT.match(clause)
    if match:
        target = cut(match.group("v"), NAME_STOP)
        if _JOB.match(target):
            return [Fact("works at", "", "", matchable=False)]
        if proper(target):
            return [Fact("works at", target, ""), Fact("lives in", target, "")]
        return []
    match = _MOVED_AWAY.match(clause)
    if match:
        target = cut(match.group("v"), NAME_STOP)
        return [Fact("lives in", target, "")] if proper(target) else []
    return None
