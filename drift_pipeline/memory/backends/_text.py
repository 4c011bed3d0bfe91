"""Plain-English text helpers shared by the reference backends.

Everything here works on message text alone: dates from timestamps, who took part in a session,
sentence splitting, and the content terms that lexical matching uses (lower-cased words without
stop words, reduced by a light suffix stripper so ``works``/``working``/``worked`` meet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from bm25s.stopwords import STOPWORDS_EN_PLUS

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._scoped import stored_owners

__all__ = [
    "count_each",
    "first_date",
    "is_first_person",
    "is_question",
    "line_tokens",
    "message_date",
    "pack_to_budget",
    "render_turn",
    "session_speakers",
    "split_sentences",
    "stem",
    "terms",
]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n+")
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Jr|Sr|Mt|vs|etc|approx|e\.g|i\.e|a\.m|p\.m)\.$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")
_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|our|us)\b", re.IGNORECASE
)

# Conversational filler on top of the NLTK list that bm25s ships: words that carry no content
# when deciding whether two texts talk about the same thing.
_EXTRA_STOPWORDS = frozenset(
    {
        "also", "actually", "could", "even", "get", "got", "hello", "hey", "hi", "im", "ive",
        "just", "let", "lets", "lol", "maybe", "oh", "ok", "okay", "please", "really", "still",
        "sure", "thank", "thanks", "thing", "things", "um", "us", "well", "would", "yeah", "yes",
    }
)  # fmt: skip
STOPWORDS: frozenset[str] = frozenset(STOPWORDS_EN_PLUS) | _EXTRA_STOPWORDS


def message_date(timestamp: str) -> str:
    """Return the calendar date (``2027-03-14``) of an ISO timestamp, or the raw text if none."""
    text = timestamp.strip()
    match = _DATE.match(text)
    if match:
        return match.group(0)
    return text or "undated"


def first_date(messages: Sequence[Message]) -> str:
    """Return the date of a session: the date of its first message."""
    if not messages:
        return "undated"
    return message_date(messages[0]["timestamp"])


def session_speakers(messages: Iterable[Message]) -> frozenset[str]:
    """Return the entity ids that spoke in a session, and whoever it is stored for (its scope)."""
    return frozenset(message["speaker"] for message in messages) | stored_owners()


def render_turn(message: Message) -> str:
    """Render one turn as a memory line: ``[2027-03-14] principal: text``."""
    return f"[{message_date(message['timestamp'])}] {message['speaker']}: {message['content']}"


def split_sentences(text: str) -> list[str]:
    """Split text into sentences at end punctuation followed by space, and at line breaks.

    A period after a common abbreviation (``Dr.``, ``e.g.``) does not end a sentence.
    """
    sentences: list[str] = []
    for part in _SENTENCE_END.split(text):
        part = part.strip()
        if not part:
            continue
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {part}"
        else:
            sentences.append(part)
    return sentences


def is_question(sentence: str) -> bool:
    """Return True when a sentence ends with a question mark (closing quotes ignored)."""
    return sentence.rstrip(" \t\"')]").endswith("?")


def is_first_person(sentence: str) -> bool:
    """Return True when a sentence speaks in the first person (I, me, my, we…)."""
    return bool(_FIRST_PERSON.search(sentence.replace("’", "'")))


def stem(word: str) -> str:
    """Strip common English inflections so that variants of one word compare equal.

    A deliberately small suffix stripper (plural ``s``/``es``/``ies``, ``ing``, ``ed``, final
    ``e``, doubled final consonant): enough for ``moved``/``moving``/``move`` or
    ``runs``/``running`` to meet, without a stemming dependency.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _term(word: str) -> str | None:
    """The content term of one lower-cased word, or None for a stop word or a stray letter."""
    if word.endswith("'s"):
        word = word[:-2]
    if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
        return None
    return stem(word.replace("'", ""))


# Word → term, filled as words are met: conversations reuse a small vocabulary, so after a few
# sessions almost every word is a dictionary hit instead of a run through the stemmer.
_TERM_OF: dict[str, str | None] = {}
_TERM_CACHE_LIMIT = 200_000
_UNSEEN = "\0"  # never a term: words are made of [a-z0-9']


def terms(text: str) -> list[str]:
    """Return the content terms of a text in order: lower-cased, stop words dropped, stemmed."""
    found: list[str] = []
    cache = _TERM_OF
    for word in _WORD.findall(text.lower().replace("’", "'")):
        term = cache.get(word, _UNSEEN)
        if term is _UNSEEN:
            if len(cache) >= _TERM_CACHE_LIMIT:
                cache.clear()
            term = cache[word] = _term(word)
        if term is not None:
            found.append(term)
    return found


def pack_to_budget(lines: Iterable[tuple[str, int]], budget_tokens: int) -> list[str]:
    """Keep lines, in the given order, while their total stays within ``budget_tokens``.

    Each item is ``(line, tokens)`` where ``tokens`` counts the line plus its newline. A line that
    does not fit is skipped and smaller ones after it may still be taken.
    """
    kept: list[str] = []
    used = 0
    for line, line_tokens in lines:
        if used + line_tokens > budget_tokens:
            continue
        kept.append(line)
        used += line_tokens
    return kept


def count_each(texts: Iterable[str]) -> list[int]:
    """Count the tokens of each text.

    One call per text: for the handful of lines a session brings this is much faster than
    ``tokens.count_tokens_batch``, which starts a thread pool on every call.
    """
    return [tokens.count_tokens(text) for text in texts]


def line_tokens(line: str) -> int:
    """Count the tokens a line adds to a newline-joined text (the line plus its newline)."""
    return tokens.count_tokens(line + "\n")
