"""Derived views of a scenario: checkpoints per horizon, who is active per session, root seed."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from drift_pipeline.keys import HorizonName

from ._spec import PARADIGM_PROBE_TYPES, ScenarioSpec


@dataclass(frozen=True)
class ResolvedCheckpoint:
    """A checkpoint of one horizon.

    Attributes:
        after_session: Probes are asked after this many sessions (1-based count), i.e. right
            after session index ``after_session - 1`` has been stored.
        probe_types: Probe types asked there.

    """

    after_session: int
    probe_types: tuple[str, ...]


@dataclass(frozen=True)
class SessionTopology:
    """Who takes part in a session and how."""

    active: tuple[str, ...]
    pattern: str


def principal_of(spec: ScenarioSpec) -> str | None:
    """The entity that issued the objective: the declared ``principal``, else the first human.

    ``None`` for a world of agents that names no principal (validation refuses one that needs
    it).
    """
    if spec.principal is not None:
        return spec.principal
    return next((entity.id for entity in spec.entities if entity.type == "human"), None)


def root_seed(spec: ScenarioSpec) -> int:
    """Return the scenario's seed, or one derived from its id so unseeded scenarios differ."""
    if spec.seed is not None:
        return spec.seed
    return int.from_bytes(hashlib.sha256(spec.id.encode()).digest()[:8], "big") >> 1


def checkpoints_for(spec: ScenarioSpec, horizon: HorizonName) -> list[ResolvedCheckpoint]:
    """Checkpoints that apply to one horizon.

    A declared ``after_session: N`` applies to every horizon with at least N sessions, ``every: K``
    to each multiple of K, and the horizon's final session is always a checkpoint: when no entry
    puts one there, it is asked with every probe type the scenario declares (or, if it declares
    none, every type its paradigm defines).
    """
    sessions = getattr(spec.horizon, horizon).sessions
    types_at: dict[int, list[str]] = {}

    def add(after: int, probe_types: Sequence[str]) -> None:
        bucket = types_at.setdefault(after, [])
        bucket.extend(t for t in probe_types if t not in bucket)

    declared: list[str] = []
    for checkpoint in spec.checkpoints:
        declared.extend(t for t in checkpoint.probe_types if t not in declared)
        if checkpoint.after_session is not None:
            if checkpoint.after_session <= sessions:
                add(checkpoint.after_session, checkpoint.probe_types)
        else:
            assert checkpoint.every is not None
            for after in range(checkpoint.every, sessions + 1, checkpoint.every):
                add(after, checkpoint.probe_types)
    if sessions not in types_at:
        add(sessions, declared or PARADIGM_PROBE_TYPES[spec.paradigm])
    order = PARADIGM_PROBE_TYPES["multi_peer"]
    return [
        ResolvedCheckpoint(after, tuple(sorted(types, key=order.index)))
        for after, types in sorted(types_at.items())
    ]


def topology_for(spec: ScenarioSpec, sessions: int) -> list[SessionTopology]:
    """Who is active in each session of a horizon with ``sessions`` sessions.

    Later topology entries override earlier ones where ranges overlap; an entry with ``every: K``
    covers every K-th session of its range from ``first + offset``; a session no entry covers
    has every entity active in a linear pattern.
    """
    everyone = SessionTopology(tuple(entity.id for entity in spec.entities), "linear")
    result = [everyone] * sessions
    for entry in spec.topology:
        first, last = entry.session_range
        last = sessions - 1 if last == -1 else min(last, sessions - 1)
        slot = SessionTopology(tuple(entry.active), entry.pattern)
        for index in range(first + entry.offset, last + 1, entry.every):
            result[index] = slot
    return result
