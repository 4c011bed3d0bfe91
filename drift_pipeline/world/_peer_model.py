"""Records of a multi-peer world beyond the entities' slots: canaries, decisions, hand-overs.

A multi-peer world (spec §4) adds three kinds of facts to the entities' latent state, each said
in one session and known, under the scope model (spec §4.2), only to that session's
participants:

- a :class:`Canary` is a private fact its owner discloses in a session some other entity did
  not attend; its value is unique in the world, so that entity recalling it is a leak;
- a :class:`Decision` is what the participants of a shared session agreed on a team topic,
  proposed by one of them: its truth is relative to who was there;
- a :class:`Briefing` restates a fact that holds to an entity that joined mid-trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Briefing", "Canary", "Decision", "PeerWorld"]


@dataclass(frozen=True)
class Canary:
    """A private fact disclosed once.

    Attributes:
        canary_id: Unique within the replicate (``k00003``); the label of the turn saying it.
        owner: Who discloses it (whose fact it is).
        key: The canary frame's key (``locker_code``).
        label: Human words for it (``gym locker code``).
        question: Its question, with ``{name}`` for the owner's name.
        value: The value, said nowhere else in the world.
        session: The session it is disclosed in.
        audience: That session's participants: who may know it.
    """

    canary_id: str
    owner: str
    key: str
    label: str
    question: str
    value: str
    session: int
    audience: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """What the participants of one session agreed on a topic, and who proposed it.

    Attributes:
        decision_id: Unique within the replicate (``d00002``); labels its turns.
        session: The session it was made in.
        topic: The topic's key (``release_day``).
        topic_label: The topic in words (``release day``).
        value: What was agreed.
        proposer: Who proposed it.
        audience: The session's participants.
    """

    decision_id: str
    session: int
    topic: str
    topic_label: str
    value: str
    proposer: str
    audience: tuple[str, ...]


@dataclass(frozen=True)
class Briefing:
    """A fact restated to a newcomer in one of its first sessions.

    Attributes:
        briefing_id: Unique within the replicate (``b00001``); labels its turn.
        session: The session it is said in.
        newcomer: Who is being caught up.
        joined: The newcomer's first session.
        fact_id: The latent fact restated.
        subject: Whose fact it is.
        slot: Its slot.
        value: Its value.
        speaker: Who says it.
    """

    briefing_id: str
    session: int
    newcomer: str
    joined: int
    fact_id: str
    subject: str
    slot: str
    value: str
    speaker: str


@dataclass
class PeerWorld:
    """A multi-peer replicate's principal, canaries, decisions and hand-overs.

    Attributes:
        principal: The entity whose objective and constraints are the ground truth.
        canaries: Every canary, in session order.
        decisions: Every decision, in session order.
        briefings: Every briefing, in session order.
        joins: Newcomer → its first session (entities that joined mid-trajectory).
        attended: Entity → the sessions it took part in, in order.
    """

    principal: str
    canaries: list[Canary] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    briefings: list[Briefing] = field(default_factory=list)
    joins: dict[str, int] = field(default_factory=dict)
    attended: dict[str, frozenset[int]] = field(default_factory=dict)

    def present(self, entity: str, session: int) -> bool:
        """Whether ``entity`` took part in ``session``."""
        return session in self.attended.get(entity, frozenset())
