"""What a probe family's candidate generator sees: one world replicate's latent state."""

from __future__ import annotations

import random
from dataclasses import dataclass

from drift_pipeline.entities import EntityTypeDef, SlotDef, Value, get_entity_type

from .._model import EntityState, Fact, SessionPlan
from .._peer_model import PeerWorld

__all__ = ["CheckpointFacts", "ProbeContext"]


@dataclass(frozen=True)
class CheckpointFacts:
    """The checkpoint a family generates candidates for.

    Attributes:
        after: Sessions before the checkpoint (the probes' ``checkpoint`` column).
        previous: The previous checkpoint's ``after`` (0 for the first).
        valid: Facts some session expressed that hold at the checkpoint, in fact order.
    """

    after: int
    previous: int
    valid: tuple[Fact, ...]


class ProbeContext:
    """One world replicate's profiles, sessions and facts, with the lookups families share.

    Every family draws from the same ``rng``, in registration order, so a family's generator
    must draw in a fixed order for the world to stay reproducible.

    Args:
        profiles: Every entity's latent profile.
        plans: The session plans, by session index.
        facts: Every latent fact, in fact order.
        event_mentions: First session whose event turn says each value text.
        rng: The probe stream of this replicate.
        peer: A multi-peer world's canaries, decisions and hand-overs (``None`` elsewhere):
            the multi-peer families generate from it.
        principal: Whom ``{principal}`` in a question names (default: the first human).
    """

    def __init__(
        self,
        profiles: list[EntityState],
        plans: list[SessionPlan],
        facts: list[Fact],
        event_mentions: dict[str, int],
        rng: random.Random,
        *,
        peer: PeerWorld | None = None,
        principal: str | None = None,
    ) -> None:
        self.profiles = {profile.entity_id: profile for profile in profiles}
        self.types: dict[str, EntityTypeDef] = {
            p.entity_id: get_entity_type(p.entity_type) for p in profiles
        }
        self.principal = (
            self.profiles[principal]
            if principal is not None
            else next((p for p in profiles if p.entity_type == "human"), profiles[0])
        )
        self.peer = peer
        self.plans = plans
        self.facts = facts
        # Facts of each (subject, slot), in fact order: probes look them up for every candidate.
        self.by_key: dict[tuple[str, str], list[Fact]] = {}
        for fact in facts:
            self.by_key.setdefault((fact.subject, fact.slot), []).append(fact)
        self.event_mentions = event_mentions
        self.rng = rng
        # Soft mentions short of their k-th: (subject, slot, session, session that established
        # the value or None). A mention is pending at a checkpoint until its value is established.
        established: dict[tuple[str, str, str], int] = {}
        for plan in plans:
            event = plan.event
            if event is not None and event.tier == "soft" and event.enters_ground_truth:
                established[(event.subject, event.slot, event.value)] = plan.session_index
        self._mentions: list[tuple[str, str, int, int | None]] = [
            (
                plan.event.subject,
                plan.event.slot,
                plan.session_index,
                established.get((plan.event.subject, plan.event.slot, plan.event.value)),
            )
            for plan in plans
            if plan.event is not None
            and plan.event.tier == "soft"
            and not plan.event.enters_ground_truth
        ]

    def unsettled(self, after: int) -> set[tuple[str, str]]:
        """The (subject, slot) pairs whose value a pending soft mention contradicts at ``after``.

        A mention is pending when it came before the checkpoint and its value was not yet
        established by then. It contradicts a functional slot when it came after the value that
        holds began (a later change supersedes it, as a reader by dates would decide), and a set
        slot always (the memory may list it among the held values).
        """
        unsettled: set[tuple[str, str]] = set()
        for subject, slot_name, session, established_at in self._mentions:
            if session >= after or (established_at is not None and established_at < after):
                continue
            if self.types[subject].slot(slot_name).kind == "functional":
                holding = [
                    f for f in self.by_key.get((subject, slot_name), ()) if f.valid_at(after)
                ]
                start = max(
                    (f.source_session for f in holding if f.source_session is not None),
                    default=-1,
                )
                if session < start:
                    continue
            unsettled.add((subject, slot_name))
        return unsettled

    def first_name(self, entity_id: str) -> str:
        """The entity's first name."""
        return self.profiles[entity_id].name.split()[0]

    def question(self, template: str, subject: str) -> str:
        """``template`` with ``{name}`` (the subject) and ``{principal}`` filled in."""
        principal = self.first_name(self.principal.entity_id)
        return template.format(name=self.first_name(subject), principal=principal)

    def asker(self, subject: str, session: int | None) -> str:
        """Who asks about ``subject``: an agent of ``session`` (or any agent) for a human."""
        if self.types[subject].name != "human":
            return subject  # an agent is asked about its own model of its principal
        participants = self.plans[session].participants if session is not None else ()
        for entity_id in participants:
            if self.types[entity_id].name != "human":
                return entity_id
        # In a world of people alone, a person asks their own memory.
        return next((e for e, t in self.types.items() if t.name != "human"), subject)

    def slot(self, fact: Fact) -> SlotDef:
        """The slot definition a fact fills."""
        return self.types[fact.subject].slot(fact.slot)

    def unsaid(self, subject: str, slot: SlotDef, after: int) -> list[Value]:
        """Pool values the subject never held and no event turn before ``after`` ever said."""
        held = {f.value for f in self.by_key.get((subject, slot.name), ())}
        return [
            v
            for v in slot.values
            if v.text not in held and self.event_mentions.get(v.text, after) >= after
        ]

    def closed_before(self, fact: Fact, after: int) -> list[Fact]:
        """Other values of the fact's slot that stopped holding before ``after``."""
        return [
            other
            for other in self.by_key[(fact.subject, fact.slot)]
            if other.valid_to is not None and other.valid_to < after and other.value != fact.value
        ]
