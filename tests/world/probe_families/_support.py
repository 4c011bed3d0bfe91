"""Helpers of the probe family tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from drift_pipeline.world import Probe, WorldReplicate, audit_probes


def first(world: WorldReplicate, **conditions: object) -> Probe:
    """The first probe of ``world`` whose fields equal ``conditions``."""
    return next(
        p
        for p in world.probes
        if all(getattr(p, name) == value for name, value in conditions.items())
    )


def audit_one(world: WorldReplicate, probe: Probe, **changes: object) -> None:
    """Audit ``probe`` (with ``changes`` applied) against ``world``'s transcripts."""
    audit_probes([dataclasses.replace(probe, **changes)], world.plans, world.turns)


def audit_generated(world: WorldReplicate, **conditions: object) -> int:
    """Audit every probe of ``world`` whose fields equal ``conditions``; how many there were.

    Raises:
        AuditError: When any of them fails its family's audit.
    """
    probes = [
        p
        for p in world.probes
        if all(getattr(p, name) == value for name, value in conditions.items())
    ]
    audit_probes(probes, world.plans, world.turns)
    return len(probes)


def generated_subtypes(worlds: Iterable[WorldReplicate], probe_type: str) -> set[str]:
    """Every subtype of ``probe_type`` the worlds hold."""
    return {p.subtype for world in worlds for p in world.probes if p.probe_type == probe_type}


def record(probe: Probe) -> dict[str, object]:
    """A probe as a ``probes`` table row (what the judges read)."""
    row = dataclasses.asdict(probe)
    row["options"] = [dataclasses.asdict(option) for option in probe.options]
    return row
