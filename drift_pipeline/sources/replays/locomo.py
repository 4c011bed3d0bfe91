"""The LoCoMo importer: each conversation of ``locomo10.json`` becomes one imported world.

``drift run locomo:PATH.json`` replays the user's copy of the LoCoMo file (Maharana et al.,
ACL 2024; never shipped with the package) through the budget gate. What each part becomes:

- **Sessions** are the ``session_<n>`` keys, in order of ``n`` (date keys without a session
  behind them are ignored); each session's time is its ``session_<n>_date_time``
  (``1:56 pm on 8 May, 2023``) parsed to an ISO timestamp.
- **Turns** are the session's turns in order, spoken by the two speakers; an image-sharing turn
  is rendered as LoCoMo renders it, its text followed by `` and shared <blip_caption>.``.
- **Questions** (``qa``) become recall probes asked after the last session, with the category
  as subtype (:data:`CATEGORY_SUBTYPES`); adversarial questions are negative probes whose
  decoy is the tempting ``adversarial_answer``; a temporal question names its event by the
  words it shares with its evidence turns (:func:`event_terms`). With ``midpoint`` a question
  whose evidence lies wholly in the first half is also asked at the middle session.
- The dataset's ``observation``, ``session_summary`` and ``event_summary`` are never shown to a
  backend; the event summary only labels sessions (signal when it lists an event) for the
  harness.

Malformed records are one-line errors naming the conversation, the record and the field;
the irregularities of the released file (malformed and dangling evidence ids, integer answers,
adversarial rows with an ``answer``) are handled as :func:`evidence_sessions` and
:func:`gold_answer` document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from drift_pipeline.sources._base import SourceEntity, SourceError
from drift_pipeline.sources._tables import TableSource

from ._common import (
    NOT_APPLICABLE_WITHOUT_UPDATES,
    DatasetFile,
    Record,
    profile_row,
    read_json_array,
    source_id_part,
)

__all__ = [
    "ADVERSARIAL_ANSWER",
    "CATEGORY_SUBTYPES",
    "IMPORTER_VERSION",
    "event_terms",
    "evidence_sessions",
    "gold_answer",
    "open_locomo",
    "parse_locomo_date",
    "render_turn_text",
]

IMPORTER_VERSION: Final = "2"
"""Version of this importer's mapping, recorded with every result (bumped when it changes)."""

HORIZON: Final = "long"
"""Every conversation is one long-horizon world: each spans months in 19 to 32 sessions."""

CATEGORY_SUBTYPES: Final[Mapping[int, str]] = {
    1: "multi_hop",
    2: "temporal",
    3: "open_domain",
    4: "single_hop",
    5: "adversarial",
}
"""LoCoMo's numeric categories as probe subtypes (the ids follow the released evaluation code,
not the order in which the paper lists the categories)."""

ADVERSARIAL_ANSWER: Final = "Not mentioned in the conversation"
"""The correct answer to an adversarial question, in the words of LoCoMo's own prompt."""

AUDIT: Final = "imported: each probe's evidence sessions are the dataset's evidence dialogue ids"

_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
# A dialogue id inside an evidence string; the colon after D is optional because the file
# spells one id "D:11:26".
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


def parse_locomo_date(text: str) -> datetime:
    """A LoCoMo session date (``1:56 pm on 8 May, 2023``) as a naive datetime.

    Raises:
        ValueError: The text is not in that form.
    """
    return datetime.strptime(" ".join(text.split()), _DATE_FORMAT)


def render_turn_text(turn: Mapping[str, Any]) -> str:
    """A turn's text as LoCoMo shows it to a model: an image caption follows the text.

    The text is taken without the blank lines some turns end with, so that the caption stays on
    the line of the turn (and of its date, in a memory that dates each line).
    """
    text = str(turn["text"]).strip()
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        return f"{text} and shared {caption.strip()}."
    return text


@dataclass(frozen=True)
class _Session:
    number: int
    index: int
    time: datetime
    turns: list[Mapping[str, Any]]


