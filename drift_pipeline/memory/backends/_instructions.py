"""Requests to the assistant: standing instructions and working preferences.

Two kinds, told apart by how they are said:

- A **standing instruction** changes a rule: ``From now on, reply in bullet points``, ``New rule
  for your replies: use a formal tone``, ``Please write in British English, starting today``,
  ``Never book red-eye flights``. It is keyed by what it governs, so a later rule about the same
  thing replaces the earlier one: every rule about the form of replies shares ``instruction
  replies``; others are keyed by their verb group and object (``instruction book flight``).
- A **working preference** restates a habit of the collaboration: ``It really helps when you cite
  sources``, ``Please use tables for comparisons, like last time``, ``Same as always: ask before
  running code``. Several hold at once; each is keyed by its verb group and object.
"""

from __future__ import annotations

import re

from drift_pipeline.memory.backends._lexicon import (
    IMPERATIVE_VERBS,
    PREPOSITIONS,
    REPLY_FORM,
    VERB_GROUPS,
    compile_ci,
    first_word,
    word_set,
)
from drift_pipeline.memory.backends._rules import Fact, positive_facts
from drift_pipeline.memory.backends._text import stem, terms

__all__ = ["instruction_fact", "workflow_fact"]

_FROM_NOW = (
    r"from now on|going forward|moving forward|in (?:the )?future|henceforth|"
    r"for future reference|as a rule|from here on(?: out)?|starting (?:today|now|tomorrow|"
    r"immediately|this week|from today)|from today(?: on)?|as of (?:today|now)"
)
_INSTRUCTION_FORMS: list[tuple[re.Pattern[str], str]] = [
    (compile_ci(rf"^(?:{_FROM_NOW})\b[\s,:]*(?:please\s+)?(?P<v>.+)$"), "from now on,"),
    (compile_ci(rf"^(?:please\s+)?(?P<v>.+?)[\s,]*\b(?:{_FROM_NOW})$"), "from now on,"),
    (
        compile_ci(
            r"^(?:please\s+)?(?:make sure (?:to|you)\s+|remember to\s+)?"
            r"(?P<pol>always|never|do not ever|never ever)\s+(?P<v>.+)$"
        ),
        "",
    ),
    (compile_ci(r"^(?:please\s+)?stop\s+(?P<v>\w+ing\b.*)$"), "stop"),
]
_INSTRUCTION_LEAD = compile_ci(
    r"^(?:(?:please|also|and|oh and|one more thing|just|kindly)\b[\s,:]*)+"
)
_YOU_MODAL = compile_ci(
    r"^(?:let's|let us|you\s+(?:should|must|need to|have to|can|will|are to)|"
    r"I\s+(?:would like|want|need|would love|would prefer)\s+you\s+to|"
    r"(?:can|could|would|will)\s+you(?:\s+please)?)\s+"
    r"(?:always\s+|never\s+)?(?:please\s+)?"
)
_MODAL_BEFORE_POLARITY = compile_ci(
    r"^(?:you\s+(?:should|must|need to|have to|can|will)|let's|let us)\s+(?=always\b|never\b)"
)
# Where an instruction's scope ends: "reply in bullet points whenever you answer me".
_ACTION_END = compile_ci(
    r"[\s,;]+(?:whenever|when(?:ever)? you|every time|each time|for all|in all|if|unless|"
    r"because|since|so that|it is|it's|that is|that's|thanks|thank you)\b.*$|[\s,]+please$"
)
# First words that show the sentence is not an order to the assistant ("Never mind.").
_NOT_IMPERATIVE = word_set(
    """i we my our it it's this that there the a an mind again ever heard knew thought seen been
    had happens happened fails works worked is are was were"""
)
_PRONOUN_OBJECTS = word_set("that it this them those these so one")
_INSTRUCTION_BLOCKERS = compile_ci(r"\b(?:if|unless|maybe|might|someday|imagine|what if|perhaps)\b")


def _action(raw: str) -> str:
    action = _YOU_MODAL.sub("", raw.strip().rstrip(".!")).strip()
    action = _ACTION_END.sub("", action).strip().rstrip(".!,;")
    return action


def _is_request(action: str) -> bool:
    """An order to the assistant about something: not ``I…``, not ``use that``."""
    words = re.findall(r"[a-z][a-z';-]*", action.lower())
    if not words or words[0] in _NOT_IMPERATIVE:
        return False
    rest = [w for w in words[1:] if w not in {"in", "on", "from", "now", "please", "up", "out"}]
    # "send it to Ana", "use that": about one thing at hand, not a standing rule.
    return bool(rest) and rest[0] not in _PRONOUN_OBJECTS - {"one"}


def instruction_fact(sentence: str, *, ruled: bool = False, context: str = "") -> Fact | None:
    """Return the standing instruction a sentence gives the assistant, if it gives one.

    ``Please always reply in Spanish``, ``From now on, keep answers short``, ``Never book
    red-eye flights``, ``Stop using emojis``, ``Please use a formal tone, starting today``.
    ``From now on, call me Sam`` is a name.

    Args:
        sentence: The sentence (contractions expanded), or the body after a header.
        ruled: The context already says this is a rule (``New rule for your replies:``), so a
            bare imperative counts.
        context: Header or neighbouring text; it tells whether the rule is about replies.
    """
    if _INSTRUCTION_BLOCKERS.search(sentence):
        return None
    body = _INSTRUCTION_LEAD.sub("", sentence.strip().rstrip(".!")).strip()
    body = re.sub(r"[\s,]+please$", "", body, flags=re.IGNORECASE)
    body = _MODAL_BEFORE_POLARITY.sub("", body)
    for pattern, prefix in _INSTRUCTION_FORMS:
        match = pattern.match(body)
        if match is None:
            continue
        polarity = match.groupdict().get("pol")
        return _rule(match.group("v"), (polarity or prefix).lower(), f"{sentence} {context}")
    if ruled:
        return _rule(body, "", f"{sentence} {context}")
    return None


