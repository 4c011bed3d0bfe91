"""Cross-field rules a schema cannot express: ids, topology, checkpoints, paradigm fit."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from drift_pipeline.entities import get_entity_type

from ._errors import Finding
from ._resolve import principal_of, topology_for
from ._spec import PARADIGM_PROBE_TYPES, ScenarioSpec

_WEIGHT_TOLERANCE = 1e-9
_NEEDS_PRINCIPAL = ("coding_agent", "crawler_agent", "multi_peer")
"""Paradigms whose agents act for someone: without a person, the entity that issued the
objective must be named (spec §4.3.4)."""

_PARADIGM_ENTITY_TYPES: dict[str, tuple[str, ...]] = {
    "user_assistant": ("human", "assistant_agent"),
}
"""Entity types a paradigm is limited to; paradigms not listed take any registered type."""


def semantic_findings(spec: ScenarioSpec) -> list[Finding]:
    """Return every cross-field problem of a structurally valid scenario.

    Args:
        spec: A scenario that already passed schema validation.

    Returns:
        Findings in file order of the fields they concern.

    """
    return [
        *_horizon_findings(spec),
        *_entity_findings(spec),
        *_weight_findings(spec),
        *_principal_findings(spec),
        *_topology_findings(spec),
        *_checkpoint_findings(spec),
        *_canary_findings(spec),
    ]


def _horizon_findings(spec: ScenarioSpec) -> list[Finding]:
    """Horizons run short < medium < long: a longer one with fewer sessions is a mix-up."""
    findings: list[Finding] = []
    declared = spec.horizon.items()
    for (shorter, first), (longer, second) in pairwise(declared):
        if second.sessions <= first.sessions:
            findings.append(
                Finding(
                    ("horizon", longer, "sessions"),
                    f"{second.sessions} sessions is not more than horizon.{shorter}'s "
                    f"{first.sessions}; horizons run short < medium < long: swap them or fix "
                    "the counts",
                )
            )
    return findings


def _weight_findings(spec: ScenarioSpec) -> list[Finding]:
    """The weights of one tier are each event type's chance in a session of that tier."""
    findings: list[Finding] = []
    for index, entity in enumerate(spec.entities):
        entity_type = get_entity_type(entity.type)
        declared: dict[str, float]
        if entity.type == "human":
            declared = entity.profile.event_distribution
            loc: tuple[str | int, ...] = ("entities", index, "profile", "event_distribution")
        else:
            declared = getattr(entity, "event_distribution", {})
            loc = ("entities", index, "event_distribution")
        for tier in ("signal", "soft"):
            weights = {
                event.name: declared.get(event.name, event.default_weight)
                for event in entity_type.event_types
                if event.tier == tier
            }
            total = sum(weights.values())
            if total > 1.0 + _WEIGHT_TOLERANCE:
                given = ", ".join(
                    f"{name} {weights[name]:g}" for name in declared if name in weights
                )
                findings.append(
                    Finding(
                        loc,
                        f"{tier} event weights add up to {total:.3g} ({given or 'defaults'}); "
                        f"each is the chance that a {tier} session carries that event, so "
                        "together at most 1: lower them",
                    )
                )
    return findings


def _principal_findings(spec: ScenarioSpec) -> list[Finding]:
    ids = [entity.id for entity in spec.entities]
    if spec.principal is not None and spec.principal not in ids:
        return [
            Finding(
                ("principal",),
                f"entity {spec.principal!r} is not declared; declared: {', '.join(ids)}",
            )
        ]
    if spec.paradigm in _NEEDS_PRINCIPAL and principal_of(spec) is None:
        return [
            Finding(
                ("principal",),
                f"a {spec.paradigm} world without a human needs a principal: add "
                "'principal: <id>' naming the entity that issued the objective, or add a human",
            )
        ]
    return []


def _canary_findings(spec: ScenarioSpec) -> list[Finding]:
    """Canaries are told where some entity is absent: a world needs such a session."""
    asked = [
        (index, checkpoint.probe_types.index("canary"))
        for index, checkpoint in enumerate(spec.checkpoints)
        if "canary" in checkpoint.probe_types
    ]
    if not asked:
        return []
    everyone = {entity.id for entity in spec.entities}
    private = any(
        set(slot.active) != everyone
        for _, horizon in spec.horizon.items()
        for slot in topology_for(spec, horizon.sessions)
    )
    disclosers = any(get_entity_type(entity.type).canaries for entity in spec.entities)
    if private and disclosers:
        return []
    why = (
        "every session has every entity"
        if not private
        else "no entity's type declares a canary to disclose"
    )
    return [
        Finding(
            ("checkpoints", index, "probe_types", position),
            f"canary probes need a session some entity does not attend, and {why}; add a "
            "topology entry whose active list leaves an entity out, or drop canary",
        )
        for index, position in asked
    ]