def open_locomo(path: str, *, midpoint: bool | str = False) -> list[TableSource]:
    """Every conversation of the LoCoMo file at ``path``, one source (world) each.

    Args:
        path: The user's ``locomo10.json`` (or a file in its format).
        midpoint: Also ask each question whose evidence lies in the first half of the
            sessions at the middle session (probe id suffixed ``@mid``); as text
            (``locomo:FILE?midpoint=true``) ``true``/``false``, ``1``/``0``, ``yes``/``no``.

    Raises:
        SourceError: One line naming the conversation, record and field at fault.
    """
    midpoint = _flag(path, "midpoint", midpoint)
    dataset = read_json_array(path, "LoCoMo")
    sources = [
        _conversation(dataset, number, s, midpoint) for number, s in enumerate(dataset.records)
    ]
    ids = [s.id for s in sources]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise SourceError(f"{path}: sample_id {repeated[0]!r} is used by more than one record")
    return sources


def _flag(path: str, name: str, value: bool | str) -> bool:
    if isinstance(value, bool):
        return value
    words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
    if value.lower() not in words:
        raise SourceError(f"{path}: option {name}={value!r} is not true or false")
    return words[value.lower()]


def _conversation(dataset: DatasetFile, number: int, data: object, midpoint: bool) -> TableSource:
    if not isinstance(data, Mapping):
        raise SourceError(f"{dataset.path}: record {number} is not a JSON object")
    sample_id = Record(dataset.path, f"record {number}", data).text("sample_id")
    sample = Record(dataset.path, sample_id, data)
    conversation = sample.child("conversation", sample.field("conversation", Mapping))
    speakers = (conversation.text("speaker_a"), conversation.text("speaker_b"))
    if speakers[0] == speakers[1]:
        raise conversation.fail(f"speaker_a and speaker_b are both {speakers[0]!r}")
    sessions = _sessions(conversation, speakers)
    dialogue = {
        str(turn["dia_id"]): session.index for session in sessions for turn in session.turns
    }
    said = {str(turn["dia_id"]): render_turn_text(turn) for s in sessions for turn in s.turns}
    events = sample.data.get("event_summary")
    tables: dict[str, list[dict[str, Any]]] = {
        "latent_profiles": [profile_row(name, "human") for name in speakers],
        "event_schedules": [
            {
                "session_index": s.index,
                "sim_time": s.time,
                "tier": "signal" if _has_events(events, s.number) else "noise",
                "participants": list(speakers),
                "pattern": "dialogue",
            }
            for s in sessions
        ],
        "transcripts": [
            {
                "session_index": s.index,
                "turn_index": k,
                "speaker": str(turn["speaker"]),
                "role": "user",
                "content": render_turn_text(turn),
                "label_kind": "dialogue",
            }
            for s in sessions
            for k, turn in enumerate(s.turns)
        ],
        "ground_truth": [],
        "probes": _probes(sample, speakers, len(sessions), dialogue, said, midpoint),
    }
    return TableSource(
        kind="locomo",
        source_id=f"locomo-{source_id_part(sample_id)}",
        # The option changes the probes: a world imported without it is not reused with it.
        version=f"locomo-importer-{IMPORTER_VERSION}" + ("+midpoint" if midpoint else ""),
        content_hash=dataset.sha256,
        origin=dataset.path,
        audit=AUDIT,
        worlds={HORIZON: tables},
        entities=[SourceEntity(name, "human") for name in speakers],
        not_applicable=NOT_APPLICABLE_WITHOUT_UPDATES,
    )


def _sessions(conversation: Record, speakers: Sequence[str]) -> list[_Session]:
    numbers = sorted(
        int(m[1]) for key in conversation.data if (m := _SESSION_KEY.fullmatch(str(key)))
    )
    if not numbers:
        raise conversation.fail("has no session_<n> key")
    sessions: list[_Session] = []
    seen: dict[str, str] = {}
    for index, number in enumerate(numbers):
        key = f"session_{number}"
        stamp = conversation.text(f"{key}_date_time")
        try:
            moment = parse_locomo_date(stamp)
        except ValueError:
            raise conversation.fail(
                f"field '{key}_date_time' {stamp!r} is not a date like '1:56 pm on 8 May, 2023'"
            ) from None
        turns = conversation.field(key, list)
        if not turns:
            raise conversation.fail(f"field {key!r} has no turns")
        checked: list[Mapping[str, Any]] = []
        for k, data in enumerate(turns):
            turn = conversation.child(f"{key}[{k}]", data)
            speaker = turn.text("speaker")
            if speaker not in speakers:
                raise turn.fail(
                    f"speaker {speaker!r} is neither {speakers[0]!r} nor {speakers[1]!r}"
                )
            turn.field("text", str)
            dia_id = turn.text("dia_id")
            if dia_id in seen:
                raise turn.fail(f"dia_id {dia_id!r} is also used by {seen[dia_id]}")
            seen[dia_id] = turn.name
            checked.append(turn.data)
        sessions.append(_Session(number, index, moment, checked))
    return sessions


