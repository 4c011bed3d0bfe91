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
# "you should", "you'd better", "so you have to": how advice to the assistant opens.
_ADVICE_OPENING = (
    r"(?:so\s+)?you(?:'d|\s+had|\s+would)?\s+(?:should|must|need to|have to|ought to|better)"
)
# "…, so please use plain language", "my boss reads your summaries, so you should use a formal
# tone": the request after a clause of background.
_REQUEST_CLAUSE = compile_ci(rf"(?:[,;]|\s+(?:so|and|but))\s+(?=please\b|{_ADVICE_OPENING}\b)")
# Advice to the assistant is a standing instruction only when it is about its replies ("you
# should use a formal tone", "you had better write in British English", "you need to start
# every answer with a TL;DR"); "you should try the new café" is a tip, no instruction.
_NOTE = r"(?:(?:note|remember|keep in mind|bear in mind|be aware)\s+(?:that\s+)?)?"
_ADVISED = compile_ci(
    rf"^{_NOTE}{_ADVICE_OPENING}\s+(?P<neg>not\s+|never\s+)?(?:always\s+)?(?P<v>.+)$"
)
# A standing default for the speaker: "the default for me from now on is to reply in short
# paragraphs", "my default going forward is to get bullet points". "The default is 30 days"
# is about a setting, not the speaker: "my" or "for me" is required.
_DEFAULT = compile_ci(
    rf"^{_NOTE}(?:my\s+(?:new\s+)?default|the\s+(?:new\s+)?default\s+for\s+me)"
    rf"(?:\s+for\s+me)?(?:\s+(?P<when>{_FROM_NOW}))?\s+(?:is|will be|should be)\s+"
    r"(?P<to>to\s+)?(?P<v>.+)$"
)
_SERVICE_WORDS = compile_ci(
    r"\b(?:answers?|repl(?:y|ies)|responses?|messages?|summar(?:y|ies)|emails?|notes|drafts?|"
    r"tone|register|format\w*|bullet(?:s| points?)?|paragraphs?|headings?|headers?|emojis?|"
    r"TL;?DR|jargon|sentences|lines|words|language|English|spelling|British|American|"
    r"formal\w*|informal\w*|casual\w*|concise\w*|brief|short|shorter|length|plain|"
    r"markdown|tables?|lists?|examples?|sources|citations?)\b"
)
# Verbs of shaping a reply, beside those ``VERB_GROUPS`` groups ("you should have seen the
# replies I got" is no instruction).
_SHAPING_VERBS = word_set(
    """start begin end close lead open be stick avoid skip drop cut limit format give put spell
    structure break sign translate summarise summarize"""
)
# Chatter that closes a message: "…in British English lol cheers".
_CHATTER_TAIL = compile_ci(
    r"(?:[\s,]+(?:lol|haha|cheers|ty|thx|thanks|thank you|ok|okay|please|pls|:\)))+$"
)
# Where the instruction ends: "…, but that is a side note" ("TL;DR" has no space after ";").
_ACTION_END = compile_ci(r"\s*(?:[;:]\s|,\s+(?:but|so|and|though|although)\b).*$")
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
    advice = _advised(body)
    if advice is not None:
        return advice
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


def _advised(body: str) -> Fact | None:
    """An instruction about replies put as advice or as the speaker's default, or ``None``.

    ``You should use a formal tone``, ``you'd better not use emojis``, ``the default for me
    from now on is to reply in short paragraphs``.
    """
    match = _ADVISED.match(body)
    default = None if match is not None else _DEFAULT.match(body)
    found = match or default
    if found is None:
        return None
    action = _ACTION_END.sub("", found.group("v")).strip().rstrip(".!")
    action = _CHATTER_TAIL.sub("", action)
    verb = first_word(action)
    if verb in _NOT_IMPERATIVE or not _SERVICE_WORDS.search(action):
        return None
    shapes_reply = stem(verb) in VERB_GROUPS or verb in _SHAPING_VERBS
    if match is not None:
        if not shapes_reply:
            return None
        lead = "never" if match.group("neg") else "always"
    else:
        assert default is not None
        if default.group("to"):
            # "The default for me is to start every answer with a TL;DR": a verb of replying.
            if not shapes_reply:
                return None
        elif default.group("when"):
            # "My default from now on is short paragraphs": a thing, read as replying in it.
            action = f"reply in {action}"
        else:
            return None  # "my default is text messages": a preference, read as one
        lead = "from now on," if default.group("when") else "always"
    key = _instruction_key(action)
    if key is None:
        return None
    text = f"standing instruction: {lead} {action}"
    return Fact(f"instruction {key}", f"{lead} {action}".lower(), text, matchable=False)


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
