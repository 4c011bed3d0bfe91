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

from drift_pipeline import tokens
from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._bm25_index import GrowableArray
from drift_pipeline.memory.backends._extract import (
    REMARK_PREFIX,
    extract_statements,
    is_sarcastic,
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

if TYPE_CHECKING:
    from drift_pipeline.llm import LLMClient

__all__ = [
    "SUMMARY_CAP_TOKENS",
    "ReferenceCompressor",
    "render_transcript",
    "summarise_session",
]

SUMMARY_CAP_TOKENS = 512
# The date line and "speaker: " prefixes are metadata, not content: they are not indexed (a
# speaker's name would otherwise match every summary of every session they spoke in).
_SPEAKER_AND_DATE = re.compile(r"(?m)^(?:\[[^\]\n]*\]$|[^:\n]{1,64}: )")
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
    date: str
    text: str
    tokens: int
    speakers: frozenset[str]


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


def summarise_session(messages: list[Message], cap_tokens: int = SUMMARY_CAP_TOKENS) -> str:
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
        for sentence in split_statements(message["content"]):
            sentence_terms = frozenset(terms(sentence))
            if is_question(sentence) or is_sarcastic(sentence) or not sentence_terms:
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
    while remaining and room >= _SMALLEST_LINE_TOKENS:
        best = max(remaining, key=lambda c: (c.first_person, len(c.terms - covered), -c.position))
        if not best.terms - covered:
            break
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
    """Keep one ≤512-token summary per session; retrieve the most relevant ones.

    Extractive (default): no model is called, so no write-side model tokens are charged. LLM
    (``summariser="llm"``): one real call per session, its actual tokens counted. Retrieval is
    lexical either way (IDF-weighted overlap between query and summary, more recent first on
    ties), needs no LLM, and returns whole summaries while they fit ``budget_tokens``. A summary
    is visible to the speakers of its session only.

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
    version: str = "7"

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
        self._index = AppendOnlyLexicalIndex()
        self._stated = AppendOnlyLexicalIndex()  # per summary: the topics it states a fact of
        # per speaker: each value they stated a fact of their own with → that fact's topic words
        self._own_values: dict[str, dict[str, str]] = {}
        self._summary_tokens = array("q")  # _Summary.tokens, for numpy
        self._visible: dict[str, GrowableArray] = {}  # per entity: may it see summary i?
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
        assistants = {m["speaker"] for m in messages if m["role"] == "assistant"}
        lines = summary.split("\n")
        address_lines = {
            number
            for number, line in enumerate(lines)
            if line.split(": ", 1)[0] in assistants and addresses_by_name(line.split(": ", 1)[-1])
        }
        # An address is indexed by its topic (a name), not its words: the listener's name is in
        # most questions about them, and would pull every session that greets them to the top.
        content = _SPEAKER_AND_DATE.sub(
            "", "\n".join(line for n, line in enumerate(lines) if n not in address_lines)
        )
        # Indexed with the words of the topics it touches (those of the slot facts the session
        # states, as fact_store indexes them, and of the topic words it uses), so a question in
        # other words ("where do they live?") finds "the movers unloaded the boxes in Porto".
        statements = extract_statements(messages, self._case)
        for number in address_lines:
            self._names.add(addressed_name(lines[number].split(": ", 1)[-1]).casefold())
        for statement in statements:
            if statement.predicate == _NAME_PREDICATE:
                self._names.update(word.casefold() for word in statement.value.split())
        # The topics the session states a fact of the speaker's own about (a move, a new job, a
        # name), as opposed to merely touching them ("my sister signed a lease in Kyoto"); an
        # assistant addressing someone by name states what they are called.
        stated = {
            predicate_hint(statement.predicate)
            for statement in statements
            if not statement.predicate.startswith(REMARK_PREFIX)
        }
        if address_lines:
            stated.add(predicate_hint(_NAME_PREDICATE))
        # "I swapped Galway for Cork" names no topic, but Galway was the speaker's home: a
        # change said of a value the same speaker stated before is a telling on its topic.
        for number, line in enumerate(lines[1:], start=1):
            speaker, _, said = line.partition(": ")
            if number in address_lines or not _CHANGE.search(said):
                continue
            known = self._own_values.setdefault(speaker, {})
            folded = said.casefold()
            hints = {
                hint
                for value, hint in known.items()
                if re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", folded)
            }
            stated |= hints
            # What it gave way to ("Cork") is then the speaker's own value of that topic, so a
            # later "I swapped Cork for Oslo" is a telling too.
            for name in _NAMED.findall(said):
                if len(hints) == 1 and name.casefold() not in known:
                    known[name.casefold()] = next(iter(hints))
        for statement in statements:
            if statement.value and not statement.predicate.startswith(REMARK_PREFIX):
                hint = predicate_hint(statement.predicate)
                if hint and len(statement.value) >= _SHORTEST_VALUE:
                    values = self._own_values.setdefault(statement.subject, {})
                    values[statement.value.casefold()] = hint
        topics = stated | {predicate_hint(statement.predicate) for statement in statements}
        topics.add(predicate_hint(REMARK_PREFIX + content))
        position = self._index.add(" ".join([content, *sorted(topics)]))
        # What it states, in the words of the facts themselves ("prefers metric units"), so that
        # among many tellings of some preference, those of the asked one score highest.
        facts = [s.text for s in statements if not s.predicate.startswith(REMARK_PREFIX)]
        self._stated.add(" ".join([*sorted(stated), *facts]))
        speakers = session_speakers(messages)
        self._summaries.append(
            _Summary(
                session_id=session_id,
                date=first_date(messages),
                text=summary,
                tokens=tokens.count_tokens(summary + "\n"),  # as joined to the next summary
                speakers=speakers,
            )
        )
        self._summary_tokens.append(self._summaries[-1].tokens)
        self._storage.append(summary)
        for speaker in speakers:
            visible = self._visible.get(speaker)
            if visible is None:
                visible = self._visible[speaker] = GrowableArray(np.bool_)
            visible.resize(position + 1)
            visible.view()[position] = True

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the summaries sharing most words with ``query`` that ``entity_id`` may see.

        The summaries whose session states a fact of the speaker's own on the asked topic (a
        move, a new employer, a name, a change of a value the speaker stated before) come first,
        newest first: what is current is decided by the latest telling, and passing mentions of
        the topic (someone else's move, a daydream) must not crowd it out. Then the other
        summaries about the question (scoring at least half the best), newest first; then the
        other matching summaries, best overlap first (newer on ties), then those sharing no word
        with the query, newest first. The query is read without the names its speakers go by.
        Whole summaries are taken in that order while they fit the budget (one that does not
        fit is skipped, a smaller later one may be taken).
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
        # The summaries sharing no word with the query fill what is left, newest first: a change
        # is often told in other words than the question's ("the movers came" for "where do
        # they live"), and the newest summaries are where it was told.
        candidate_scores = scores[candidates]
        # The summaries whose session states a fact on the asked topic come first, newest first:
        # they are the tellings of what is current, and a question's other words ("want",
        # "now") can rank chatter above them. Those whose facts share most with the question
        # lead ("units" among the many tellings of some preference).
        stated_scores = self._stated.scores(query)[candidates]
        telling = stated_scores > 0
        told = telling & (stated_scores >= _ABOUT_THE_QUESTION * stated_scores.max(initial=0.0))
        # Then the rest of the summaries about the question (at least half the best score),
        # newest first, ahead of the many passing mentions of the topic (someone else's move, a
        # daydream) that would otherwise fill the budget before an older telling.
        strong = ~telling & (
            candidate_scores >= _ABOUT_THE_QUESTION * candidate_scores.max(initial=0.0)
        )
        weak = candidates[~telling & ~strong]
        order = np.concatenate(
            (
                candidates[told][::-1],
                candidates[strong][::-1],
                candidates[telling & ~told][::-1],
                weak[np.lexsort((-weak, -scores[weak]))],
                visible_positions[~matched][::-1],
            )
        )
        ranked_tokens = np.frombuffer(self._summary_tokens, dtype=np.int64)[order]
        kept: list[str] = []
        used = position = 0
        while position < order.size:
            # The next summary that still fits (pack_to_budget's rule, without a Python loop
            # over the thousands that do not).
            fits = np.flatnonzero(ranked_tokens[position:] <= self.budget_tokens - used)
            if fits.size == 0:
                break
            position += int(fits[0])
            kept.append(self._summaries[int(order[position])].text)
            used += int(ranked_tokens[position])
            position += 1
        return "\n".join(kept)

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
