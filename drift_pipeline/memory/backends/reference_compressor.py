"""``reference_compressor``: one summary of at most 512 tokens per session.

The TES reference (spec §7.7): "one LLM call per session, 512-token cap output, no retrieval
LLM calls". By default the summary is extractive and deterministic, so the reference is
reproducible without a model; it then calls no model and is charged no write-side model tokens
(what it stores and what it hands the reader are charged like any system's).

With ``summariser="llm"`` it makes that call for real: one chat completion per session through
:mod:`drift_pipeline.llm` (prompt ``prompts/reference_compressor.md``, ``max_tokens`` 512, the
reply cut to 512 tokens whatever the endpoint returns), and its write cost is the call's actual
prompt + completion tokens. It runs inside the sandboxed worker like every backend: the harness
gives it the endpoint and model as options, the key through the one allowlisted variable
``DRIFT_LLM_API_KEY`` (this arm's worker only), and its completion cache in the worker's own
state folder (``$DRIFT_STATE_DIR/llm_cache``), which the harness fills from and copies back to
``<data root>/llm_cache/reference_compressor`` around each replicate, so reruns send nothing.
A failed call fails that ``store()`` (recorded as a fault), never falls back silently.
"""

from __future__ import annotations

import hashlib
import os
import re
from array import array
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from drift_pipeline import tokens
from drift_pipeline._bounded import BoundedCache
from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._bm25_index import GrowableArray
from drift_pipeline.memory.backends._extract import (
    REMARK_PREFIX,
    extract_statements,
    insincere,
    predicate_hint,
)
from drift_pipeline.memory.backends._lexical import AppendOnlyLexicalIndex
from drift_pipeline.memory.backends._text import (
    CaseModel,
    count_each,
    first_date,
    is_first_person,
    is_question,
    session_speakers,
    split_statements,
    strip_frames,
    terms,
)
from drift_pipeline.memory.backends._value_topics import value_topics

if TYPE_CHECKING:
    from drift_pipeline.llm import LLMClient

__all__ = [
    "SUMMARY_CAP_TOKENS",
    "ReferenceCompressor",
    "render_transcript",
    "summarise_session",
]

SUMMARY_CAP_TOKENS = 512
# A user turn opening with a confirmation answers the assistant's question before it.
_CONFIRMS = re.compile(
    r"\b(?:yes|yeah|yep|correct|exactly|that(?:'s| is) right|spot on|indeed|right you are)\b",
    re.IGNORECASE,
)
_CONFIRM_WITHIN = 60  # characters: the confirmation opens the turn, after a lead-in at most
# A summary scoring at least this share of the best score is about the question.
_ABOUT_THE_QUESTION = 0.5
# No "speaker: sentence" line is shorter than this, so a smaller remainder cannot take another.
_SMALLEST_LINE_TOKENS = 3
# An assistant addressing its interlocutor by name ("Of course, Kit." / "Hi Kit!") shows what
# they are called now, however the change was first put ("you should call me Kit").
_ADDRESS = re.compile(
    r"^(?:hi|hello|hey|dear|welcome back|good (?:morning|afternoon|evening))[,!]?\s+"
    r"(?P<opening>[A-Z][\w'’-]*)\b"
    r"|,\s+(?P<closing>[A-Z][\w'’-]*)\s*[.!]+[\"')\]]*$",
    re.IGNORECASE,
)
_ADDRESS_WORDS = 8  # a longer sentence is about something else and merely names them
# Words saying one value gave way to another ("I swapped Galway for Cork").
_CHANGE = re.compile(
    r"\b(?:swap\w*|switch\w*|trad(?:e|ed|ing)|replac\w*|exchang\w*|chang\w*|instead of|"
    r"no longer|gave up|left|moved|traded|goodbye|farewell|settl\w*)\b",
    re.IGNORECASE,
)
# A capitalised name inside a sentence (not its first word): "Cork", "Osprey Analytics".
_NAMED = re.compile(r"(?<=[\w,;:] )[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)*")
_SHORTEST_VALUE = 3  # characters: a shorter value ("NY") matches too many words
# The index words of a name fact, for a session whose assistant addresses someone by name.
_NAME_PREDICATE = "name"
_PUNCTUATION = ".,;:!?\"'()[]“”‘’"


