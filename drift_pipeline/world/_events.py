"""Event injection and latent state (spec §3.3): tiers, events, facts over time."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate

from drift_pipeline.entities import EventTypeDef, SlotDef, get_entity_type
from drift_pipeline.scenario import HorizonName, ScenarioSpec, topology_for

from ._model import EntityState, Event, Fact, SessionPlan, Tier

SIM_EPOCH = datetime(2027, 1, 4, 9, 0, 0)
"""Simulated time of session 0. Fixed, never the wall clock, so output is reproducible."""


@dataclass
class LatentState:
    """Facts over the trajectory, with fast lookup of what holds now."""

    facts: list[Fact] = field(default_factory=list)
    current: dict[tuple[str, str], list[Fact]] = field(default_factory=dict)
    # (subject, slot, value) → sessions that mentioned it, for soft signals not yet established
    pending: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)

    def values(self, subject: str, slot: str) -> list[str]:
        """Values that hold now."""
        return [fact.value for fact in self.current.get((subject, slot), [])]

    def open_fact(
        self,
        subject: str,
        slot: SlotDef,
        value: str,
        session: int | None,
        tier: str,
        event_id: str | None,
        evidence: tuple[int, ...],
    ) -> Fact | None:
        """Make ``value`` hold from ``session`` on; closes the old value of a functional slot.

        Returns:
            The fact it closed, if any.
        """
        key = (subject, slot.name)
        closed: Fact | None = None
        start = -1 if session is None else session
        if slot.kind == "functional" and self.current.get(key):
            closed = self.current[key][0]
            closed.valid_to = start
            self.current[key] = []
        fact = Fact(
            fact_id=f"f{len(self.facts):05d}",
            subject=subject,
            slot=slot.name,
            value=value,
            valid_from=start,
            valid_to=None,
            source_session=session,
            tier=tier,  # type: ignore[arg-type]
            event_id=event_id,
            evidence_sessions=evidence,
        )
        self.facts.append(fact)
        self.current.setdefault(key, []).append(fact)
        return closed


def draw_tiers(
    n_sessions: int, ratios: tuple[float, float, float], rng: random.Random
) -> list[Tier]:
    """Tiers for every session: exact quotas by the ratios, in a seeded random order.

    Quotas (rather than independent draws) keep the realised noise share within one session of
    the scenario's at every horizon length, which the Selectivity metric relies on.
    """
    signal_ratio, soft_ratio, _ = ratios
    n_signal = round(signal_ratio * n_sessions)
    n_soft = min(round(soft_ratio * n_sessions), n_sessions - n_signal)
    signal: list[Tier] = ["signal"]
    soft: list[Tier] = ["soft"]
    noise: list[Tier] = ["noise"]
    tiers = signal * n_signal + soft * n_soft
    tiers += noise * (n_sessions - len(tiers))
    rng.shuffle(tiers)
    return tiers


def _weights(spec: ScenarioSpec) -> dict[tuple[str, str], float]:
    """Weight of each (entity id, event type): the scenario's override or the type default."""
    weights: dict[tuple[str, str], float] = {}
    for entity in spec.entities:
        entity_type = get_entity_type(entity.type)
        overrides = (
            entity.profile.event_distribution
            if entity.type == "human"
            else getattr(entity, "event_distribution", {})
        )
        for event_type in entity_type.event_types:
            weights[(entity.id, event_type.name)] = overrides.get(
                event_type.name, event_type.default_weight
            )
    return weights


