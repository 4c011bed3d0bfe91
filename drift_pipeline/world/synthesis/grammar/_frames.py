"""Frames: how a clause sits in a turn (syntactic frame, register, discourse position).

A frame embeds a stem's clause ``{c}``. Its position says where the sentence goes:
``inline`` (before or after the routine request), ``mid`` (buried between the request and a
routine line), ``lead`` (the previous turn announces news, this one gives it), ``confirm`` (the
assistant's previous reply states the value, this turn confirms it) and ``correct`` (the
previous turn restates the old value as if nothing had changed, or flags a wrong note, and this
one corrects it). Every frame's wording differs in the
sentence that carries the clause, so no two families share a sentence skeleton.
"""

from __future__ import annotations

Frame = tuple[str, str, str, str]
"""(id, register, position, template)."""

EVENT_FRAMES: tuple[Frame, ...] = (
    ("bare", "neutral", "inline", "{c}."),
    ("so_you_know", "neutral", "inline", "Just so you know, {c}."),
    ("my_end", "neutral", "inline", "Quick update on my end: {c}."),
    ("ok_so", "casual", "inline", "ok so {c} lol"),
    ("fyi", "casual", "inline", "fyi {c}"),
    ("let_you_know", "formal", "inline", "I wanted to let you know that {c}."),
    ("not_sure", "neutral", "inline", "Not sure I mentioned it, but {c}."),
    ("in_case", "neutral", "inline", "{c}, in case that matters for anything."),
    ("record", "formal", "inline", "For the record, {c}."),
    ("long_story", "casual", "inline", "Long story short, {c}."),
    ("short_version", "neutral", "inline", "I suppose the short version is that {c}."),
    ("please_note", "formal", "inline", "Please note that {c}."),
    ("something_changed", "neutral", "inline", "Something changed, actually: {c}."),
    ("hedged", "neutral", "inline", "{hedge}, {c}."),
    (
        "ramble",
        "casual",
        "inline",
        "This is a bit random and I keep meaning to mention it, but {c}, so there you go.",
    ),
    ("side_note", "neutral", "mid", "Oh, and {c}, but that's a side note."),
    ("unrelated", "casual", "mid", "Also, unrelated: {c}."),
    ("the_news", "neutral", "lead", "Right, the news I mentioned: {c}."),
    ("about_update", "casual", "lead", "So, about that update: {c}."),
    ("thats_right", "neutral", "confirm", "Yes, that's right: {c}."),
    ("correct", "formal", "confirm", "Correct, {c}."),
    ("correction", "neutral", "correct", "Actually, let me correct that: {c}."),
    ("notes_fix", "formal", "correct", "To set the record straight, {c}."),
)