def _rule(raw: str, lead: str, scope: str) -> Fact | None:
    action = _action(raw)
    if not action or not _is_request(action):
        return None
    named = positive_facts(action)
    if named and named[0].predicate == "name":
        return named[0]
    if lead in {"do not ever", "never ever"}:
        lead = "never"
    if lead not in {"always", "never", "stop"}:
        lead = ""
    # Every rule about the form of replies governs one thing; others are keyed by what they do.
    key = "replies" if REPLY_FORM.search(f"{action} {scope}") else _instruction_key(action)
    if key is None:
        return None
    text = f"standing instruction: {lead} {action}".replace("  ", " ")
    value = f"{lead} {action}".strip().lower()
    return Fact(f"instruction {key}", value, text, matchable=False)


_HELPS = compile_ci(
    r"^(?:it\s+)?(?:really\s+|always\s+)?(?:helps|is helpful|is useful|works best)\s+(?:me\s+)?"
    r"(?:a lot\s+)?(?:when|if)\s+you\s+(?P<v>.+)$"
)
_LIKE_WHEN = compile_ci(
    r"^I\s+(?:really\s+|always\s+|do\s+)*(?:like|love|appreciate|prefer|enjoy)\s+(?:it\s+)?"
    r"(?:when|if)\s+you\s+(?P<v>.+)$"
)
_LIKE_LAST_TIME = compile_ci(
    r"^(?:please\s+)?(?P<v>.+?),\s*(?:just\s+)?(?:like|as)\s+(?:last time|before|usual|always|"
    r"ever|we discussed|discussed|I said|I asked|agreed)$"
)
_AS_USUAL = compile_ci(
    r"^(?:same as (?:always|ever|usual)|as (?:always|usual|ever))[\s,:]+(?P<v>.+)$"
)
_REMEMBER = compile_ci(r"^(?:please\s+)?(?:remember|make sure|be sure)\s+to\s+(?P<v>.+)$")
STANDING_MARKER = compile_ci(
    r"[;,.]?\s*(?:that is|that's|this is)\s+how I (?:like|want|prefer)\s+(?:it|you to work|things)"
    r"[.!]?$|[;,]?\s*(?:as always|every time|each time)[.!]?$"
)


def workflow_fact(sentence: str, *, standing: bool = False) -> Fact | None:
    """Return the working preference a sentence restates, if it states one.

    ``It really helps when you cite sources``, ``I like it when you ask before running code``,
    ``Please use tables for comparisons, like last time``, ``Same as always: search the web
    first``, ``Remember to end with a summary; that's how I like it``.

    Args:
        sentence: The sentence (contractions expanded), a standing marker already removed.
        standing: The sentence carried a standing marker (``that's how I like it``), so
            ``Remember to …`` and a bare ``Please …`` count.
    """
    body = sentence.strip().rstrip(".!").strip()
    for pattern in (_HELPS, _LIKE_WHEN, _LIKE_LAST_TIME, _AS_USUAL):
        match = pattern.match(body)
        if match:
            return _workflow(match.group("v"), strict=pattern is _AS_USUAL)
    if standing:
        match = _REMEMBER.match(body) or re.match(r"^(?:please\s+)(?P<v>.+)$", body, re.I)
        if match:
            return _workflow(match.group("v"), strict=False)
        return _workflow(body, strict=True)
    return None


def _workflow(raw: str, *, strict: bool) -> Fact | None:
    action = _action(raw)
    action = re.sub(r"^(?:please\s+|always\s+)+", "", action, flags=re.IGNORECASE)
    if not action or not _is_request(action):
        return None
    if strict and first_word(action) not in IMPERATIVE_VERBS:
        return None
    key = _instruction_key(action)
    if key is None:
        return None
    return Fact(f"workflow {key}", action.lower(), f"likes you to {action}", matchable=False)


def _instruction_key(action: str) -> str | None:
    words = re.findall(r"[a-z][a-z'-]*", action.lower())
    while words and words[0] in {"always", "never", "ever", "please", "just", "also", "only"}:
        words = words[1:]
    if not words:
        return None
    verb = stem(words[0])
    group = VERB_GROUPS.get(verb, verb)
    rest = [w for w in words[1:] if w not in {"me", "us", "my", "your", "the", "a", "an", "it"}]
    if not rest:
        return group
    if rest[0] in PREPOSITIONS:
        return f"{group} {rest[0]}"
    if group == "keep":
        head = terms(rest[0])
        return f"{group} {head[0]}" if head else group
    phrase: list[str] = []
    for word in rest:
        if word in PREPOSITIONS:
            break
        phrase.append(word)
    phrase_terms = terms(" ".join(phrase))
    return f"{group} {phrase_terms[-1]}" if phrase_terms else group
