"""What a family's audit rule checks a probe against: the transcripts' event turns.

The answerability audit proves every probe fair from the transcripts themselves, not from the
generator's intent. The generic audit indexes every event turn once; each family's rule then
reads :class:`AuditEvidence`. The rules most families share live here.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass, field

from .._model import Probe, SessionPlan

__all__ = ["AuditEvidence", "EventTurn", "answer_expressed", "decoy_never_said"]


@dataclass(frozen=True)
class EventTurn:
    """One turn that carries an event.

    Attributes:
        session: Its session index.
        event_id: The event it carries.
        said: The probes' terms its text contains.
        speaker: Who says it.
        kind: Its label kind (``event``, or in a multi-peer world ``canary``, ``decision``,
            ``agree``, ``briefing``).
    """

    session: int
    event_id: str
    said: Set[str]
    speaker: str = ""
    kind: str = "event"


@dataclass(frozen=True)
class AuditEvidence:
    """The event turns of one world replicate, indexed for every probe's terms.

    Attributes:
        plans: The session plans, by session index.
        first_said: Term → first session whose event turn says it.
        by_session: Session index → its event turns.
        said_in: Term → every session whose turns (any turn, labelled or not) say it, for the
            terms of families that audit every turn (``ProbeFamily.audits_every_turn``).
    """

    plans: list[SessionPlan]
    first_said: dict[str, int]
    by_session: dict[int, list[EventTurn]]
    said_in: dict[str, frozenset[int]] = field(default_factory=dict)

    @property
    def never(self) -> int:
        """The session index that stands for "never said" (one past the last session)."""
        return len(self.plans)

    def first_session_saying(self, terms: Iterable[str]) -> int:
        """The first session whose event turn says any of ``terms`` (:attr:`never` if none)."""
        return min((self.first_said.get(term, self.never) for term in terms), default=self.never)


def answer_expressed(probe: Probe, evidence: AuditEvidence) -> str | None:
    """A positive probe's rule: its evidence sessions say the answer, in time.

    The evidence sessions come before the checkpoint, are signal or soft sessions, and an event
    turn of theirs contains one of the probe's evidence terms.

    Returns:
        Why the probe fails, or ``None``.
    """
    if not probe.evidence_sessions:
        return "no evidence sessions"
    for session in probe.evidence_sessions:
        if session >= probe.checkpoint:
            return f"evidence session {session} is not before the checkpoint"
        if evidence.plans[session].tier == "noise":
            return f"evidence session {session} is a noise session"
    expressed = [
        turn.session
        for session in probe.evidence_sessions
        for turn in evidence.by_session.get(session, ())
        if any(term in turn.said for term in probe.evidence_terms)
    ]
    if not expressed:
        return "answer never expressed in its evidence sessions"
    return None


def decoy_never_said(probe: Probe, evidence: AuditEvidence) -> str | None:
    """A negative probe's rule: no event turn before the checkpoint ever said its decoy.

    Returns:
        Why the probe fails, or ``None``.
    """
    said = evidence.first_session_saying(probe.evidence_terms)
    if said < probe.checkpoint:
        return f"decoy expressed in session {said}"
    return None
