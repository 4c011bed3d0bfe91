"""Parsing and the deterministic verifier of LLM-written sessions (spec §3.5).

A model reply is accepted only when it parses strictly and passes two checks, both pure
functions of the reply text and the session's plan and state:

* **The event is expressed.** A signal or soft session's event value (one of its aliases,
  matched word-bounded by :mod:`drift_pipeline.textmatch`, exactly as the answerability audit
  matches it) appears in a message of the principal (the ``user`` turns). Those turns are the
  ones labelled with the event id.
* **Nothing else is asserted.** No user sentence asserts, in the first person, a value that would
  change ground truth: see :func:`first_person_assertions` for the precise rule. Noise sessions
  must pass it for every value; an event session for every value but its own event's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.entities import get_entity_type
from drift_pipeline.textmatch import contains_any, normalise
from drift_pipeline.world._model import EntityState, Event

TURN_KINDS = ("task", "event", "third_party", "hypothetical", "question", "sarcasm", "small_talk")
"""What the model may label a turn as (the event label is then decided by the verifier)."""

NOISE_KINDS = frozenset(TURN_KINDS) - {"task", "event"}

REPLY_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "turns": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "speaker": {"type": "string", "enum": ["user", "assistant"]},
                    "kind": {"type": "string", "enum": list(TURN_KINDS)},
                    "text": {"type": "string"},
                },
                "required": ["speaker", "kind", "text"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["turns"],
    "additionalProperties": False,
}
"""The strict JSON schema every synthesis reply must follow."""


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Subject forms only: "give me…", "help us…", "my book about chess…" request or mention, while
# a first-person fact has "I" or "we" as its subject ("I work at…", "we moved to…").
_FIRST_PERSON = _word_set("i i'm im i've ive i'll i'd we we're we've we'll")
# Words that make it not an assertion of fact: hypotheticals, wishes, doubt, negation.
_NOT_ASSERTED = _word_set(
    "if would could might maybe perhaps imagine suppose supposing wish someday hypothetically "
    "whether unless pretend considering wondering wonder thinking tempted not never "
    # irony and hyperbole cues ("oh sure, I'm totally moving to Kyoto tomorrow")
    "totally definitely sure right obviously joking kidding lol"
)
# Words that make it about someone else ("my sister just moved to Lisbon").
_THIRD_PARTY = _word_set(
    "he she they them his her their he's she's they're sister brother mother mom mum father "
    "dad parents friend friends colleague colleagues coworker coworkers boss manager team "
    "neighbor neighbour neighbors neighbours cousin aunt uncle wife husband partner son "
    "daughter kids children roommate flatmate guy girl someone somebody everyone people "
    "cousin's friend's sister's brother's"
)
# Slots whose changes the assistant reports (a finished task), not the principal: a principal
# asking for such a task is a request, never an assertion.
_ASSISTANT_REPORTED_SLOTS = frozenset({"completed_tasks"})
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


class ReplyError(ValueError):
    """A model reply that is not the strict structured output asked for."""


@dataclass(frozen=True)
class DraftTurn:
    """One parsed turn of a model reply."""

    speaker: str
    kind: str
    text: str


def parse_reply(text: str, *, max_turns: int) -> list[DraftTurn]:
    """Strictly parse a synthesis reply: ``{"turns": [{speaker, kind, text}, ...]}``.

    Turns must alternate ``user`` / ``assistant``, starting with the user and ending with an
    assistant, 2 to ``max_turns`` of them, each with non-empty text.

    Raises:
        ReplyError: Saying what is wrong, in one line.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ReplyError(f"reply is not JSON ({error.msg} at char {error.pos})") from None
    if not isinstance(data, dict) or set(data) != {"turns"}:
        raise ReplyError('reply must be an object with exactly the key "turns"')
    items = data["turns"]
    if not isinstance(items, list) or not 2 <= len(items) <= max_turns:
        raise ReplyError(f'"turns" must be a list of 2 to {max_turns} turns')
    turns: list[DraftTurn] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"speaker", "kind", "text"}:
            raise ReplyError(f'turn {index} must have exactly "speaker", "kind" and "text"')
        speaker, kind, body = item["speaker"], item["kind"], item["text"]
        expected = "user" if index % 2 == 0 else "assistant"
        if speaker != expected:
            raise ReplyError(f"turn {index} is spoken by {speaker!r}, expected {expected!r}")
        if kind not in TURN_KINDS:
            raise ReplyError(f"turn {index} has unknown kind {kind!r}")
        if not isinstance(body, str) or not body.strip():
            raise ReplyError(f"turn {index} has no text")
        turns.append(DraftTurn(speaker, kind, " ".join(body.split())))
    if turns[-1].speaker != "assistant":
        raise ReplyError("the last turn must be the assistant's")
    return turns


def event_aliases(event: Event, profiles: dict[str, EntityState]) -> tuple[str, ...]:
    """Every phrase that counts as expressing ``event``'s value."""
    entity_type = get_entity_type(profiles[event.subject].entity_type)
    return entity_type.slot(event.slot).value(event.value).all_aliases()


def event_turns(
    turns: list[DraftTurn], event: Event, profiles: dict[str, EntityState]
) -> list[int]:
    """Indexes of the principal's turns that express ``event``'s value."""
    aliases = event_aliases(event, profiles)
    return [
        index
        for index, turn in enumerate(turns)
        if turn.speaker == "user" and contains_any(turn.text, aliases)
    ]


