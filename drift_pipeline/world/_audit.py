"""The answerability audit (DESIGN §4): prove every probe is fair before anyone is scored on it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from drift_pipeline.textmatch import contains_any, normalise

from ._model import Probe, SessionPlan, Turn
from ._probes import date_aliases


class AuditError(RuntimeError):
    """Generated probes failed the answerability audit: a generator bug, never a user error."""


@dataclass(frozen=True)
class _EventTurn:
    session: int
    event_id: str
    text: str


def audit_probes(probes: list[Probe], plans: list[SessionPlan], turns: list[Turn]) -> None:
    """Check each probe against the transcripts themselves, not against the generator's intent.

    A positive probe's evidence must be signal or soft sessions before its checkpoint whose event
    turns contain the answer; a revision probe's old value must have been said before the change;
    a negative probe's decoy must never appear in any event turn before its checkpoint.

    Raises:
        AuditError: Listing the first failing probes and why.
    """
    event_turns: list[_EventTurn] = [
        _EventTurn(turn.session_index, turn.label_event_id, normalise(turn.content))
        for turn in turns
        if turn.label_event_id is not None
    ]
    by_session: dict[int, list[_EventTurn]] = defaultdict(list)
    for event_turn in event_turns:
        by_session[event_turn.session].append(event_turn)

    failures: list[str] = []
    for probe in probes:
        reason = _check(probe, plans, event_turns, by_session)
        if reason:
            failures.append(f"{probe.probe_id} ({probe.probe_type}/{probe.subtype}): {reason}")
    if failures:
        shown = "; ".join(failures[:5])
        raise AuditError(f"{len(failures)} probe(s) failed the answerability audit: {shown}")


def _check(
    probe: Probe,
    plans: list[SessionPlan],
    event_turns: list[_EventTurn],
    by_session: dict[int, list[_EventTurn]],
) -> str | None:
    if probe.polarity == "negative":
        for event_turn in event_turns:
            if event_turn.session < probe.checkpoint and contains_any(
                event_turn.text, probe.evidence_terms, normalised=True
            ):
                return f"decoy expressed in session {event_turn.session}"
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
        if contains_any(turn.text, probe.evidence_terms, normalised=True)
    ]
    if not expressed:
        return "answer never expressed in its evidence sessions"
    if probe.subtype == "temporal":
        assert probe.event_session is not None
        if probe.answer not in date_aliases(plans[probe.event_session].sim_time):
            return "temporal answer is not the date of its event session"
    if probe.probe_type == "revision" and probe.event_session is not None:
        said_before = any(
            contains_any(turn.text, probe.deprecated, normalised=True)
            for turn in event_turns
            if turn.session < probe.event_session
        )
        if not said_before:
            return "the deprecated value was never expressed before the change"
    return None