class EventInjector:
    """Draws the event of each session and keeps the latent state up to date."""

    def __init__(
        self,
        spec: ScenarioSpec,
        profiles: list[EntityState],
        rng: random.Random,
        event_prefix: str,
        principal: str | None = None,
    ) -> None:
        self.spec = spec
        # Multi-peer worlds name who voices an agent's change (the principal); without one,
        # every event is said by or to a human, as in a single-principal world.
        self.principal = principal
        self.rng = rng
        self.prefix = event_prefix
        self.state = LatentState()
        self.weights = _weights(spec)
        self.types = {entity.id: get_entity_type(entity.type) for entity in spec.entities}
        self.k = spec.soft_signal_mentions
        self._counter = 0
        # (tier, active entities) → candidate (entity, event type) pairs and cumulative weights
        self._drawable: dict[
            tuple[str, tuple[str, ...]], tuple[list[tuple[str, EventTypeDef]], list[float]]
        ] = {}
        for profile in profiles:
            entity_type = self.types[profile.entity_id]
            for slot_name, value in profile.initial.items():
                self.state.open_fact(
                    profile.entity_id,
                    entity_type.slot(slot_name),
                    str(value),
                    None,
                    "initial",
                    None,
                    (),
                )

    def _next_id(self) -> str:
        self._counter += 1
        return f"{self.prefix}e{self._counter:05d}"

    def _candidates(self, tier: str, active: tuple[str, ...]) -> list[tuple[str, EventTypeDef]]:
        options = []
        principal_present = self.principal in active
        for entity_id in active:
            if (
                self.principal is not None
                and not principal_present
                and self.types[entity_id].name != "human"
            ):
                continue  # an agent's state changes when its principal says so
            for event_type in self.types[entity_id].event_types:
                if event_type.tier == tier and self.weights[(entity_id, event_type.name)] > 0:
                    options.append((entity_id, event_type))
        return options

    def inject(self, session: int, tier: Tier, active: tuple[str, ...]) -> Event | None:
        """Draw and apply the event of one session; None for noise or when nothing can change."""
        if tier == "noise":
            return None
        # Every event is said by (or to) a human or the principal; sessions without carry none.
        if not any(self.types[entity_id].name == "human" for entity_id in active) and (
            self.principal is None or self.principal not in active
        ):
            return None
        drawable = self._drawable.get((tier, active))
        if drawable is None:
            options = self._candidates(tier, active)
            weights = [self.weights[(entity_id, et.name)] for entity_id, et in options]
            drawable = self._drawable[(tier, active)] = (options, list(accumulate(weights)))
        options, cumulative = drawable
        for _ in range(8):  # a slot may be exhausted (every habit taken): draw again
            if not options:
                return None
            entity_id, event_type = self.rng.choices(options, cum_weights=cumulative)[0]
            slot = self.types[entity_id].slot(self.rng.choice(event_type.slots))
            event = (
                self._signal(session, entity_id, event_type, slot)
                if tier == "signal"
                else self._soft(session, entity_id, event_type, slot)
            )
            if event is not None:
                return event
        return None

    def _fresh_values(self, subject: str, slot: SlotDef, exclude: set[str]) -> list[str]:
        held = set(self.state.values(subject, slot.name))
        return [value.text for value in slot.values if value.text not in held | exclude]

    def _signal(
        self, session: int, subject: str, event_type: EventTypeDef, slot: SlotDef
    ) -> Event | None:
        pending = {
            value for (s, sl, value) in self.state.pending if s == subject and sl == slot.name
        }
        candidates = self._fresh_values(subject, slot, pending)
        if not candidates:
            return None
        value = self.rng.choice(candidates)
        previous = self.state.values(subject, slot.name)
        event = Event(
            event_id=self._next_id(),
            session_index=session,
            event_type=event_type.name,
            tier="signal",
            subject=subject,
            slot=slot.name,
            value=value,
            previous_value=previous[0] if slot.kind == "functional" and previous else None,
            op="set" if slot.kind == "functional" else "add",
            mention=1,
            enters_ground_truth=True,
        )
        self.state.open_fact(subject, slot, value, session, "signal", event.event_id, (session,))
        return event

    def _soft(
        self, session: int, subject: str, event_type: EventTypeDef, slot: SlotDef
    ) -> Event | None:
        open_keys = sorted(
            (mentions[0], key)
            for key, mentions in self.state.pending.items()
            if key[0] == subject and key[1] == slot.name
        )
        if open_keys and self.rng.random() < 0.75:
            key = open_keys[0][1]
        else:
            pending_values = {key[2] for _, key in open_keys}
            candidates = self._fresh_values(subject, slot, pending_values)
            if not candidates:
                if not open_keys:
                    return None
                key = open_keys[0][1]
            else:
                key = (subject, slot.name, self.rng.choice(candidates))
        mentions = self.state.pending.setdefault(key, [])
        mentions.append(session)
        established = len(mentions) >= self.k
        previous = self.state.values(subject, slot.name)
        event = Event(
            event_id=self._next_id(),
            session_index=session,
            event_type=event_type.name,
            tier="soft",
            subject=subject,
            slot=slot.name,
            value=key[2],
            previous_value=previous[0] if slot.kind == "functional" and previous else None,
            op="mention",
            mention=len(mentions),
            enters_ground_truth=established,
        )
        if established:
            del self.state.pending[key]
            self.state.open_fact(
                subject, slot, key[2], session, "soft", event.event_id, tuple(mentions)
            )
        return event


def plan_horizon(
    spec: ScenarioSpec,
    horizon: HorizonName,
    profiles: list[EntityState],
    tier_rng: random.Random,
    event_rng: random.Random,
    event_prefix: str = "",
    principal: str | None = None,
) -> tuple[list[SessionPlan], LatentState]:
    """The event schedule of one horizon's trajectory and the latent state it produces.

    ``principal`` (multi-peer worlds) is the entity that voices the agents' changes: an agent's
    event happens only in a session its principal attends, and a session of agents alone
    carries events when the principal is among them.
    """
    horizon_spec = getattr(spec.horizon, horizon)
    sessions = horizon_spec.sessions
    tiers = draw_tiers(sessions, spec.tier_ratios(), tier_rng)
    topology = topology_for(spec, sessions)
    injector = EventInjector(spec, profiles, event_rng, event_prefix, principal)
    plans: list[SessionPlan] = []
    gap = horizon_spec.gap
    for index in range(sessions):
        slot = topology[index]
        event = injector.inject(index, tiers[index], slot.active)
        tier: Tier = "noise" if event is None else tiers[index]
        plans.append(
            SessionPlan(index, SIM_EPOCH + gap * index, tier, slot.active, slot.pattern, event)
        )
    return plans, injector.state
