"""The answerability audit: prove every probe is fair before anyone is scored on it."""

from __future__ import annotations

from collections import defaultdict

from drift_pipeline.textmatch import PhraseIndex

from ._model import Probe, SessionPlan, Turn
from .probe_families import AuditEvidence, EventTurn, get_probe_family


class AuditError(RuntimeError):
    """Generated probes failed the answerability audit: a generator bug, never a user error."""


def audit_probes(probes: list[Probe], plans: list[SessionPlan], turns: list[Turn]) -> None:
    """Check each probe against the transcripts themselves, not against the generator's intent.

    Each probe is checked by its family's audit rule: e.g. a positive probe's evidence must be
    signal or soft sessions before its checkpoint whose event turns contain the answer; a
    revision probe's old value must have been said before the change; a negative probe's decoy
    must never appear in any event turn before its checkpoint.

    Raises:
        AuditError: Listing the first failing probes and why.
    """
    # Each event turn's text is searched once for every term any probe relies on.
    index = PhraseIndex(
        {term for probe in probes for term in (*probe.evidence_terms, *probe.deprecated)}
    )
    by_session: dict[int, list[EventTurn]] = defaultdict(list)
    first_said: dict[str, int] = {}  # term → first session whose event turn says it
    for turn in turns:
        if turn.label_event_id is not None:
            said = index.find(turn.content)
            by_session[turn.session_index].append(
                EventTurn(
                    turn.session_index, turn.label_event_id, said, turn.speaker, turn.label_kind
                )
            )
            for term in said:
                first_said.setdefault(term, turn.session_index)
    evidence = AuditEvidence(plans, first_said, by_session, _said_anywhere(probes, turns))

    failures: list[str] = []
    for probe in probes:
        reason = get_probe_family(probe.probe_type).audit(probe, evidence)
        if reason:
            failures.append(f"{probe.probe_id} ({probe.probe_type}/{probe.subtype}): {reason}")
    if failures:
        shown = "; ".join(failures[:5])
        raise AuditError(f"{len(failures)} probe(s) failed the answerability audit: {shown}")


def _said_anywhere(probes: list[Probe], turns: list[Turn]) -> dict[str, frozenset[int]]:
    """Every session any turn of which says a term of a probe whose family audits every turn."""
    terms = {
        term
        for probe in probes
        if get_probe_family(probe.probe_type).audits_every_turn
        for term in probe.evidence_terms
    }
    if not terms:
        return {}
    index = PhraseIndex(terms)
    sessions: dict[str, set[int]] = defaultdict(set)
    for turn in turns:
        for term in index.find(turn.content):
            sessions[term].add(turn.session_index)
    return {term: frozenset(found) for term, found in sessions.items()}
