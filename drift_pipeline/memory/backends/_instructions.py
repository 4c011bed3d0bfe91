"""Standing instructions to the assistant: "please always …", "from now on …", "stop …"."""

from __future__ import annotations

import re

from drift_pipeline.memory.backends._lexicon import (
    PREPOSITIONS,
    VERB_GROUPS,
    compile_ci,
    first_word,
    strip_lead_ins,
    word_set,
)
from drift_pipeline.memory.backends._rules import Fact, positive_facts
from drift_pipeline.memory.backends._text import stem, terms

__all__ = ["instruction_fact"]

_FROM_NOW = (
    r"from now on|going forward|moving forward|in (?:the )?future|henceforth|"
    r"for future reference|as a rule|from here on(?: out)?|from today(?: on(?:wards?)?)?|"
    r"starting (?:today|now)"
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
    r"^(?:(?:please|also|and|oh and|one more thing|just|kindly|"
    r"I (?:want|need|would like) you to)\b[\s,:]*)+"
)
# "…, so please use plain language": the request after a clause of background.
_REQUEST_CLAUSE = compile_ci(r"(?:[,;]|\s+(?:so|and|but))\s+(?=please\b)")
_YOU_MODAL = compile_ci(
    r"^(?:let's|let us|you\s+(?:should|must|need to|have to|can|will|are to))\s+"
    r"(?:always\s+|never\s+)?"
)
_MODAL_BEFORE_POLARITY = compile_ci(
    r"^(?:you\s+(?:should|must|need to|have to|can|will)|let's|let us)\s+(?=always\b|never\b)"
)
# First words that show the sentence is not an order to the assistant ("Never mind.").
_NOT_IMPERATIVE = word_set(
    """i we my our it it's this that there the a mind again ever heard knew thought seen been
    had happens happened fails works worked"""
)
_CONJUNCTION = compile_ci(r"^(?:but|and|so|yet|anyway)\b[\s,]*")
_INSTRUCTION_BLOCKERS = compile_ci(r"\b(?:if|unless|maybe|might|someday|imagine|what if|perhaps)\b")


def instruction_fact(sentence: str) -> Fact | None:
    """Return the standing instruction a sentence gives the assistant, if it gives one.

    ``Please always reply in Spanish``, ``From now on, keep answers short``, ``Never book
    red-eye flights``, ``Stop using emojis``. The key is what the instruction governs (a verb
    group plus its object or preposition: ``respond in``, ``book flight``), so a later instruction
    about the same thing replaces the earlier one. ``From now on, call me Sam`` is a name.
    """
    if _INSTRUCTION_BLOCKERS.search(sentence):
        return None
    parts = _REQUEST_CLAUSE.split(sentence)
    if len(parts) > 1 and (found := instruction_fact(parts[-1])) is not None:
        return found
    # "From now on, please reply in Spanish": the clause before "please" was the frame.
    body = _INSTRUCTION_LEAD.sub("", sentence.strip().rstrip(".!")).strip()
    body = re.sub(r"[\s,]+please$", "", body, flags=re.IGNORECASE)
    body = _MODAL_BEFORE_POLARITY.sub("", body)
    for pattern, prefix in _INSTRUCTION_FORMS:
        match = pattern.match(body)
        if match is None:
            continue
        action = _YOU_MODAL.sub("", strip_lead_ins(match.group("v").strip().rstrip(".!"))).strip()
        # "Not sure I mentioned it, but I am based in Bologna from now on": what follows the
        # conjunction says what the sentence is, here news of the speaker, no order.
        action = _CONJUNCTION.sub("", action)
        if not action or first_word(action) in _NOT_IMPERATIVE:
            return None
        named = positive_facts(action)
        if named and named[0].predicate == "name":
            return named[0]
        polarity = match.groupdict().get("pol")
        lead = (polarity or prefix).lower()
        if lead in {"do not ever", "never ever"}:
            lead = "never"
        key = _instruction_key(action)
        if key is None:
            return None
        text = f"standing instruction: {lead} {action}".replace("  ", " ")
        return Fact(f"instruction {key}", f"{lead} {action}".lower(), text, matchable=False)
    return None


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
