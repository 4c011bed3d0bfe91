"""The offline, template-based synthesizer: varied, style-aware, with adversarial noise."""

from __future__ import annotations

import random
from collections.abc import Callable

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
_DEFAULT_STYLE: dict[str, object] = {
    "verbosity": "moderate",
    "formality": "neutral",
    "references_prior_context": 0.1,
}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


class TemplateSynthesizer:
    """Deterministic transcripts from templates; the default synthesizer (no LLM, no network)."""

    name = "template"
    version = "2"  # 2: every active assistant replies (was: only the first)

    def session(self, plan: SessionPlan, context: SessionContext) -> list[Turn]:
        """Write one session: a routine task, with the event (if any) emerging inside it."""
        rng = context.rng
        humans = [p for p in plan.participants if context.profiles[p].entity_type == "human"]
        agents = [p for p in plan.participants if p not in humans]
        if not humans:
            return self._agents_only(plan, agents, rng)
        human = context.profiles[humans[0]]
        # Every active assistant takes part: replies rotate over them, and an event about an
        # assistant's own model of the principal is answered by that assistant.
        repliers = agents or humans[-1:]
        style = human.stable.get("communication_style", _DEFAULT_STYLE)
        assert isinstance(style, dict)
        low, high = _TURNS[str(style["verbosity"])]
        exchanges = rng.randint(low, high)

        # A session mixes one or two routine tasks; each exchange draws fresh details so that
        # no two turns of a trajectory are likely to be identical.
        tasks = rng.sample(t.TASKS, 2)
        user: list[tuple[str, str | None, str]] = []
        bot: list[str] = []
        for index in range(exchanges):
            _, requests, replies = tasks[0] if index < (exchanges + 1) // 2 else tasks[1]
            fills = self._task_fills(rng)
            pick = rng.randrange(len(requests))  # requests and replies are aligned by index
            user.append((requests[pick].format(**fills), None, "task"))
            bot.append(replies[pick].format(**fills))

        free = list(range(exchanges))
        speakers = [repliers[index % len(repliers)] for index in range(exchanges)]
        if plan.event is not None:
            slot = rng.randrange(exchanges)
            free.remove(slot)
            if plan.event.subject in agents:
                speakers[slot] = plan.event.subject
            sentence = self._event_sentence(plan.event, human, context, rng)
            request = user[slot][0]
            text = f"{sentence} {request}" if rng.random() < 0.5 else f"{request} {sentence}"
            user[slot] = (text, plan.event.event_id, "event")
            bot[slot] = f"{rng.choice(t.ACKS)} {bot[slot]}"
        noise_items = rng.randint(1, 3) if plan.event is None else int(rng.random() < 0.3)
        for _ in range(min(noise_items, len(free))):
            slot = free.pop(rng.randrange(len(free)))
            kind = rng.choices(_NOISE_KINDS, _NOISE_WEIGHTS)[0]
            sentence = self._noise_sentence(kind, human, context, rng)
            user[slot] = (f"{sentence} {user[slot][0]}", None, kind)
            bot[slot] = f"{rng.choice(t.NOISE_REPLIES[kind])} {bot[slot]}"

        formality = str(style["formality"])
        references = float(style["references_prior_context"])
        turns: list[Turn] = []
        for index, (text, event_id, kind) in enumerate(user):
            if index == 0 and (opener := rng.choice(t.OPENERS[formality])):
                text = f"{opener} {text}"
            if rng.random() < references:
                text = rng.choice(t.PRIOR_CONTEXT) + text[:1].lower() + text[1:]
            if style["verbosity"] == "verbose" and rng.random() < 0.5:
                text = f"{text} {rng.choice(t.FILLERS)}"
            if index == len(user) - 1 and (closer := rng.choice(t.CLOSERS[formality])):
                text = f"{text} {closer}"
            if formality == "casual" and rng.random() < 0.3:
                text = text.lower()
            turns.append(
                Turn(plan.session_index, 2 * index, human.entity_id, "user", text, event_id, kind)
            )
            turns.append(
                Turn(
                    plan.session_index,
                    2 * index + 1,
                    speakers[index],
                    "assistant",
                    bot[index],
                    None,
                    "ack" if event_id else "task",
                )
            )
        return turns

    @staticmethod
    def _task_fills(rng: random.Random) -> dict[str, object]:
        n = rng.randint(2, 480)
        return {
            "person": rng.choice(t.PEOPLE),
            "thing": rng.choice(t.THINGS),
            "thing2": rng.choice(t.THINGS2),
            "day": rng.choice(t.DAYS),
            "n": n,
            "n2": round(n * rng.uniform(0.4, 1.8), 1),
            "col": rng.choice(t.COLUMNS),
            "n3": rng.randint(2, 9),
            "pct": rng.randint(1, 9),
        }

    def _event_sentence(
        self, event: Event, human: EntityState, context: SessionContext, rng: random.Random
    ) -> str:
        entity_type = get_entity_type(context.profiles[event.subject].entity_type)
        slot = entity_type.slot(event.slot)
        family, _, key = event.slot.partition("/")
        value = slot.value(event.value)
        surface = rng.choice(value.all_aliases()) if family in _ALIAS_FAMILIES else value.text
        pool = (t.SIGNAL if event.tier == "signal" else t.SOFT)[family]
        # previous_value includes latent initial state: the first change can name what it replaces.
        old = event.previous_value
        usable = [template for template in pool if old is not None or "{old}" not in template]
        template = rng.choice(usable)
        first_person = t.FIRST_PERSON.get(event.value, (value.text,))
        text = template.format(
            v=surface,
            old=old or "",
            topic=vocab.OPINION_TOPICS.get(key, key),
            fp=rng.choice(first_person),
            name=human.name.split()[0],
        )
        return _cap(text)

    def _noise_sentence(
        self, kind: str, human: EntityState, context: SessionContext, rng: random.Random
    ) -> str:
        def pick(slot: str, pool: tuple[Value, ...], words: bool = False) -> str:
            # Often reuse a value the principal really holds: mentioning a true value in a
            # non-assertion (someone else's news, a hypothetical) is what fools naive memory.
            held = context.current.get((human.entity_id, slot), ())
            value = rng.choice(held) if held and rng.random() < 0.4 else rng.choice(pool).text
            if words:
                matches = [v for v in pool if v.text == value]
                return rng.choice(matches[0].all_aliases()) if matches else value
            return value

        topic_key = rng.choice(list(vocab.OPINION_TOPICS))
        preference_key = rng.choice(list(vocab.PREFERENCE_DIMENSIONS))
        fills: dict[str, Callable[[], str]] = {
            "city": lambda: pick("city", vocab.CITIES),
            "employer": lambda: pick("employer", vocab.EMPLOYERS, words=True),
            "habit": lambda: pick("habits", vocab.HABITS),
            "constraint_word": lambda: rng.choice(
                ("vegetarian", "vegan", "gluten-free", "sober", "lactose intolerant")
            ),
            "relationship": lambda: pick("relationship", vocab.RELATIONSHIP),
            "health": lambda: pick("health", vocab.HEALTH),
            "opinion": lambda: pick(f"opinion/{topic_key}", vocab.OPINIONS),
            "topic": lambda: vocab.OPINION_TOPICS[topic_key],
            "preference": lambda: pick(
                f"preference/{preference_key}", vocab.PREFERENCE_DIMENSIONS[preference_key][1]
            ),
            "thing": lambda: rng.choice(t.THINGS),
        }
        template = rng.choice(t.NOISE[kind])
        needed = {name: fill() for name, fill in fills.items() if "{" + name + "}" in template}
        return _cap(template.format(**needed))

    @staticmethod
    def _agents_only(plan: SessionPlan, agents: list[str], rng: random.Random) -> list[Turn]:
        turns = []
        for index in range(rng.randint(2, 4)):
            speaker = agents[index % len(agents)]
            fills = TemplateSynthesizer._task_fills(rng)
            text = rng.choice(rng.choice(t.TASKS)[2]).format(**fills)  # status chatter only
            turns.append(Turn(plan.session_index, index, speaker, "assistant", text, None, "task"))
        return turns
