"""The answerability audit re-run on a world's stored tables.

Generation already audits every replicate before it writes. Re-running the same
:func:`drift_pipeline.world.audit_probes` on what was actually stored proves the files on disk
(not the generator's memory) are fair, and catches a table replaced or damaged afterwards.
Imported worlds are audited as their importer audits them (:func:`audit_stored_evidence`):
a dataset's answers are not written by templates, so the generator's audit does not apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import pyarrow.compute as pc

from drift_pipeline.keys import WorldKey
from drift_pipeline.storage import EVENT_SCHEDULES, PROBES, TRANSCRIPTS, StorageRoot
from drift_pipeline.world import AuditError, Probe, ProbeOption, SessionPlan, Turn, audit_probes


@dataclass(frozen=True)
class AuditOutcome:
    """What the stored audit found: probes checked, replicates, and the failure if any."""

    probes: int
    replicates: int
    failure: str | None

    @property
    def passed(self) -> bool:
        """Whether every probe is answerable from its evidence sessions."""
        return self.failure is None


def audit_stored_world(root: StorageRoot, world: WorldKey) -> AuditOutcome:
    """Run the answerability audit over the stored probes, schedule and transcripts."""
    read = {t.name: root.read_table(t, world) for t in (PROBES, EVENT_SCHEDULES, TRANSCRIPTS)}
    replicates = sorted(set(read[EVENT_SCHEDULES.name].column("replicate").to_pylist()))
    failures: list[str] = []
    checked = 0
    for replicate in replicates:
        rows = {
            name: table.filter(pc.equal(table["replicate"], replicate)).to_pylist()
            for name, table in read.items()
        }
        probes = [_probe(row) for row in rows[PROBES.name]]
        plans = sorted(
            (_plan(row) for row in rows[EVENT_SCHEDULES.name]), key=lambda p: p.session_index
        )
        turns = [_turn(row) for row in rows[TRANSCRIPTS.name]]
        checked += len(probes)
        try:
            audit_probes(probes, plans, turns)
        except AuditError as error:
            failures.append(f"replicate {replicate}: {error}")
    return AuditOutcome(checked, len(replicates), "; ".join(failures) or None)


def audit_stored_evidence(root: StorageRoot, world: WorldKey) -> AuditOutcome:
    """Every stored probe names evidence sessions that exist and come before its checkpoint.

    The audit of imported worlds, whose probes come from a dataset with its own evidence ids.
    """
    probes = root.read_table(PROBES, world).to_pylist()
    schedule = root.read_table(EVENT_SCHEDULES, world)
    sessions = set(
        zip(
            schedule.column("replicate").to_pylist(),
            schedule.column("session_index").to_pylist(),
            strict=True,
        )
    )
    failures: list[str] = []
    for probe in probes:
        evidence = probe["evidence_sessions"] or []
        wrong = [
            s
            for s in evidence
            if s >= probe["checkpoint"] or (probe["replicate"], s) not in sessions
        ]
        if not evidence or wrong:
            why = f"evidence session {wrong[0]}" if wrong else "no evidence session"
            failures.append(f"probe {probe['probe_id']!r}: {why} before its checkpoint")
    replicates = len({r for r, _ in sessions})
    return AuditOutcome(len(probes), replicates, "; ".join(failures[:5]) or None)


def _probe(row: dict[str, Any]) -> Probe:
    options = tuple(
        ProbeOption(o["text"], tuple(o["terms"] or ()), int(o["utility"] or 0))
        for o in row["options"]
    )
    return Probe(
        probe_id=row["probe_id"],
        checkpoint=row["checkpoint"],
        probe_type=row["probe_type"],
        subtype=row["subtype"],
        asker=row["asker"],
        subject=row["subject"],
        question=row["question"],
        answer=row["answer"],
        aliases=tuple(row["aliases"]),
        deprecated=tuple(row["deprecated"]),
        options=options,
        correct_option=row["correct_option"],
        default_option=row["default_option"],
        evidence_sessions=tuple(row["evidence_sessions"]),
        event_id=row["event_id"],
        polarity=cast(Any, row["polarity"]),
        slot=row["slot"],
        event_session=row["event_session"],
        evidence_terms=tuple(row["evidence_terms"]),
    )


def _plan(row: dict[str, Any]) -> SessionPlan:
    # The audit reads only a session's index, tier and time; its event is not needed.
    return SessionPlan(
        session_index=row["session_index"],
        sim_time=row["sim_time"],
        tier=row["tier"],
        participants=tuple(row["participants"]),
        pattern=row["pattern"],
        event=None,
    )


def _turn(row: dict[str, Any]) -> Turn:
    return Turn(
        session_index=row["session_index"],
        turn_index=row["turn_index"],
        speaker=row["speaker"],
        role=row["role"],
        content=row["content"],
        label_event_id=row["label_event_id"],
        label_kind=row["label_kind"],
    )


def world_audits(
    root: StorageRoot,
    worlds: Iterable[tuple[str, str]],
    generated: Callable[[str], bool | None],
) -> dict[str, str | None]:
    """Each world's answerability audit on its stored tables: ``scenario/horizon`` → failure.

    Kept free of Dagster: a direct ``drift run`` audits its worlds without loading it.

    Args:
        root: The storage root.
        worlds: (scenario, horizon) of each world on the board.
        generated: Whether a scenario's worlds were generated (the generator's audit) or
            imported (their evidence ids are checked); ``None``: unknown here, left unaudited
            (its rows say the audit was not run).

    Returns:
        ``None`` for a world that passed, else its failure.
    """
    audits: dict[str, str | None] = {}
    for scenario, horizon in dict.fromkeys(worlds):
        kind = generated(scenario)
        if kind is None:
            continue
        audit = audit_stored_world if kind else audit_stored_evidence
        audits[f"{scenario}/{horizon}"] = audit(root, WorldKey.of(scenario, horizon)).failure
    return audits
