"""Plain-English text helpers shared by the reference backends.

Everything here works on message text alone: dates from timestamps, who took part in a session,
sentence splitting, and the content terms that lexical matching uses (lower-cased words without
stop words, reduced by a light suffix stripper so ``works``/``working``/``worked`` meet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from bm25s.stopwords import STOPWORDS_EN_PLUS

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message
from drift_pipeline.memory.backends._scoped import stored_owners

__all__ = [
    "CaseModel",
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
    "split_statements",
    "stem",
    "strip_frames",
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


# A question run on after a statement with its full stop missing ("I moved to Oslo Can you…?").
_QUESTION_OPENERS = (
    r"(?:Can|Could|Would|Will|What|How|Why|Where|When|Which|Who|Is|Are|Do|Does|Did|Should|Any)"
)
_RUN_ON_QUESTION = re.compile(rf"(?<=[a-z0-9)]) (?={_QUESTION_OPENERS} )")
# Typed without case (no capital even at its opening), the question opens in lower case too
# ("i'm married lol how do i…?"); a question word inside a question ("can you tell me how…")
# then splits off only an order. A sentence that opens with a capital is cased.
_OPENER_ONLY = re.compile(_QUESTION_OPENERS, re.IGNORECASE)
_RUN_ON_QUESTION_UNCASED = re.compile(rf"(?<=[a-z0-9)]) (?={_QUESTION_OPENERS} )", re.IGNORECASE)


def split_statements(text: str) -> list[str]:
    """Split text into sentences, a question run on after a statement split off it.

    People often drop the full stop before a question ("I'm based in Tucson now How do I…?");
    read as one sentence, the statement would be taken for part of the question.
    """
    found: list[str] = []
    for sentence in split_sentences(text):
        if is_question(sentence):
            uncased = sentence[:1].islower() and not shows_case(sentence)
            run_on = _RUN_ON_QUESTION_UNCASED if uncased else _RUN_ON_QUESTION
            parts: list[str] = []
            for part in run_on.split(sentence):
                if parts and _OPENER_ONLY.fullmatch(parts[-1]):
                    parts[-1] = f"{parts[-1]} {part}"  # "how" + "do I…": one question
                elif part.strip():
                    parts.append(part)
            found.extend(parts)
        else:
            found.append(sentence)
    return found


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


# Phrases that only say "about" ("what does she prefer when it comes to units?"): their words
# would otherwise count as content and match every sentence built on the same phrase.
_ABOUT_FRAMES = re.compile(
    r"\b(?:when it comes to|in terms of|with regards? to|in relation to|as far as|"
    r"is concerned|are concerned|on the (?:subject|topic|matter|question) of|as regards)\b",
    re.IGNORECASE,
)


def strip_frames(text: str) -> str:
    """Drop phrases that only mean "about" (``when it comes to``, ``in terms of``) from a query."""
    return _ABOUT_FRAMES.sub(" ", text)


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
    """Count the tokens of each text."""
    return tokens.count_tokens_batch(texts)


def line_tokens(line: str) -> int:
    """Count the tokens a line adds to a newline-joined text (the line plus its newline)."""
    return tokens.count_tokens(line + "\n")


# A word in a position where any word is capitalised: the text's opening, or after an end
# mark, a colon or an opening quote or bracket.
_OPENING = re.compile(r"(?:^|[.!?:;\"“(\[]\s*)$")
_CASED_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# Prepositions a place, employer or person follows ("in Tucson", "at Initech", "with Ana").
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_PLACED_WORDS = re.compile(
    r"(?P<lead>\b(?:in|at|to|from|with|for|near|joined)\s+)(?P<words>[a-z]+(?: [a-z]+){0,2})\b"
)
_FIRST_PERSON_I = frozenset({"i", "i'm", "i've", "i'd", "i'll", "i’m", "i’ve", "i’d", "i’ll"})


class CaseModel:
    """Which words are names, learnt from how the text a memory reads capitalises them.

    Some people type everything in lower case ("i took the offer from ravelin"); there the names
    a rule needs ("works at <Name>") cannot be told from ordinary words by their case. Text that
    does use case (the same person on other days, the assistant's replies) shows which words are
    names: a word is one when, away from the opening of a sentence, it is capitalised more often
    than not. A sentence that shows no case of its own is then recased with those names before
    the rules read it, as a truecaser would.
    """

    def __init__(self) -> None:
        self._capitalised: dict[str, int] = {}
        self._lower: dict[str, int] = {}
        # Words read in lower case in text written with capitals: ordinary words, not names.
        self._ordinary: set[str] = set()

    def learn(self, text: str) -> None:
        """Count how each word inside a sentence of ``text`` is cased (case-blind text aside)."""
        for sentence in split_sentences(text):
            ordinary, cased = _casing(sentence)
            self._ordinary.update(ordinary)
            for folded, capitalised in cased:
                counts = self._capitalised if capitalised else self._lower
                counts[folded] = counts.get(folded, 0) + 1

    def is_name(self, word: str) -> bool:
        """Whether ``word`` (any case) has been seen capitalised more often than not."""
        folded = word.lower()
        return self._capitalised.get(folded, 0) > self._lower.get(folded, 0)

    def unseen(self, word: str) -> bool:
        """Whether ``word`` was never read in text written with capitals, in either case."""
        folded = word.lower()
        return (
            folded not in self._ordinary
            and folded not in self._capitalised
            and folded not in self._lower
        )

    def recase(self, sentence: str) -> str:
        """Capitalise the names of a sentence that shows no case; others are left as is.

        A name is a word seen capitalised more often than not, or, in a sentence typed all in
        lower case, right after a preposition ("still unpacking in tucson", "i'm with initech
        now"), a run of words never seen in text that shows case: an ordinary word would most
        likely have been read before, and a new place or employer is what such a slot holds.
        """
        if shows_case(sentence):
            return sentence
        if sentence == sentence.lower():  # typed all in lower case: capitals are no evidence
            sentence = _PLACED_WORDS.sub(self._place_names, sentence)
        return _CASED_WORD.sub(
            lambda match: (
                match.group(0)[0].upper() + match.group(0)[1:]
                if self.is_name(match.group(0))
                else match.group(0)
            ),
            sentence,
        )

    def _place_names(self, match: re.Match[str]) -> str:
        words = match.group("words").split(" ")
        for index, word in enumerate(words):
            if len(word) < 3 or word in STOPWORDS or not self.unseen(word):
                break
            words[index] = word.capitalize()
        return match.group("lead") + " ".join(words)


@lru_cache(maxsize=8192)  # sentences come back across sessions; what one shows is its own
def _casing(sentence: str) -> tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]:
    """What :meth:`CaseModel.learn` reads in one sentence.

    The lower-case words of a sentence written with capitals (ordinary words), and, in order,
    each counted word inside a sentence that shows case, folded, with whether it was
    capitalised.
    """
    ordinary = tuple(_LOWER_WORD.findall(sentence)) if sentence != sentence.lower() else ()
    if not shows_case(sentence):
        return ordinary, ()
    cased: list[tuple[str, bool]] = []
    for match in _CASED_WORD.finditer(sentence):
        word = match.group(0)
        folded = word.lower()
        if folded in STOPWORDS or folded in _FIRST_PERSON_I or len(folded) < 3:
            continue
        if _OPENING.search(sentence[: match.start()]):
            continue
        cased.append((folded, word[0].isupper()))
    return ordinary, tuple(cased)


@lru_cache(maxsize=8192)  # asked of each sentence as it is learnt from and as it is recased
def shows_case(sentence: str) -> bool:
    """Whether a sentence capitalises any word but its first and the pronoun ``I``."""
    for match in _CASED_WORD.finditer(sentence):
        word = match.group(0)
        if (
            word[0].isupper()
            and word.lower() not in _FIRST_PERSON_I
            and not _OPENING.search(sentence[: match.start()])
        ):
            return True
    return False