@dataclass(frozen=True)
class _Candidate:
    position: int
    line: str
    terms: frozenset[str]
    first_person: bool


@dataclass(frozen=True)
class _Summary:
    session_id: str
    header: str  # its date line
    text: str
    speakers: frozenset[str]


def _units(lines: list[str]) -> list[list[str]]:
    """A summary's lines in the units they are read in: one line, or a question and its answer.

    "assistant: Should I assume flowing prose from here on?" / "principal: Correct." means what
    the question says only beside the confirmation, so the two are never taken apart.
    """
    units: list[list[str]] = []
    waiting: list[str] = []
    for line in lines:
        if is_question(line):
            waiting.append(line)
            continue
        units.append([*waiting, line])
        waiting = []
    if waiting:
        units.append(waiting)
    return units


def addresses_by_name(sentence: str) -> bool:
    """Whether a short sentence addresses its listener by name (``Sure, Kit.``, ``Hi Kit!``)."""
    return bool(addressed_name(sentence))


def addressed_name(sentence: str) -> str:
    """The name a short sentence addresses its listener by (``Sure, Kit.`` → ``Kit``), or ``""``."""
    if len(sentence.split()) > _ADDRESS_WORDS:
        return ""
    match = _ADDRESS.search(sentence.strip())
    if match is None:
        return ""
    name = match.group("opening") or match.group("closing") or ""
    # The name itself must be capitalised (the pattern ignores case only for the greeting).
    return name if name[:1].isupper() and name.lower() not in _NOT_NAMES else ""


# Capitalised words that close or follow a greeting without being anyone's name.
_NOT_NAMES = frozenset({"i", "there", "again", "all", "everyone", "folks", "team", "thanks"})


def render_transcript(messages: list[Message]) -> str:
    """Render a session as the modelled summariser's prompt sees it: ``speaker: text`` lines."""
    return "\n".join(f"{message['speaker']}: {message['content']}" for message in messages)


# The last sessions summarised, by what the summary reads of them: a session shared by several
# entities is stored into each one's memory in turn, and summarised once.
_SUMMARIES: BoundedCache[tuple[int, tuple[tuple[str, str, str, str], ...]], str] = BoundedCache(2)


def summarise_session(messages: list[Message], cap_tokens: int = SUMMARY_CAP_TOKENS) -> str:
    """Return an extractive summary of a session (see :func:`_summarise`), made once per session.

    Args:
        messages: One whole session.
        cap_tokens: Token cap of the returned text.
    """
    said = tuple((m["speaker"], m["role"], m["content"], m["timestamp"]) for m in messages)
    return _SUMMARIES.get_or_build((cap_tokens, said), lambda: _summarise(messages, cap_tokens))


