"""The offline synthesizer: sentences from the phrasing grammar, inside routine tasks.

Every event and decoy sentence is drawn from one phrasing family of the world's split (see the
``grammar`` package); the families' tables are built once per split and process, so a session
costs a few index draws and ``str.format`` calls.
"""

from __future__ import annotations

from bisect import bisect
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from drift_pipeline.entities import Value, get_entity_type
from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.world._model import EntityState, Event, SessionPlan, Turn

from . import _templates as t
from ._base import SessionContext
from .grammar import (
    CONFIRM_PROMPTS,
    CONSTRAINT_PHRASES,
    CORRECTION_CUES,
    HEDGES,
    LEAD_INS,
    MID_TAILS,
    STILL,
    TOPIC_WORDS,
    WHEN,
    WHO,
    Family,
    PhrasingSplit,
    SplitTables,
    fields_of,
    split_from_env,
    tables_for,
)

# Families whose short aliases read naturally in every stem ("at Northwind").
_ALIAS_FAMILIES = {"employer", "city"}
_TURNS = {"terse": (1, 3), "moderate": (2, 5), "verbose": (3, 7)}
_NOISE_KINDS = ("third_party", "hypothetical", "question", "sarcasm", "small_talk")
_NOISE_WEIGHTS = (3, 2, 2, 1, 3)
_NOISE_CUMULATIVE = tuple(accumulate(_NOISE_WEIGHTS))
# How often a family's typo variant is used, by the principal's formality.
_TYPO_RATE = {"casual": 0.15, "neutral": 0.04, "formal": 0.0}
# Families that need the turn before the event turn (an announcement, a question, a flag).
_NEEDS_PREVIOUS = {"lead", "confirm", "correct"}
_DEFAULT_STYLE: dict[str, object] = {
    "verbosity": "moderate",
    "formality": "neutral",
    "references_prior_context": 0.1,
}

Uniform = Callable[[], float]
"""``random.Random.random`` of the session: every draw below is made from it."""


def _pick(u: Uniform, options: tuple[str, ...]) -> str:
    # One float per draw: several times cheaper than ``choice`` and uniform to within 2**-53.
    return options[int(u() * len(options))]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


# --- routine task fills: only the placeholders a template uses are drawn -----------------------

_TASK_POOLS: dict[str, tuple[str, ...]] = {
    "person": t.PEOPLE,
    "thing": t.THINGS,
    "thing2": t.THINGS2,
    "day": t.DAYS,
    "col": t.COLUMNS,
    "errand": t.ERRANDS,
}


def _km(n: dict[str, int]) -> str:
    return f"{n['miles'] * 1.609344:.1f}"


def _celsius(n: dict[str, int]) -> str:
    return f"{(n['fahrenheit'] - 32) * 5 / 9:.1f}"


def _ounces(n: dict[str, int]) -> str:
    return f"{n['grams'] / 28.349523125:.1f}"


def _shirts(n: dict[str, int]) -> str:
    return str(min(n["trip_days"], 5))  # past five days, a laundry stop beats packing more


