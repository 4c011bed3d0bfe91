"""Cross-field rules a schema cannot express: ids, topology, checkpoints, paradigm fit."""

from __future__ import annotations

from collections import Counter

from ._errors import Finding
from ._spec import PARADIGM_PROBE_TYPES, ScenarioSpec

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
        *_entity_findings(spec),
        *_topology_findings(spec),
        *_checkpoint_findings(spec),
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