def _has_events(events: object, number: int) -> bool:
    """Whether LoCoMo's event summary lists any event for session ``number`` (labels only)."""
    if not isinstance(events, Mapping):
        return True  # without the annotation every session is taken to carry signal
    entry = events.get(f"events_session_{number}")
    if not isinstance(entry, Mapping):
        return False
    return any(isinstance(v, list) and v for k, v in entry.items() if k != "date")


def evidence_sessions(evidence: object, dialogue: Mapping[str, int]) -> tuple[list[int], list[str]]:
    """The sessions a question's evidence points to, and the evidence entries that point nowhere.

    Each entry may hold several ids (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``) and is searched
    for every ``D<session>:<turn>`` in it (``"D:11:26"`` is read as ``D11:26``, ``"D30:05"`` as
    ``D30:5``); an id with no turn behind it is dangling and left out, as is an entry with no
    id at all (``"D"``).

    Args:
        evidence: The question's ``evidence`` value (a list of strings).
        dialogue: Every dialogue id of the conversation → its session index.
    """
    entries = evidence if isinstance(evidence, list) else [evidence]
    found: set[int] = set()
    unresolved: list[str] = []
    for entry in entries:
        # Numbers compared as numbers: the file spells one id "D30:05".
        found_ids = _DIA_ID.findall(str(entry)) if entry is not None else []
        ids = [f"D{int(s)}:{int(t)}" for s, t in found_ids]
        hits = [dialogue[i] for i in ids if i in dialogue]
        if len(hits) < len(ids) or not ids:
            unresolved.append(str(entry))
        found.update(hits)
    return sorted(found), unresolved


def gold_answer(question: Record, category: int) -> str:
    """The gold answer of a question, as text.

    Integer answers (``2022``) become their decimal text. An adversarial question's gold is
    :data:`ADVERSARIAL_ANSWER` whatever ``answer`` it may also carry.

    Raises:
        SourceError: A non-adversarial question has no answer, or one that is not text or a
            number.
    """
    if category == 5:
        return ADVERSARIAL_ANSWER
    value = question.field("answer", (str, int, float))
    text = str(value).strip()
    if not text:
        raise question.fail("field 'answer' is empty")
    return text


def _probes(
    sample: Record,
    speakers: Sequence[str],
    sessions: int,
    dialogue: Mapping[str, int],
    said: Mapping[str, str],
    midpoint: bool,
) -> list[dict[str, Any]]:
    middle = (sessions + 1) // 2
    probes: list[dict[str, Any]] = []
    for number, data in enumerate(sample.field("qa", list)):
        question = sample.child(f"qa[{number}]", data)
        text = question.text("question")
        category = question.field("category", int)
        if category not in CATEGORY_SUBTYPES:
            raise question.fail(f"category {category} is not one of 1-5")
        answer = gold_answer(question, category)
        found, _ = evidence_sessions(question.data.get("evidence"), dialogue)
        # A question whose evidence resolves to nothing may rest on any session: it is asked
        # after the last one and audited against all of them.
        evidence = found or list(range(sessions))
        subject = _subject(text, speakers)
        base = {
            "probe_type": "recall",
            "subtype": CATEGORY_SUBTYPES[category],
            "asker": speakers[1] if subject == speakers[0] else speakers[0],
            "subject": subject,
            "question": text,
            "answer": answer,
            "aliases": _aliases(question, category, answer),
            "evidence_sessions": evidence,
            "polarity": "negative" if category == 5 else "positive",
            "slot": f"locomo/{CATEGORY_SUBTYPES[category]}",
            "evidence_terms": event_terms(
                text, _evidence_texts(question.data.get("evidence"), said), speakers
            )
            if category == 2
            else [],
        }
        probes.append({**base, "checkpoint": sessions, "probe_id": f"qa-{number:04d}"})
        if midpoint and found and max(found) < middle < sessions:
            probes.append({**base, "checkpoint": middle, "probe_id": f"qa-{number:04d}@mid"})
    return probes


