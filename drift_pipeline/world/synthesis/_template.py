"""The offline, template-based synthesizer: varied, style-aware, with adversarial noise."""

from __future__ import annotations

from bisect import bisect
from collections.abc import Callable
from itertools import accumulate
from string import Formatter

from drift_pipeline.entities import Value, get_entity_type
from drift_pipeline.entities import _vocab as vocab
from drift_pipeline.world._model import EntityState, Event, SessionPlan, Turn

from . import _templates as t
from ._base import SessionContext

# Families whose short aliases read naturally in every template ("at Northwind", "some running").
_ALIAS_FAMILIES = {"employer", "city", "habits"}
_TURNS = {"terse": (1, 3), "moderate": (2, 5), "verbose": (3, 7)}
_NOISE_KINDS = ("third_party", "hypothetical", "question", "sarcasm", "small_talk")
_NOISE_WEIGHTS = (3, 2, 2, 1, 3)
_NOISE_CUMULATIVE = tuple(accumulate(_NOISE_WEIGHTS))
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


def _fields(*templates: str) -> tuple[str, ...]:
    """Placeholders the templates use, in first-use order (so draws happen in a fixed order)."""
    names: dict[str, None] = {}
    for template in templates:
        for _, name, _, _ in Formatter().parse(template):
            if name:
                names.setdefault(name, None)
    return tuple(names)


# --- routine task fills: only the placeholders a template uses are drawn -----------------------

_TASK_POOLS: dict[str, tuple[str, ...]] = {
    "person": t.PEOPLE,
    "thing": t.THINGS,
    "thing2": t.THINGS2,
    "day": t.DAYS,
    "col": t.COLUMNS,
}
_TASK_NUMBERS = {"n", "n2", "n3", "pct"}


def _task_fields(request: str, reply: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The placeholders of an aligned request and reply, each with its pool (numbers: none)."""
    names = _fields(request, reply)
    # n2 is a ratio of n, so n is drawn first.
    if "n2" in names and "n" not in names:
        names = ("n", *names)
    elif "n2" in names and names.index("n2") < names.index("n"):
        names = ("n", *(name for name in names if name != "n"))
    unknown = [name for name in names if name not in _TASK_POOLS and name not in _TASK_NUMBERS]
    if unknown:
        raise KeyError(f"task template placeholder(s) {unknown} have no filler")
    return tuple((name, _TASK_POOLS.get(name, ())) for name in names)


_TaskTemplate = tuple[str, str, tuple[tuple[str, tuple[str, ...]], ...]]

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
    n = 0
    for name, pool in names:
        if pool:
            fills[name] = pool[int(u() * len(pool))]
        elif name == "n":
            fills[name] = n = 2 + int(u() * 479)
        elif name == "n2":
            fills[name] = round(n * (0.4 + 1.4 * u()), 1)
        elif name == "n3":
            fills[name] = 2 + int(u() * 8)
        else:  # pct
            fills[name] = 1 + int(u() * 9)
    return request.format_map(fills), reply.format_map(fills)


# --- noise -------------------------------------------------------------------------------------

_NOISE: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    kind: tuple((template, _fields(template)) for template in templates)
    for kind, templates in t.NOISE.items()
}
_TOPIC_KEYS = tuple(vocab.OPINION_TOPICS)
_PREFERENCE_KEYS = tuple(vocab.PREFERENCE_DIMENSIONS)
_CONSTRAINT_WORDS = ("vegetarian", "vegan", "gluten-free", "sober", "lactose intolerant")
_EMPLOYER_WORDS = {value.text: value.all_aliases() for value in vocab.EMPLOYERS}


class _NoiseFills:
    """Draws a noise template's placeholders, and nothing it does not use."""

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
        raise KeyError(f"noise template placeholder {{{name}}} has no filler")


# --- events ------------------------------------------------------------------------------------


def _event_pools() -> dict[tuple[str, str, bool], tuple[str, ...]]:
    """(tier, family, has an old value) → usable templates (``{old}`` needs an old value)."""
    pools: dict[tuple[str, str, bool], tuple[str, ...]] = {}
    for tier, by_family in (("signal", t.SIGNAL), ("soft", t.SOFT)):
        for family, templates in by_family.items():
            pools[(tier, family, True)] = templates
            pools[(tier, family, False)] = tuple(x for x in templates if "{old}" not in x)
    return pools


_EVENT_TEMPLATES = _event_pools()


class TemplateSynthesizer:
    """Deterministic transcripts from templates; the default synthesizer (no LLM, no network)."""

    name = "template"
    # 2: every active assistant replies (was: only the first).
    # 3: draws only the placeholders a template uses, one float per draw (same templates and
    #    distributions, different text for a given seed).
    version = "3"

    def session(self, plan: SessionPlan, context: SessionContext) -> list[Turn]:
        """Write one session: a routine task, with the event (if any) emerging inside it."""
        u = context.rng.random
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
        low, high = _TURNS[verbosity]
        exchanges = low + int(u() * (high - low + 1))

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
        event = plan.event
        if event is not None:
            slot = int(u() * exchanges)
            free.remove(slot)
            if event.subject in agents:
                speakers[slot] = event.subject
            sentence = self._event_sentence(event, human, context, u)
            request = user[slot]
            user[slot] = f"{sentence} {request}" if u() < 0.5 else f"{request} {sentence}"
            labels[slot] = event.event_id
            kinds[slot] = "event"
            bot[slot] = f"{_pick(u, t.ACKS)} {bot[slot]}"
        noise_items = 1 + int(u() * 3) if event is None else int(u() < 0.3)
        if noise_items and free:
            noise = _NoiseFills(u, context.current, human.entity_id)
            for _ in range(min(noise_items, len(free))):
                slot = free.pop(int(u() * len(free)))
                kind = _NOISE_KINDS[bisect(_NOISE_CUMULATIVE, u() * _NOISE_CUMULATIVE[-1])]
                sentence = self._noise_sentence(kind, noise)
                user[slot] = f"{sentence} {user[slot]}"
                kinds[slot] = kind
                replies = t.NOISE_REPLIES[kind]
                bot[slot] = f"{replies[int(u() * len(replies))]} {bot[slot]}"

        formality = str(style["formality"])
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

    def _event_sentence(
        self, event: Event, human: EntityState, context: SessionContext, u: Uniform
    ) -> str:
        entity_type = get_entity_type(context.profiles[event.subject].entity_type)
        slot = entity_type.slot(event.slot)
        family, _, key = event.slot.partition("/")
        value = slot.value(event.value)
        surface = _pick(u, value.all_aliases()) if family in _ALIAS_FAMILIES else value.text
        # previous_value includes latent initial state: the first change can name what it replaces.
        old = event.previous_value
        template = _pick(u, _EVENT_TEMPLATES[(event.tier, family, old is not None)])
        first_person = t.FIRST_PERSON.get(event.value, (value.text,))
        text = template.format(
            v=surface,
            old=old or "",
            topic=vocab.OPINION_TOPICS.get(key, key),
            fp=_pick(u, first_person),
            name=human.name.split()[0],
        )
        return _cap(text)

    @staticmethod
    def _noise_sentence(kind: str, fills: _NoiseFills) -> str:
        template, names = _NOISE[kind][int(fills.u() * len(_NOISE[kind]))]
        if not names:
            return _cap(template)
        return _cap(template.format_map({name: fills.draw(name) for name in names}))

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