def _summarise(messages: list[Message], cap_tokens: int) -> str:
    """Return an extractive summary of a session, dated on its first line, within ``cap_tokens``.

    Candidates are the declarative sentences of non-assistant speakers (assistants mostly echo and
    ask) that do not mock or take themselves back ("yeah, right", "I am joking"), and the
    assistant's questions that the next turn confirms ("Shall I call you Kit?" / "Yes, that's
    right"), which the confirmation means. The session's last assistant sentence addressing its
    listener by name ("Sure, Kit.") is always kept when it fits: it shows what they are called
    now, however the change was first put. Selection is greedy: first-person sentences (and
    confirmed questions) before others, then the sentence adding the most content words not yet
    covered, earlier sentences winning ties; a sentence adding nothing new is dropped, and
    sentences are chosen while the summary, date line included, stays within the cap. The
    chosen lines are then written in the order they were said: a session that corrects itself
    ("I still live in Bristol. Actually, we moved to Wellington.") must show the correction
    last, since a reader takes the later of two same-dated statements as current.

    Args:
        messages: One whole session.
        cap_tokens: Token cap of the returned text.

    Returns:
        ``[2027-03-14]`` followed by ``speaker: sentence`` lines, or ``""`` when nothing qualifies.

    """
    candidates: list[_Candidate] = []
    asked: list[str] = []  # the questions of the assistant turn just before
    asker = ""
    address: _Candidate | None = None  # the session's last address of someone by name
    addresses: set[int] = set()  # positions of every such address
    for message in messages:
        if message["role"] == "assistant":
            sentences = split_statements(message["content"])
            asked = [s for s in sentences if is_question(s)]
            asker = message["speaker"]
            for sentence in sentences:
                if not is_question(sentence) and addresses_by_name(sentence):
                    address = _Candidate(
                        position=len(candidates),
                        line=f"{asker}: {sentence}",
                        terms=frozenset(terms(sentence)),
                        first_person=True,
                    )
                    addresses.add(address.position)
                    candidates.append(address)
            continue
        if asked and _CONFIRMS.search(message["content"][:_CONFIRM_WITHIN]):
            # "Shall I call you Kit from now on?" / "yes, that's right: call me Kit": the
            # confirmation means what the question says, so the question stays beside it.
            for question in asked:
                candidates.append(
                    _Candidate(
                        position=len(candidates),
                        line=f"{asker}: {question}",
                        terms=frozenset(terms(question)),
                        first_person=True,
                    )
                )
        asked = []
        sentences = split_statements(message["content"])
        mocked = insincere(sentences)
        for number, sentence in enumerate(sentences):
            sentence_terms = frozenset(terms(sentence))
            if is_question(sentence) or number in mocked or not sentence_terms:
                continue
            candidates.append(
                _Candidate(
                    position=len(candidates),
                    line=f"{message['speaker']}: {sentence}",
                    terms=sentence_terms,
                    first_person=is_first_person(sentence),
                )
            )
    if not candidates:
        return ""
    header = f"[{first_date(messages)}]"
    counts = count_each([header + "\n", *(c.line + "\n" for c in candidates)])
    room = cap_tokens - counts[0]
    chosen: list[_Candidate] = []
    covered: set[str] = set()
    # Only the session's last address of its listener is a candidate, and it is always kept
    # (when it fits): it is how the session last named them, whatever words it adds.
    remaining = [c for c in candidates if c.position not in addresses]
    if address is not None and counts[address.position + 1] <= room:
        chosen.append(address)
        covered |= address.terms
        room -= counts[address.position + 1]
    while room >= _SMALLEST_LINE_TOKENS:
        # A sentence adding nothing new is dropped, whoever speaks in it: a first-person
        # repeat ("Let me know if anything is unclear.", said twice) must not end the choice
        # before the sentences that say something else ("the movers unloaded in Porto").
        remaining = [c for c in remaining if c.terms - covered]
        if not remaining:
            break
        best = max(remaining, key=lambda c: (c.first_person, len(c.terms - covered), -c.position))
        remaining.remove(best)
        cost = counts[best.position + 1]
        if cost > room:
            continue  # too long for what is left; a shorter sentence may still fit
        chosen.append(best)
        covered |= best.terms
        room -= cost
    if not chosen:
        return ""
    chosen.sort(key=lambda c: c.position)
    lines = [header, *(c.line for c in chosen)]
    summary = "\n".join(lines)
    # Belt and braces: per-line counts add up exactly for these lines, but the cap is a promise.
    while len(lines) > 1 and tokens.count_tokens(summary) > cap_tokens:
        lines.pop()
        summary = "\n".join(lines)
    return summary if len(lines) > 1 else ""


def _llm_prompt() -> str:
    source = resources.files("drift_pipeline.memory.backends") / "prompts"
    return (source / "reference_compressor.md").read_text(encoding="utf-8").strip()


def _cap(text: str, cap_tokens: int) -> str:
    ids = tokens.encoding().encode_ordinary(text)
    return text if len(ids) <= cap_tokens else tokens.encoding().decode(ids[:cap_tokens])


