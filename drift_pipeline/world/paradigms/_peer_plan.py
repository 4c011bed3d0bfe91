"""What a multi-peer world adds to its schedule: canaries, decisions and hand-overs, and scopes.

Drawn after the event schedule, from the replicate's own stream, in session order: which
session discloses a canary (some entity is absent from it), which shared session agrees on a
team topic, and which sessions catch a newcomer up on the facts that held when it joined.
"""

from __future__ import annotations

import random

from drift_pipeline.entities import EntityTypeDef, get_entity_type

from .._model import EntityState, Fact, SessionPlan
from .._peer_model import Briefing, Canary, Decision, PeerWorld
from .._peer_vocab import BRIEFINGS, DECISION_TOPICS

__all__ = ["fact_scope", "plan_peer_world"]

CANARY_ODDS = 0.25
"""Chance that a session some entity is absent from carries a canary disclosure."""
DECISION_ODDS = 0.3
"""Chance that a session of several participants agrees on a team topic."""
BRIEFED_FACTS = 6
"""Facts a newcomer is caught up on at most."""
BRIEFINGS_PER_SESSION = 2
"""Facts restated in one session of a newcomer at most."""
_TOPICS = tuple(DECISION_TOPICS)


def plan_peer_world(
    plans: list[SessionPlan],
    facts: list[Fact],
    profiles: list[EntityState],
    principal: str,
    first_checkpoint: int,
    rng: random.Random,
) -> PeerWorld:
    """Draw the canaries, decisions and briefings of one replicate.

    Args:
        plans: The session plans (participants, tiers, events).
        facts: The entities' latent facts.
        profiles: Every entity's profile.
        principal: The entity that voices agents' changes and catches newcomers up.
        first_checkpoint: The horizon's first checkpoint: an entity whose first session comes
            after it joined mid-trajectory.
        rng: The replicate's stream for these draws.
    """
    everyone = frozenset(p.entity_id for p in profiles)
    types = {p.entity_id: get_entity_type(p.entity_type) for p in profiles}
    attended: dict[str, set[int]] = {entity: set() for entity in everyone}
    for plan in plans:
        for entity in plan.participants:
            attended[entity].add(plan.session_index)
    world = PeerWorld(principal, attended={e: frozenset(s) for e, s in attended.items()})
    world.joins = {
        entity: min(sessions)
        for entity, sessions in sorted(attended.items())
        if sessions and min(sessions) >= first_checkpoint
    }
    used: set[str] = set()
    pending = _pending_briefings(world, facts, rng)
    for plan in plans:
        index, present = plan.session_index, plan.participants
        if set(present) != everyone and rng.random() < CANARY_ODDS:
            canary = _canary(index, present, types, used, rng, len(world.canaries))
            if canary is not None:
                world.canaries.append(canary)
        if len(present) > 1 and rng.random() < DECISION_ODDS:
            topic = _TOPICS[int(rng.random() * len(_TOPICS))]
            label, values = DECISION_TOPICS[topic]
            world.decisions.append(
                Decision(
                    f"d{len(world.decisions) + 1:05d}",
                    index,
                    topic,
                    label,
                    values[int(rng.random() * len(values))],
                    present[int(rng.random() * len(present))],
                    present,
                )
            )
        _brief(plan, pending, types, principal, world)
    return world


def _canary(
    session: int,
    present: tuple[str, ...],
    types: dict[str, EntityTypeDef],
    used: set[str],
    rng: random.Random,
    count: int,
) -> Canary | None:
    owners = [entity for entity in present if types[entity].canaries]
    if not owners:
        return None
    owner = owners[int(rng.random() * len(owners))]
    frames = types[owner].canaries
    frame = frames[int(rng.random() * len(frames))]
    for _ in range(20):  # values are unique in the world: draw again on a collision
        value = frame.draw(lambda pool: pool[int(rng.random() * len(pool))])
        if value not in used:
            used.add(value)
            return Canary(
                f"k{count + 1:05d}",
                owner,
                frame.key,
                frame.label,
                frame.question,
                value,
                session,
                present,
            )
    return None


def _pending_briefings(
    world: PeerWorld, facts: list[Fact], rng: random.Random
) -> dict[str, list[Fact]]:
    """Per newcomer, the facts it should be caught up on: said before it joined, still holding.

    Only facts some session expressed, whose subject is not the newcomer and whose slot family
    has a hand-over line, at most :data:`BRIEFED_FACTS` of them (drawn).
    """
    pending: dict[str, list[Fact]] = {}
    for newcomer, joined in world.joins.items():
        candidates = [
            fact
            for fact in facts
            if fact.source_session is not None
            and fact.subject != newcomer
            and fact.valid_from < joined
            and (fact.valid_to is None or fact.valid_to > joined)
            and fact.slot.partition("/")[0] in BRIEFINGS
            and not world.present(newcomer, fact.source_session)
        ]
        rng.shuffle(candidates)
        pending[newcomer] = sorted(candidates[:BRIEFED_FACTS], key=lambda f: f.fact_id)
    return pending


def _brief(
    plan: SessionPlan,
    pending: dict[str, list[Fact]],
    types: dict[str, EntityTypeDef],
    principal: str,
    world: PeerWorld,
) -> None:
    """Add the briefings of one session: up to two pending facts per newcomer present."""
    index = plan.session_index
    for newcomer, queue in pending.items():
        if newcomer not in plan.participants or index < world.joins[newcomer]:
            continue
        said = 0
        for fact in list(queue):
            if said == BRIEFINGS_PER_SESSION:
                break
            if fact.valid_to is not None and fact.valid_to <= index:
                queue.remove(fact)  # it stopped holding before anyone restated it
                continue
            agent = types[fact.subject].name != "human"
            speaker = _briefer(fact.subject, agent, principal, plan.participants, newcomer)
            if speaker is None:
                continue
            queue.remove(fact)
            said += 1
            briefing = Briefing(
                f"b{len(world.briefings) + 1:05d}",
                index,
                newcomer,
                world.joins[newcomer],
                fact.fact_id,
                fact.subject,
                fact.slot,
                fact.value,
                speaker,
            )
            world.briefings.append(briefing)


def _briefer(
    subject: str, agent: bool, principal: str, present: tuple[str, ...], newcomer: str
) -> str | None:
    """Who restates a fact, if present: a person's own fact in person, an agent's the principal.

    A person's fact is restated in the first person, so only by that person; an agent's state
    (its project, its frontier, its principal's instructions) is the principal's to state.
    """
    speaker = principal if agent else subject
    return speaker if speaker in present and speaker != newcomer else None


def fact_scope(fact: Fact, plans: list[SessionPlan]) -> Fact:
    """``fact`` with its scope and audience set from the sessions that expressed it.

    The audience is every participant of its evidence sessions; initial state nobody said is
    private to its subject.
    """
    sessions = fact.evidence_sessions or (
        (fact.source_session,) if fact.source_session is not None else ()
    )
    if not sessions:
        fact.scope, fact.audience = "private", (fact.subject,)
        return fact
    audience = sorted({entity for s in sessions for entity in plans[s].participants})
    fact.audience = tuple(audience)
    if len(sessions) > 1:
        fact.scope = "emergent"
    elif len(audience) == 1:
        fact.scope = "private"
    else:
        fact.scope = "shared"
    return fact