def _longest(spec: ScenarioSpec) -> int:
    return max(horizon.sessions for _, horizon in spec.horizon.items())


def _entity_findings(spec: ScenarioSpec) -> list[Finding]:
    findings: list[Finding] = []
    first_index: dict[str, int] = {}
    for index, entity in enumerate(spec.entities):
        if entity.id in first_index:
            findings.append(
                Finding(
                    ("entities", index, "id"),
                    f"duplicate entity id {entity.id!r} (already used by "
                    f"entities[{first_index[entity.id]}]); ids must be unique",
                )
            )
        else:
            first_index[entity.id] = index

    allowed_types = _PARADIGM_ENTITY_TYPES.get(spec.paradigm)
    if allowed_types is not None:
        for index, entity in enumerate(spec.entities):
            if entity.type not in allowed_types:
                findings.append(
                    Finding(
                        ("entities", index, "type"),
                        f"type {entity.type!r} is not allowed in paradigm {spec.paradigm}; "
                        f"allowed: {', '.join(allowed_types)} (or use paradigm multi_peer)",
                    )
                )

    types: Counter[str] = Counter(entity.type for entity in spec.entities)
    need = _missing_roles(spec.paradigm, types, len(spec.entities))
    if need:
        got = ", ".join(f"{count} {name}" for name, count in types.items())
        findings.append(Finding(("entities",), f"{need} (got {got})"))
    return findings


def _missing_roles(paradigm: str, types: Counter[str], count: int) -> str | None:
    """Say which entities a paradigm needs and the scenario lacks, or ``None``."""
    if paradigm == "user_assistant" and (types["human"] != 1 or types["assistant_agent"] < 1):
        return "user_assistant needs exactly one human and at least one assistant_agent"
    if paradigm == "coding_agent" and types["coding_agent"] < 1:
        return "coding_agent paradigm needs at least one coding_agent"
    if paradigm == "crawler_agent" and types["tool_agent"] < 1:
        return "crawler_agent paradigm needs at least one tool_agent"
    if paradigm == "multi_peer" and count < 2:
        return "multi_peer needs at least two entities"
    return None


def _topology_findings(spec: ScenarioSpec) -> list[Finding]:
    findings: list[Finding] = []
    ids = [entity.id for entity in spec.entities]
    longest = _longest(spec)
    for index, entry in enumerate(spec.topology):
        for position, entity_id in enumerate(entry.active):
            if entity_id not in ids:
                findings.append(
                    Finding(
                        ("topology", index, "active", position),
                        f"entity {entity_id!r} is not declared; declared: {', '.join(ids)}",
                    )
                )
        if entry.session_range[0] >= longest:
            findings.append(
                Finding(
                    ("topology", index, "session_range"),
                    f"starts at session {entry.session_range[0]} but the longest horizon has "
                    f"{longest} sessions (0-based indices up to {longest - 1})",
                )
            )
        if spec.paradigm == "user_assistant" and entry.pattern != "linear":
            # One principal and its assistant(s) take turns; other patterns need several peers.
            findings.append(
                Finding(
                    ("topology", index, "pattern"),
                    f"pattern {entry.pattern!r} needs several peers; user_assistant allows: linear",
                )
            )
    return findings


def _checkpoint_findings(spec: ScenarioSpec) -> list[Finding]:
    findings: list[Finding] = []
    longest = _longest(spec)
    reach = ", ".join(f"{name}={horizon.sessions}" for name, horizon in spec.horizon.items())
    allowed_probes = PARADIGM_PROBE_TYPES[spec.paradigm]
    for index, checkpoint in enumerate(spec.checkpoints):
        trigger, after = (
            ("after_session", checkpoint.after_session)
            if checkpoint.after_session is not None
            else ("every", checkpoint.every)
        )
        # A checkpoint past every horizon's end would never be asked: almost surely a typo.
        if after is not None and after > longest:
            findings.append(
                Finding(
                    ("checkpoints", index, trigger),
                    f"no horizon reaches session {after}; sessions per horizon: {reach}",
                )
            )
        for position, probe_type in enumerate(checkpoint.probe_types):
            if probe_type not in allowed_probes:
                findings.append(
                    Finding(
                        ("checkpoints", index, "probe_types", position),
                        f"probe type {probe_type!r} is not defined for paradigm {spec.paradigm}; "
                        f"allowed: {', '.join(allowed_probes)}",
                    )
                )
    return findings