def _evidence_texts(evidence: object, said: Mapping[str, str]) -> list[str]:
    """The text of every turn the evidence names (read as :func:`evidence_sessions` reads it)."""
    entries = evidence if isinstance(evidence, list) else [evidence]
    ids = [
        f"D{int(s)}:{int(t)}"
        for entry in entries
        if entry is not None
        for s, t in _DIA_ID.findall(str(entry))
    ]
    return [said[i] for i in dict.fromkeys(ids) if i in said]


# Words that name no event: function words, and the question's own words for asking and for
# time ("When did Melanie go camping in June?" asks about camping; June is the answer's).
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NOT_EVENT_WORDS: Final = _words(
    "a an the and or but of for to at in on by with from into about over out off up down "
    "this that these those there here it its he she they we you i him her them his hers their "
    "our your my me us what when where which who whom whose why how did does do done doing is "
    "was were are am be been being has have had having will would shall should can could may "
    "might must not no than then so very too also just only some any each all both other own "
    "same such more most again once during before after between until while through "
    "long ago planning plan planned going go goes went get got start started first last "
    "next year years month months week weeks weekend day days time around since "
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday summer winter spring autumn fall "
    "morning evening night"
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
# Short words a phrase may hold between two of the question's words ("charity race for mental
# health", "a pottery class").
_GLUE: Final = _words("a an the of for to at in on with and her his their my our")


def _stem(word: str) -> str:
    """A light stem, so that "painted" meets "paint" and "classes" meets "class"."""
    word = word.lower().replace("’", "'").split("'")[0]
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def event_terms(question: str, evidence: Sequence[str], speakers: Sequence[str]) -> list[str]:
    """How the evidence turns name the event a temporal question asks about.

    The runs of words of each evidence turn that the question also uses (by a light stem),
    with only short linking words between them, as the turn spells them: "When did Caroline
    go to the LGBTQ support group?" against "I went to a LGBTQ support group yesterday" gives
    ``LGBTQ support group``. Speakers' names, question words and time words name no event.
    Longest first; empty when the question shares no such word with its evidence.
    """
    names = {name.lower() for name in speakers}
    bases = [w.lower().replace("’", "'").split("'")[0] for w in _WORD.findall(question)]
    wanted = {
        _stem(w) for w in bases if w not in _NOT_EVENT_WORDS and w not in names and len(w) > 2
    }
    wanted -= {_stem(w) for w in _GLUE}
    found: dict[str, int] = {}
    for text in evidence:
        words = list(_WORD.finditer(text))
        run: list[re.Match[str]] = []
        for match in [*words, None]:
            word = match.group(0) if match is not None else ""
            if match is not None and _stem(word) in wanted:
                run.append(match)
                continue
            if match is not None and run and word.lower() in _GLUE:
                run.append(match)  # kept only if a wanted word follows
                continue
            while run and run[-1].group(0).lower() in _GLUE:
                run.pop()
            if run:
                phrase = text[run[0].start() : run[-1].end()]
                content = sum(1 for m in run if m.group(0).lower() not in _GLUE)
                found[phrase] = max(found.get(phrase, 0), content)
            run = []
    return sorted(found, key=lambda phrase: (-found[phrase], -len(phrase), phrase))


def _subject(question: str, speakers: Sequence[str]) -> str:
    """The speaker the question names first (the first speaker when it names neither)."""
    at = {s: m.start() for s in speakers if (m := re.search(rf"\b{re.escape(s)}\b", question))}
    return min(at, key=at.__getitem__) if at else speakers[0]


def _aliases(question: Record, category: int, answer: str) -> list[str]:
    """What the context judge looks for: the spellings of the gold answer, or of the decoy.

    An open-domain answer's text after ``;`` is its rationale; a multi-hop answer lists its
    parts with commas and each part counts; an adversarial question's decoy is its tempting
    ``adversarial_answer``.
    """
    if category == 5:
        decoy = question.data.get("adversarial_answer")
        if decoy is None:
            return []
        return [str(decoy).strip()]
    if category == 3:
        answer = answer.split(";")[0].strip() or answer
    if category == 1:
        parts = [p.strip() for p in answer.split(",") if p.strip()]
        return list(dict.fromkeys([answer, *parts]))
    return [answer]