@dataclass(frozen=True)
class _Claim:
    subject: str
    slot: str
    value: str
    aliases: tuple[str, ...]
    topic: str | None


def _topic(slot: str) -> str | None:
    """For keyed slot families, the words naming the key (``remote work``), else ``None``."""
    family, _, key = slot.partition("/")
    if family == "opinion":
        return vocab.OPINION_TOPICS.get(key, key.replace("_", " "))
    if family == "preference":
        return vocab.PREFERENCE_DIMENSIONS[key][0] if key in vocab.PREFERENCE_DIMENSIONS else key
    return None


@dataclass(frozen=True)
class _Value:
    slot: str
    text: str
    aliases: tuple[str, ...]
    normalised: tuple[str, ...]
    topic: str | None


@cache
def _assertable(entity_type: str, is_principal: bool) -> tuple[_Value, ...]:
    """Every value the principal could assert about an entity of this type (fixed per type)."""
    values: list[_Value] = []
    for slot in get_entity_type(entity_type).slots:
        if not is_principal and (
            not slot.about_principal or slot.name in _ASSISTANT_REPORTED_SLOTS
        ):
            continue
        topic = _topic(slot.name)
        for value in slot.values:
            aliases = value.all_aliases()
            normalised = tuple(normalise(a) for a in aliases)
            values.append(_Value(slot.name, value.text, aliases, normalised, topic))
    return tuple(values)


def _claims(
    principal: str,
    participants: Iterable[str],
    profiles: dict[str, EntityState],
    current: dict[tuple[str, str], tuple[str, ...]],
    allowed: Event | None,
) -> list[_Claim]:
    """Values the principal could assert that are not true now (and are not the event's)."""
    held_aliases: set[str] = set()
    claims: list[tuple[str, _Value]] = []
    for entity_id in participants:
        for value in _assertable(profiles[entity_id].entity_type, entity_id == principal):
            is_event = (
                allowed is not None
                and allowed.subject == entity_id
                and allowed.slot == value.slot
                and allowed.value == value.text
            )
            if is_event or value.text in current.get((entity_id, value.slot), ()):
                held_aliases.update(value.normalised)
            else:
                claims.append((entity_id, value))
    # An alias shared with a value that is true now (or the event's) proves nothing.
    kept: list[_Claim] = []
    for entity_id, value in claims:
        aliases = tuple(
            alias
            for alias, key in zip(value.aliases, value.normalised, strict=True)
            if key not in held_aliases
        )
        if aliases:
            kept.append(_Claim(entity_id, value.slot, value.text, aliases, value.topic))
    return kept


def first_person_assertions(
    turns: list[DraftTurn],
    principal: str,
    participants: Iterable[str],
    profiles: dict[str, EntityState],
    current: dict[tuple[str, str], tuple[str, ...]],
    allowed: Event | None = None,
) -> list[str]:
    """User sentences that assert, in the first person, a value that would change ground truth.

    A sentence of a ``user`` turn (split at ``.``, ``!``, ``?``, ``;`` and line breaks) is such an
    assertion when all of these hold:

    1. it does not end with ``?`` (a question asserts nothing);
    2. it contains, word-bounded, an alias of a value of one of the principal's slots (or of an
       ``about_principal`` slot of a participating assistant, except slots the assistant reports
       itself such as completed tasks) that is **not** held in that slot now and is not the
       session's own event value; for keyed families (``opinion/…``, ``preference/…``) the
       sentence must also name the key's topic;
    3. it has a first-person subject word (``I``, ``I'm``, ``I've``, ``we``, ``we're``…;
       object and possessive forms such as ``me`` or ``my`` alone do not count);
    4. it contains no hypothetical, doubt, negation or irony word (``if``, ``would``,
       ``maybe``, ``wish``, ``not``, ``never``, ``totally``, ``sure``…, or a word ending in
       ``n't``);
    5. it contains no third-party word (``he``, ``she``, ``they``, ``sister``, ``friend``,
       ``colleague``, ``team``, ``someone``…), which makes it about someone else.

    The rule is deliberately conservative in one direction: a sentence it lets through may
    still be sarcastic or ambiguous, but a sentence it flags reads as a plain first-person fact.

    Returns:
        ``"<slot>=<value>: <sentence>"`` for each assertion found (empty: the session is clean).
    """
    candidates: list[tuple[str, str]] = []
    for turn in turns:
        if turn.speaker != "user":
            continue
        for sentence in _SENTENCE_END.split(turn.text):
            text = normalise(sentence)
            if not text or text.endswith("?"):
                continue
            words = set(_WORD.findall(text))
            if not words & _FIRST_PERSON:
                continue
            if words & _NOT_ASSERTED or words & _THIRD_PARTY:
                continue
            if any(word.endswith("n't") for word in words):
                continue
            candidates.append((sentence, text))
    if not candidates:
        return []
    claims = _claims(principal, participants, profiles, current, allowed)
    found: list[str] = []
    for sentence, text in candidates:
        for claim in claims:
            if claim.topic is not None and not contains_any(text, (claim.topic,), normalised=True):
                continue
            if contains_any(text, claim.aliases, normalised=True):
                found.append(f"{claim.slot}={claim.value}: {sentence.strip()}")
                break
    return found
