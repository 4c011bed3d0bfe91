"""The answerability audit (DESIGN §4): prove every probe is fair before anyone is scored on it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Set
from dataclasses import dataclass

from drift_pipeline.textmatch import PhraseIndex

from ._model import Probe, SessionPlan, Turn
from ._probes import date_aliases


class AuditError(RuntimeError):
    """Generated probes failed the answerability audit: a generator bug, never a user error."""


@dataclass(frozen=True)
class _EventTurn:
    session: int
    event_id: str
    said: Set[str]  # the probes' terms this turn's text contains


def audit_probes(probes: list[Probe], plans: list[SessionPlan], turns: list[Turn]) -> None:
    """Check each probe against the transcripts themselves, not against the generator's intent.

    A positive probe's evidence must be signal or soft sessions before its checkpoint whose event
    turns contain the answer; a revision probe's old value must have been said before the change;
    a negative probe's decoy must never appear in any event turn before its checkpoint.

    Raises:
        AuditError: Listing the first failing probes and why.
    """
    # Each event turn's text is searched once for every term any probe relies on.
    index = PhraseIndex(
        {term for probe in probes for term in (*probe.evidence_terms, *probe.deprecated)}
    )
    by_session: dict[int, list[_EventTurn]] = defaultdict(list)
    first_said: dict[str, int] = {}  # term → first session whose event turn says it
    for turn in turns:
        if turn.label_event_id is not None:
            said = index.find(turn.content)
            by_session[turn.session_index].append(
                _EventTurn(turn.session_index, turn.label_event_id, said)
            )
            for term in said:
                first_said.setdefault(term, turn.session_index)

    failures: list[str] = []
    for probe in probes:
        reason = _check(probe, plans, first_said, by_session)
        if reason:
            failures.append(f"{probe.probe_id} ({probe.probe_type}/{probe.subtype}): {reason}")
    if failures:
        shown = "; ".join(failures[:5])
        raise AuditError(f"{len(failures)} probe(s) failed the answerability audit: {shown}")


def _check(
    probe: Probe,
    plans: list[SessionPlan],
    first_said: dict[str, int],
    by_session: dict[int, list[_EventTurn]],
) -> str | None:
    never = len(plans)
    if probe.polarity == "negative":
        said = min((first_said.get(term, never) for term in probe.evidence_terms), default=never)
        if said < probe.checkpoint:
            return f"decoy expressed in session {said}"
        return None
    if not probe.evidence_sessions:
        return "no evidence sessions"
    for session in probe.evidence_sessions:
        if session >= probe.checkpoint:
            return f"evidence session {session} is not before the checkpoint"
        if plans[session].tier == "noise":
            return f"evidence session {session} is a noise session"
    expressed = [
        turn.session
        for session in probe.evidence_sessions
        for turn in by_session.get(session, ())
        if any(term in turn.said for term in probe.evidence_terms)
    ]
    if not expressed:
        return "answer never expressed in its evidence sessions"
    if probe.subtype == "temporal":
        assert probe.event_session is not None
        if probe.answer not in date_aliases(plans[probe.event_session].sim_time):
            return "temporal answer is not the date of its event session"
    if probe.probe_type == "revision" and probe.event_session is not None:
        said_before = any(
            first_said.get(term, never) < probe.event_session for term in probe.deprecated
        )
        if not said_before:
            return "the deprecated value was never expressed before the change"
    return None