class ReferenceCompressor:
    """Keep one ≤512-token summary per session; retrieve the parts most about the question.

    What is kept is bounded: one summary per session of at most ``SUMMARY_CAP_TOKENS``, however
    long the session, and nothing else (the transcript is gone once ``store()`` returns). What it
    keeps is what it reports as storage: :meth:`snapshot` is the summaries, each counted once.

    Extractive (default): no model is called, so no write-side model tokens are charged. LLM
    (``summariser="llm"``): one real call per session, its actual tokens counted. Retrieval is
    lexical either way and needs no LLM: a summary is read in units (a line, or an assistant's
    question with the line that confirms it), and the units most about the question are
    returned under their summaries' date lines while they fit ``budget_tokens`` (see
    :meth:`retrieve`). A summary is visible to the speakers of its session only.

    Args:
        budget_tokens: Size of the returned context.
        summariser: ``extractive`` (deterministic, offline) or ``llm``.
        llm_base_url: The endpoint (``summariser="llm"``; the harness fills it in).
        llm_model: The model (``summariser="llm"``; the harness fills it in).
        llm_timeout_s: Per-request timeout of the summariser's calls.
        llm_max_retries: Retries of a summariser call (429, 5xx, timeouts) before the store fails.

    """

    name: ClassVar[str] = "reference_compressor"
    # 2: retrieval scores and packs with numpy (same answers, lower read latency at long horizons).
    # 3: the extractive summariser is charged no modelled model call.
    # 4: summaries indexed with the words of their topics and of the slot facts their session
    # states; summaries matching no query word fill the rest of the budget, newest first.
    # 5: a summary's lines in the order they were said; the summaries about the question (at
    # least half the best score) newest first, so the latest telling is never crowded out;
    # sarcastic and joking sentences left out of summaries; an assistant's question kept with
    # the turn that confirms it.
    # 6: a session's last address of its listener by name kept in its summary ("Sure, Kit.");
    # among the summaries about the question, those whose session states a fact on the asked
    # topic first, newest first.
    # An instance attribute: the LLM summariser appends its model and prompt hash.
    # 7: a statement run into a question kept in the summary; a query read without the names
    # its speakers go by and without "when it comes to"; the summaries stating a fact on the
    # asked topic first, those whose facts share most with the question leading; fact_store's
    # extraction 5 for what a session states.
    # 8: read by units of a summary (a line, or a question with the line that confirms it)
    # rather than whole summaries, each unit under its summary's date line; units indexed with
    # the facts they state and the kinds of preference the values they name belong to; a
    # sentence adding no new word no longer ends a summary's selection.
    # 9: fact_store's extraction 7 for what a session states.
    # 10: fact_store's extraction 8 (any one-letter slip in an everyday word mended; a new name
    # typed in lower case after "in", "at", "with" read as a name).
    # 11: fact_store's extraction 9 (an employer from a signed contract or an
    # accepted offer, names others call the speaker by, advice about replies and a default as
    # standing instructions, contractions never mended as slips).
    version: str = "11"

    def __init__(
        self,
        budget_tokens: int = 2000,
        summariser: Literal["extractive", "llm"] = "extractive",
        llm_base_url: str | None = None,
        llm_model: str | None = None,
        llm_timeout_s: float = 120.0,
        llm_max_retries: int = 5,
    ) -> None:
        if budget_tokens < 0:
            raise ValueError(
                f"reference_compressor budget_tokens must be >= 0, got {budget_tokens}"
            )
        if summariser not in ("extractive", "llm"):
            raise ValueError(
                f"reference_compressor summariser must be extractive or llm, got {summariser!r}"
            )
        self.budget_tokens = budget_tokens
        self._summaries: list[_Summary] = []
        self._header_tokens = array("q")  # per summary: its date line's tokens, for numpy
        # A summary is read in units (a line, or a question with its confirmation): per unit,
        # its text, its summary, its tokens (each line with its newline) and two indexes.
        self._units: list[str] = []
        self._unit_summary = array("i")
        self._unit_tokens = array("q")
        self._index = AppendOnlyLexicalIndex()  # what the unit is found by
        self._stated = AppendOnlyLexicalIndex()  # the topics it states a fact of
        # per speaker: each value they stated a fact of their own with → that fact's topic words
        self._own_values: dict[str, dict[str, str]] = {}
        self._visible: dict[str, GrowableArray] = {}  # per entity: may it see unit i?
        self._storage = tokens.LineTally()
        self._write_tokens = 0
        # Which words are names, from how the text read so far capitalises them.
        self._case = CaseModel()
        # The names the speakers go by (as the assistant addresses them, as they ask to be
        # called), case-folded: in a question they say whom it is about, not what.
        self._names: set[str] = set()
        self._client: LLMClient | None = None
        if summariser == "llm":
            self._client, self._prompt = self._llm(
                llm_base_url, llm_model, llm_timeout_s, llm_max_retries
            )

    def _llm(
        self, base_url: str | None, model: str | None, timeout_s: float, max_retries: int
    ) -> tuple[LLMClient, str]:
        from drift_pipeline.llm import LLMClient, LLMConfig

        if not base_url or not model:
            raise ValueError("reference_compressor summariser llm needs llm_base_url and llm_model")
        prompt = _llm_prompt()
        # The worker's own state folder (it cannot see the data root); the harness persists it.
        state = Path(os.environ.get("DRIFT_STATE_DIR") or ".")
        # The key is read from DRIFT_LLM_API_KEY (LLMConfig's default), the one variable the
        # harness lets into this backend's worker.
        config = LLMConfig(base_url, model, timeout_s=timeout_s, max_retries=max_retries)
        self._prompt_sha256 = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        self.version = f"{type(self).version}+llm:{model}@{self._prompt_sha256[:12]}"
        return LLMClient(config, state / "llm_cache"), prompt

    def _summarise_llm(self, messages: list[Message]) -> tuple[str, int]:
        """One call: the session in, a ≤512-token summary out; returns it and the call's tokens."""
        assert self._client is not None
        reply = self._client.complete(
            [
                {"role": "system", "content": self._prompt},
                {"role": "user", "content": render_transcript(messages)},
            ],
            prompt_version=f"reference_compressor:{self._prompt_sha256}",
            max_tokens=SUMMARY_CAP_TOKENS,
        )
        body = reply.text.strip()
        if not body:
            return "", reply.prompt_tokens + reply.completion_tokens
        header = f"[{first_date(messages)}]\n"
        # The cap is a promise, whatever the endpoint did with max_tokens.
        body = _cap(body, SUMMARY_CAP_TOKENS - tokens.count_tokens(header))
        return header + body, reply.prompt_tokens + reply.completion_tokens

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Summarise the session and keep the summary; account its (modelled or real) call."""
        if not messages:
            return
        if self._client is not None:
            summary, call_tokens = self._summarise_llm(messages)
            self._write_tokens += call_tokens
        else:
            # Extractive: no model reads the transcript, so nothing is charged for a call.
            summary = summarise_session(messages)
        if not summary:
            return
        # Which words are names, learnt from the whole session (the assistant's replies too).
        for message in messages:
            self._case.learn(message["content"])
        date = first_date(messages)
        assistants = {m["speaker"] for m in messages if m["role"] == "assistant"}
        header, *body = summary.split("\n")
        number = len(self._summaries)
        speakers = session_speakers(messages)
        for unit in _units(body):
            index_text, told_text = self._read_unit(unit, assistants, date)
            position = self._index.add(index_text)
            self._stated.add(told_text)
            self._units.append("\n".join(unit))
            self._unit_summary.append(number)
            self._unit_tokens.append(sum(tokens.count_tokens(line + "\n") for line in unit))
            for speaker in speakers:
                visible = self._visible.get(speaker)
                if visible is None:
                    visible = self._visible[speaker] = GrowableArray(np.bool_)
                visible.resize(position + 1)
                visible.view()[position] = True
        self._summaries.append(
            _Summary(session_id=session_id, header=header, text=summary, speakers=speakers)
        )
        self._header_tokens.append(tokens.count_tokens(header + "\n"))
        self._storage.append(summary)

    def _read_unit(self, unit: list[str], assistants: set[str], date: str) -> tuple[str, str]:
        """The words a unit of a summary is found by, and the words of what it tells.

        Indexed: its words (an address of someone by name aside: it is found by its topic), the
        topics of the facts its speakers state in it (as fact_store indexes them) and of the
        topic words it uses, and the kinds of preference the values it names belong to ("bullet
        points" is a way to lay information out). Told: the topics of the facts of the
        speaker's own it states, in the words of the facts themselves, and the kinds of the
        values it names when it states anything of the speaker's own, or answers an
        assistant's question with a confirmation.
        """
        said: list[tuple[str, str]] = [
            (speaker, text) for speaker, _, text in (line.partition(": ") for line in unit)
        ]
        addresses = [
            text for speaker, text in said if speaker in assistants and addresses_by_name(text)
        ]
        for text in addresses:
            self._names.add(addressed_name(text).casefold())
        content = " ".join(text for _, text in said if text not in addresses)
        # What the unit states, read from its own lines (the summary is what is kept).
        statements = extract_statements(
            [
                Message(
                    speaker=speaker, role="user", content=self._case.recase(text), timestamp=date
                )
                for speaker, text in said
                if speaker not in assistants
            ]
        )
        for statement in statements:
            if statement.predicate == _NAME_PREDICATE:
                self._names.update(word.casefold() for word in statement.value.split())
        # The topics the unit states a fact of the speaker's own about (a move, a new job, a
        # name), as opposed to merely touching them ("my sister signed a lease in Kyoto"); an
        # assistant addressing someone by name states what they are called.
        stated = {
            predicate_hint(statement.predicate)
            for statement in statements
            if not statement.predicate.startswith(REMARK_PREFIX)
        }
        if addresses:
            stated.add(predicate_hint(_NAME_PREDICATE))
        stated |= self._changes(said, assistants)
        for statement in statements:
            if statement.value and not statement.predicate.startswith(REMARK_PREFIX):
                hint = predicate_hint(statement.predicate)
                if hint and len(statement.value) >= _SHORTEST_VALUE:
                    values = self._own_values.setdefault(statement.subject, {})
                    values[statement.value.casefold()] = hint
        kinds = value_topics(content)
        confirmed = len(said) > 1 and is_question(said[0][1])
        facts = [s.text for s in statements if not s.predicate.startswith(REMARK_PREFIX)]
        told_kinds = kinds if statements or confirmed else ""
        topics = stated | {predicate_hint(statement.predicate) for statement in statements}
        topics.add(predicate_hint(REMARK_PREFIX + content))
        return (
            " ".join([content, *sorted(topics), kinds]),
            " ".join([*sorted(stated), *facts, told_kinds]),
        )

    def _changes(self, said: list[tuple[str, str]], assistants: set[str]) -> set[str]:
        """Topics of values a speaker said before that their lines now say gave way.

        "I swapped Galway for Cork" names no topic, but Galway was the speaker's home: a change
        said of a value the same speaker stated before is a telling on its topic.
        """
        stated: set[str] = set()
        for speaker, text in said:
            if speaker in assistants or not _CHANGE.search(text):
                continue
            known = self._own_values.setdefault(speaker, {})
            folded = text.casefold()
            hints = {
                hint
                for value, hint in known.items()
                if re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", folded)
            }
            stated |= hints
            # What it gave way to ("Cork") is then the speaker's own value of that topic, so a
            # later "I swapped Cork for Oslo" is a telling too.
            for name in _NAMED.findall(text):
                if len(hints) == 1 and name.casefold() not in known:
                    known[name.casefold()] = next(iter(hints))
        return stated

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the lines of the summaries most about ``query`` that ``entity_id`` may see.

        A summary is read in units: a line, or an assistant's question with the line that
        confirms it. The units stating a fact of the speaker's own on the asked topic (a move,
        a new employer, a name, a change of a value the speaker stated before, a value of the
        asked kind of preference) come first, newest first: what is current is decided by the
        latest telling, and passing mentions of the topic (someone else's move, a daydream)
        must not crowd it out. Then the other units about the question (scoring at least half
        the best), newest first; then the other matching units, best overlap first (newer on
        ties), then those sharing no word with the query, newest first. The query is read
        without the names its speakers go by. Units are taken in that order while they fit the
        budget, each with the date line of its summary once; they are returned under their
        dates, oldest summary first, each summary's lines in the order they were said.
        """
        visible = self._visible.get(entity_id)
        if visible is None:
            return ""
        query = self._topic_of(query)
        scores = self._index.scores(query)
        shown = visible.view()
        visible_positions = np.flatnonzero(shown)
        matched = scores[visible_positions] > 0
        candidates = visible_positions[matched]
        candidate_scores = scores[candidates]
        # The units stating a fact on the asked topic come first, newest first: they are the
        # tellings of what is current, and a question's other words ("want", "now") can rank
        # chatter above them. Those whose facts share most with the question lead ("units"
        # among the many tellings of some preference).
        stated_scores = self._stated.scores(query)[candidates]
        telling = stated_scores > 0
        told = telling & (stated_scores >= _ABOUT_THE_QUESTION * stated_scores.max(initial=0.0))
        # Then the rest of the units about the question (at least half the best score), newest
        # first, ahead of the many passing mentions of the topic (someone else's move, a
        # daydream) that would otherwise fill the budget before an older telling.
        strong = ~telling & (
            candidate_scores >= _ABOUT_THE_QUESTION * candidate_scores.max(initial=0.0)
        )
        weak = candidates[~telling & ~strong]
        # The units sharing no word with the query fill what is left, newest first: a change
        # is often told in other words than the question's.
        order = np.concatenate(
            (
                candidates[told][::-1],
                candidates[strong][::-1],
                candidates[telling & ~told][::-1],
                weak[np.lexsort((-weak, -scores[weak]))],
                visible_positions[~matched][::-1],
            )
        )
        return self._pack(order)

    def _pack(self, order: npt.NDArray[np.intp]) -> str:
        """Take units in ``order`` while they fit the budget; write them under their dates."""
        unit_tokens = np.frombuffer(self._unit_tokens, dtype=np.int64)[order]
        unit_summary = np.frombuffer(self._unit_summary, dtype=np.int32)[order]
        # A unit of a summary not yet taken brings its date line.
        header_tokens = np.frombuffer(self._header_tokens, dtype=np.int64)[unit_summary]
        dated = np.zeros(len(self._summaries), dtype=np.bool_)
        taken: list[int] = []
        left = self.budget_tokens
        position = 0
        while position < order.size:
            summary = int(unit_summary[position])
            price = int(unit_tokens[position]) + (
                0 if dated[summary] else int(header_tokens[position])
            )
            if price > left:
                # The next unit that fits at its price now (with its date line, or without as a
                # further line of a summary already taken), without a Python loop over the
                # thousands that do not.
                prices = unit_tokens[position:] + np.where(
                    dated[unit_summary[position:]], 0, header_tokens[position:]
                )
                fits = np.flatnonzero(prices <= left)
                if fits.size == 0:
                    break
                position += int(fits[0])
                continue
            taken.append(int(order[position]))
            dated[summary] = True
            left -= price
            position += 1
        taken.sort()
        lines: list[str] = []
        current = -1
        for unit in taken:
            summary = self._unit_summary[unit]
            if summary != current:
                lines.append(self._summaries[summary].header)
                current = summary
            lines.append(self._units[unit])
        return "\n".join(lines)

    def _topic_of(self, query: str) -> str:
        """The query without the names its speakers go by ("Where does Kit work now?" → work).

        Phrases that only mean "about" ("when it comes to") are dropped too: their words would
        match every sentence built on them, whatever it is about.

        A question about someone names them, and their name is rare in the summaries, so it
        would outweigh the words that say what is asked: every summary of a session that
        happened to mention the name ("reply to Kit's email") would rank above the one that
        told the news. A query of names alone is kept whole.
        """
        query = strip_frames(query)
        if not self._names:
            return query
        kept = [
            word
            for word in query.split()
            if re.sub(r"(?:'s|’s)$", "", word.strip(_PUNCTUATION)).casefold() not in self._names
        ]
        topic = " ".join(kept)
        return topic if terms(topic) else query

    def token_counts(self) -> TokenCounts:
        """Summariser tokens, modelled or actual (write); retrieval is free (read 0)."""
        return TokenCounts(write=self._write_tokens, read=0)

    def snapshot(self) -> str:
        """Every stored summary, oldest first."""
        return "\n".join(summary.text for summary in self._summaries)

    def storage_tokens(self) -> int:
        """Tokens of :meth:`snapshot`, counted as summaries arrive (see ``CountsOwnStorage``)."""
        return self._storage.count()