def _roast_minutes(n: dict[str, int]) -> str:
    return str(50 - (n["oven"] - 180) * 3 // 10)  # 50 minutes at 180°C, 35 at 230°C


def _scale(n: dict[str, int]) -> str:
    return f"{n['servings'] / 4:g}"


def _share(n: dict[str, int]) -> str:
    return f"{n['bill'] * 1.1 / n['diners']:.2f}"


_DERIVE: dict[str, Callable[[dict[str, int]], str]] = {
    "km": _km,
    "celsius": _celsius,
    "ounces": _ounces,
    "shirts": _shirts,
    "roast_minutes": _roast_minutes,
    "scale": _scale,
    "share": _share,
}
assert set(_DERIVE) == set(t.DERIVED)

_Field = tuple[str, tuple[str, ...], tuple[int, ...]]
"""(name, text pool, number pool): a derived field has both pools empty."""


def _task_fields(request: str, reply: str) -> tuple[_Field, ...]:
    """The placeholders of an aligned request and reply: numbers first, derived ones last."""
    names = fields_of(request + " " + reply)
    unknown = [
        name
        for name in names
        if name not in _TASK_POOLS and name not in t.NUMBERS and name not in t.DERIVED
    ]
    if unknown:
        raise KeyError(f"task template placeholder(s) {unknown} have no filler")
    numbers = dict.fromkeys(
        [
            *(name for name in names if name in t.NUMBERS),
            *(base for name in names for base in t.DERIVED.get(name, ())),
        ]
    )
    ordered = [
        *((name, (), t.NUMBERS[name]) for name in numbers),
        *((name, _TASK_POOLS[name], ()) for name in names if name in _TASK_POOLS),
        *((name, (), ()) for name in names if name in t.DERIVED),
    ]
    return tuple(ordered)


_TaskTemplate = tuple[str, str, tuple[_Field, ...]]

# Per task: its aligned (request, reply, placeholders) triples.
_TASKS: tuple[tuple[_TaskTemplate, ...], ...] = tuple(
    tuple(
        (request, reply, _task_fields(request, reply))
        for request, reply in zip(requests, replies, strict=True)
    )
    for _, requests, replies in t.TASKS
)


def _task_exchange(u: Uniform, task: tuple[_TaskTemplate, ...]) -> tuple[str, str]:
    request, reply, names = task[int(u() * len(task))]
    fills: dict[str, object] = {}
    numbers: dict[str, int] = {}
    for name, pool, values in names:
        if pool:
            fills[name] = pool[int(u() * len(pool))]
        elif values:
            fills[name] = numbers[name] = values[int(u() * len(values))]
        else:
            fills[name] = _DERIVE[name](numbers)
    return request.format_map(fills), reply.format_map(fills)


# --- decoys ------------------------------------------------------------------------------------

_TOPIC_KEYS = tuple(vocab.OPINION_TOPICS)
_PREFERENCE_KEYS = tuple(vocab.PREFERENCE_DIMENSIONS)
_CONSTRAINT_WORDS = ("vegetarian", "vegan", "gluten-free", "sober", "lactose intolerant")
_EMPLOYER_WORDS = {value.text: value.all_aliases() for value in vocab.EMPLOYERS}


class _NoiseFills:
    """Draws a decoy family's placeholders, and nothing it does not use."""

    def __init__(
        self, u: Uniform, current: dict[tuple[str, str], tuple[str, ...]], principal: str
    ) -> None:
        self.u = u
        self.current = current
        self.principal = principal
        self.topic: str | None = None
        self.preference: str | None = None

    def _value(self, slot: str, pool: tuple[Value, ...]) -> str:
        # Often reuse a value the principal really holds: mentioning a true value in a
        # non-assertion (someone else's news, a hypothetical) is what fools naive memory.
        u = self.u
        held = self.current.get((self.principal, slot), ())
        if held and u() < 0.4:
            return held[int(u() * len(held))]
        return pool[int(u() * len(pool))].text

    def _topic(self) -> str:
        if self.topic is None:
            self.topic = _pick(self.u, _TOPIC_KEYS)
        return self.topic

    def draw(self, name: str) -> str:
        u = self.u
        if name == "city":
            return self._value("city", vocab.CITIES)
        if name == "employer":
            value = self._value("employer", vocab.EMPLOYERS)
            words = _EMPLOYER_WORDS.get(value)
            return _pick(u, words) if words else value
        if name == "habit":
            return self._value("habits", vocab.HABITS)
        if name == "constraint_word":
            return _pick(u, _CONSTRAINT_WORDS)
        if name == "relationship":
            return self._value("relationship", vocab.RELATIONSHIP)
        if name == "health":
            return self._value("health", vocab.HEALTH)
        if name == "opinion":
            return self._value(f"opinion/{self._topic()}", vocab.OPINIONS)
        if name == "topic":
            return vocab.OPINION_TOPICS[self._topic()]
        if name == "preference":
            if self.preference is None:
                self.preference = _pick(u, _PREFERENCE_KEYS)
            pool = vocab.PREFERENCE_DIMENSIONS[self.preference][1]
            return self._value(f"preference/{self.preference}", pool)
        if name == "thing":
            return _pick(u, t.THINGS)
        if name == "who":
            return _pick(u, WHO)
        raise KeyError(f"decoy template placeholder {{{name}}} has no filler")


# --- events ------------------------------------------------------------------------------------

_CONFIRM = {family: (text, fields_of(text)) for family, text in CONFIRM_PROMPTS.items()}
_EMPTY: tuple[str, ...] = ()


class _EventText:
    """An event's sentence, and what its family puts in the turn before (if anything)."""

    __slots__ = ("before", "family", "sentence")

    def __init__(self, family: Family, sentence: str, before: str) -> None:
        self.family = family
        self.sentence = sentence
        self.before = before


@dataclass(frozen=True)
class PlannedSentence:
    """One sentence a session's plan calls for.

    Attributes:
        role: ``event`` or the decoy kind (``third_party``, ``sarcasm``…).
        family_id: The phrasing family it was drawn from.
        position: Where it sits (see the grammar's frames: ``inline``, ``confirm``…).
        text: The sentence as the grammar wrote it.
        before: What the family puts in the turn before (an announcement, the assistant's
            question); empty for most families.
    """

    role: str
    family_id: str
    position: str
    text: str
    before: str = ""


@dataclass(frozen=True)
class SessionScript:
    """A session as the grammar writes it, with the plan it followed.

    Attributes:
        turns: The turns (exactly what :meth:`TemplateSynthesizer.session` returns).
        planned: The event sentence (if any) and the decoy sentences, in turn order of drawing.
    """

    turns: list[Turn]
    planned: tuple[PlannedSentence, ...]


class TemplateSynthesizer:
    """Deterministic transcripts from the phrasing grammar; the default synthesizer (offline).

    The phrasing split (public unless ``DRIFT_HELDOUT_SALT`` names a held-out one) is part of
    the synthesizer's pin, so a world written under another split counts as stale.
    """

    name = "template"
    # 2: every active assistant replies (was: only the first).
    # 3: draws only the placeholders a template uses, one float per draw.
    # 4: the phrasing grammar (families in public and held-out splits), realistic numbers in
    #    routine tasks, the assistant addressing the principal by name.
    version = "4"

    def __init__(self, split: PhrasingSplit | None = None) -> None:
        """A template synthesizer writing with ``split`` (default: from the environment)."""
        self.split = split if split is not None else split_from_env()
        self._tables = tables_for(self.split)

    def __getstate__(self) -> dict[str, object]:
        # Worker processes rebuild the tables from the split instead of unpickling them.
        return {"split": self.split}

    def __setstate__(self, state: dict[str, object]) -> None:
        split = state["split"]
        assert isinstance(split, PhrasingSplit)
        self.split = split
        self._tables = tables_for(split)

    def __repr__(self) -> str:
        return f"TemplateSynthesizer(split={self.split.label!r})"

    def pin(self) -> dict[str, str]:
        """What a world's manifest records besides name and version: the split, never a salt."""
        return {"phrasing_split": self.split.label}

    def session(self, plan: SessionPlan, context: SessionContext) -> list[Turn]:
        """Write one session: a routine task, with the event (if any) emerging inside it."""
        return self._write(plan, context, None)

    def script(self, plan: SessionPlan, context: SessionContext) -> SessionScript:
        """Write one session and say which families it used (what an LLM is asked to follow).

        Draws exactly what :meth:`session` draws, so both give the same turns for one context.
        """
        planned: list[PlannedSentence] = []
        return SessionScript(self._write(plan, context, planned), tuple(planned))

    def _write(
        self, plan: SessionPlan, context: SessionContext, planned: list[PlannedSentence] | None
    ) -> list[Turn]:
        u = context.rng.random
        tables = self._tables
        profiles = context.profiles
        humans = [p for p in plan.participants if profiles[p].entity_type == "human"]
        agents = [p for p in plan.participants if p not in humans]
        if not humans:
            return self._agents_only(plan, agents, u)
        human = profiles[humans[0]]
        # Every active assistant takes part: replies rotate over them, and an event about an
        # assistant's own model of the principal is answered by that assistant.
        repliers = agents or humans[-1:]
        style = human.stable.get("communication_style", _DEFAULT_STYLE)
        assert isinstance(style, dict)
        verbosity = str(style["verbosity"])
        formality = str(style["formality"])
        typo_rate = _TYPO_RATE[formality]
        low, high = _TURNS[verbosity]
        exchanges = low + int(u() * (high - low + 1))
        event = plan.event
        written = None
        if event is not None:
            written = self._event_text(event, human, context, tables, typo_rate, u)
            if written.family.position in _NEEDS_PREVIOUS and exchanges < 2:
                exchanges = 2

        # A session mixes two different routine tasks; each exchange draws fresh details so that
        # no two turns of a trajectory are likely to be identical.
        first = int(u() * len(_TASKS))
        second = int(u() * (len(_TASKS) - 1))
        second += second >= first
        half = (exchanges + 1) // 2
        user: list[str] = []
        bot: list[str] = []
        for index in range(exchanges):
            request, reply = _task_exchange(u, _TASKS[first if index < half else second])
            user.append(request)
            bot.append(reply)
        kinds = ["task"] * exchanges
        labels: list[str | None] = [None] * exchanges

        free = list(range(exchanges))
        speakers = [repliers[index % len(repliers)] for index in range(exchanges)]
        if event is not None and written is not None:
            position = written.family.position
            if position in _NEEDS_PREVIOUS:
                slot = 1 + int(u() * (exchanges - 1))
            else:
                slot = int(u() * exchanges)
            free.remove(slot)
            if event.subject in agents:
                speakers[slot] = event.subject
            sentence = written.sentence
            request = user[slot]
            if position == "inline":
                user[slot] = f"{sentence} {request}" if u() < 0.5 else f"{request} {sentence}"
            elif position == "mid":
                user[slot] = f"{request} {sentence} {_pick(u, MID_TAILS)}"
            else:
                user[slot] = f"{sentence} {request}"
                if position == "confirm":
                    bot[slot - 1] = f"{bot[slot - 1]} {written.before}"
                else:
                    user[slot - 1] = f"{user[slot - 1]} {written.before}"
            if planned is not None:
                family = written.family
                planned.append(
                    PlannedSentence("event", family.family_id, position, sentence, written.before)
                )
            labels[slot] = event.event_id
            kinds[slot] = "event"
            bot[slot] = f"{_pick(u, t.ACKS)} {bot[slot]}"
        noise_items = 1 + int(u() * 3) if event is None else int(u() < 0.3)
        if noise_items and free:
            noise = _NoiseFills(u, context.current, human.entity_id)
            for _ in range(min(noise_items, len(free))):
                slot = free.pop(int(u() * len(free)))
                kind = _NOISE_KINDS[bisect(_NOISE_CUMULATIVE, u() * _NOISE_CUMULATIVE[-1])]
                family, sentence = self._noise_sentence(tables.decoys[kind], noise, typo_rate)
                if planned is not None:
                    planned.append(PlannedSentence(kind, family.family_id, "inline", sentence))
                kinds[slot] = kind
                replies = t.NOISE_REPLIES[kind]
                reply = replies[int(u() * len(replies))]
                if kind == "question":
                    # A question is a request of its own: it takes the exchange, one per turn.
                    user[slot] = sentence
                    bot[slot] = reply
                else:
                    user[slot] = f"{sentence} {user[slot]}"
                    bot[slot] = f"{reply} {bot[slot]}"
        # The assistant calls the principal by the name they go by: always in a world's first
        # session, so the name the probes use is one the transcripts use.
        if plan.session_index == 0 or u() < 0.2:
            called = context.current.get((speakers[0], "preferred_name"))
            name = called[0] if called else human.name.split()[0]
            bot[0] = f"{_pick(u, t.ADDRESSES).format(name=name)} {bot[0]}"

        openers = t.OPENERS[formality]
        closers = t.CLOSERS[formality]
        prior = t.PRIOR_CONTEXT
        fillers = t.FILLERS
        references = float(style["references_prior_context"])
        verbose = verbosity == "verbose"
        casual = formality == "casual"
        session_index = plan.session_index
        speaker = human.entity_id
        last = exchanges - 1
        turns: list[Turn] = []
        append = turns.append
        new = tuple.__new__  # Turn's fields in order, without its Python-level __new__
        for index, text in enumerate(user):
            if index == 0 and (opener := openers[int(u() * len(openers))]):
                text = f"{opener} {text}"
            if u() < references:
                text = prior[int(u() * len(prior))] + text[:1].lower() + text[1:]
            if verbose and u() < 0.5:
                text = f"{text} {fillers[int(u() * len(fillers))]}"
            if index == last and (closer := closers[int(u() * len(closers))]):
                text = f"{text} {closer}"
            if casual and u() < 0.3:
                text = text.lower()
            event_id = labels[index]
            user_turn = (session_index, 2 * index, speaker, "user", text, event_id, kinds[index])
            append(new(Turn, user_turn))
            answer = (session_index, 2 * index + 1, speakers[index], "assistant", bot[index])
            append(new(Turn, (*answer, None, "ack" if event_id else "task")))
        return turns

    @staticmethod
    def _event_text(
        event: Event,
        human: EntityState,
        context: SessionContext,
        tables: SplitTables,
        typo_rate: float,
        u: Uniform,
    ) -> _EventText:
        entity_type = get_entity_type(context.profiles[event.subject].entity_type)
        slot = entity_type.slot(event.slot)
        slot_family, _, key = event.slot.partition("/")
        # previous_value includes latent initial state: the first change can name what it replaces.
        old = event.previous_value
        families = tables.events[(slot_family, old is not None)]
        family = families[int(u() * len(families))]
        template = family.typo if typo_rate and u() < typo_rate else family.template
        position = family.position
        prompt, prompt_fields = _CONFIRM[slot_family] if position == "confirm" else ("", _EMPTY)
        value = slot.value(event.value)
        fills: dict[str, str] = {}
        for name in (*family.fields, *prompt_fields):
            if name in fills:
                continue
            if name == "v":
                fills[name] = (
                    _pick(u, value.all_aliases()) if slot_family in _ALIAS_FAMILIES else value.text
                )
            elif name == "old":
                fills[name] = old or ""
            elif name == "topic":
                fills[name] = vocab.OPINION_TOPICS.get(key, key)
            elif name == "fp":
                fills[name] = _pick(u, t.FIRST_PERSON.get(event.value, (value.text,)))
            elif name == "np":
                fills[name] = _pick(u, CONSTRAINT_PHRASES.get(event.value, (value.text,)))
            elif name == "name":
                fills[name] = human.name.split()[0]
            elif name == "when":
                fills[name] = _pick(u, WHEN)
            elif name == "day":
                fills[name] = _pick(u, t.DAYS)
            elif name == "hedge":
                fills[name] = _pick(u, HEDGES)
            else:
                raise KeyError(f"event template placeholder {{{name}}} has no filler")
        before = ""
        if position == "confirm":
            before = prompt.format_map(fills)
        elif position == "lead":
            before = _pick(u, LEAD_INS).format(w=TOPIC_WORDS[slot_family])
        elif position == "correct":
            # With an old value the principal first restates it, then corrects it; otherwise
            # the earlier turn flags a note as out of date.
            still = STILL.get(slot_family) if old is not None else None
            if still is not None:
                topic = vocab.OPINION_TOPICS.get(key, key)
                before = still.format(old=old, topic=topic)
            else:
                before = _pick(u, CORRECTION_CUES).format(w=TOPIC_WORDS[slot_family])
        return _EventText(family, _cap(template.format_map(fills)), before)

    @staticmethod
    def _noise_sentence(
        families: tuple[Family, ...], fills: _NoiseFills, typo_rate: float
    ) -> tuple[Family, str]:
        u = fills.u
        family = families[int(u() * len(families))]
        template = family.typo if typo_rate and u() < typo_rate else family.template
        if not family.fields:
            return family, _cap(template)
        text = template.format_map({name: fills.draw(name) for name in family.fields})
        return family, _cap(text)

    @staticmethod
    def _agents_only(plan: SessionPlan, agents: list[str], u: Uniform) -> list[Turn]:
        turns = []
        for index in range(2 + int(u() * 3)):
            speaker = agents[index % len(agents)]
            _, text = _task_exchange(u, _pick_task(u))  # status chatter only: the reply
            turns.append(Turn(plan.session_index, index, speaker, "assistant", text, None, "task"))
        return turns


def _pick_task(u: Uniform) -> tuple[_TaskTemplate, ...]:
    return _TASKS[int(u() * len(_TASKS))]