# Decoy frames per decoy kind: asides for statements, question and sarcasm frames for those.
_ASIDES: tuple[Frame, ...] = (
    ("bare", "neutral", "inline", "{c}."),
    ("random_aside", "casual", "inline", "Random aside: {c}."),
    ("unrelated", "neutral", "inline", "Totally unrelated, but {c}."),
    ("anyway", "casual", "inline", "{c}, anyway."),
    ("oh", "casual", "inline", "Oh, {c}."),
    ("funny_thing", "neutral", "inline", "Funny thing, {c}."),
    ("other_news", "neutral", "inline", "In other news, {c}."),
    ("side_note", "neutral", "inline", "Side note: {c}."),
    ("before_forget", "neutral", "inline", "Before I forget, {c}."),
    ("neither_here", "formal", "inline", "{c}, but that's neither here nor there."),
    ("by_the_way", "neutral", "inline", "By the way, {c}."),
    ("small_thing", "casual", "inline", "Small thing, {c}."),
)
_QUESTIONS: tuple[Frame, ...] = (
    ("bare", "neutral", "inline", "{c}?"),
    ("random", "casual", "inline", "Random question: {c}?"),
    ("curiosity", "neutral", "inline", "Out of curiosity, {c}?"),
    ("wondering", "casual", "inline", "Just wondering, {c}?"),
    ("keep_wondering", "neutral", "inline", "Something I keep wondering: {c}?"),
    ("quick_one", "casual", "inline", "Quick one: {c}?"),
    ("off_topic", "neutral", "inline", "Totally off topic, {c}?"),
    ("always_wondered", "neutral", "inline", "I've always wondered, {c}?"),
    ("be_honest", "casual", "inline", "Be honest, {c}?"),
    ("silly", "neutral", "inline", "Silly question, but {c}?"),
    ("while_i_think", "formal", "inline", "While I think of it, {c}?"),
    ("settle", "casual", "inline", "Settle a debate for me: {c}?"),
)
_SARCASM: tuple[Frame, ...] = (
    ("oh_sure", "casual", "inline", "Oh sure, {c}. 🙄"),
    ("yeah_right", "casual", "inline", "Yeah right, {c}."),
    ("as_if", "casual", "inline", "{c}, as if."),
    ("slash_s", "casual", "inline", "{c} (not really) /s"),
    ("ha_not", "casual", "inline", "Ha, {c}, not."),
    ("if_only", "neutral", "inline", "{c}, if only."),
    ("right_because", "neutral", "inline", "Right, because {c}."),
    ("oh_yes", "neutral", "inline", "Oh yes, {c}, totally."),
    ("obviously_not", "casual", "inline", "{c}, obviously, not."),
    ("pigs_fly", "neutral", "inline", "Sure, {c}, and pigs fly."),
    ("kidding", "neutral", "inline", "{c}, kidding of course."),
    ("joking", "formal", "inline", "And naturally {c}, I'm joking."),
)

DECOY_FRAMES: dict[str, tuple[Frame, ...]] = {
    "third_party": _ASIDES,
    "hypothetical": _ASIDES,
    "small_talk": _ASIDES,
    "question": _QUESTIONS,
    "sarcasm": _SARCASM,
}

# Discourse markers that soften a statement, for frames with a ``{hedge}`` slot.
HEDGES = ("Honestly", "Basically", "To be fair", "Truth be told", "If I'm honest", "As it happens")
# The previous turn of a "lead" family: it announces news the next turn gives ({w}: a topic word).
LEAD_INS = (
    "I've got some news on the {w} front; I'll tell you in a second.",
    "Remind me to give you an update on the {w} side after this.",
    "There's a change on the {w} side I need to tell you about, one moment.",
)
# The previous turn of a "correct" family when the change has no old value to restate: it flags
# a note the next turn corrects.
CORRECTION_CUES = (
    "Your notes on the {w} side are out of date; I'll correct them next.",
    "One of the {w} details you have for me is wrong, hang on.",
    "Before I forget, something {w}-related you know about me needs fixing.",
)
# The previous turn of a "correct" family when there is an old value: the principal restates it,
# as if nothing had changed, and corrects it in the next turn (the later statement is the truth).
STILL: dict[str, str] = {
    "employer": "I'm still at {old} for now, in case you need that for anything.",
    "city": "I'm still living in {old}, for what it's worth.",
    "relationship": "I'm still {old}, for the record.",
    "health": "I'm still {old}, nothing new there.",
    "opinion": "On {topic}, I'm still {old}.",
    "response_format": "Just {old}, as before.",
    "preferred_name": "You can keep calling me {old}.",
    "preference": "I still go for {old}.",
}
# A routine line after a "mid" family's sentence, so the signal sits mid-paragraph.
MID_TAILS = (
    "Anyway, back to the list.",
    "Anyway, that's all for now on that.",
    "But the main thing today is the request above.",
    "Either way, the request stands.",
)

# Common words and a misspelling each: a family has a typo variant when its text has one.
TYPOS: tuple[tuple[str, str], ...] = (
    ("the", "teh"),
    ("just", "jsut"),
    ("because", "becuase"),
    ("really", "realy"),
    ("know", "konw"),
    ("with", "wiht"),
    ("about", "abuot"),
    ("which", "whcih"),
    ("that", "taht"),
    ("from", "form"),
    ("now", "nwo"),
    ("since", "sicne"),
    ("my", "ym"),
)
