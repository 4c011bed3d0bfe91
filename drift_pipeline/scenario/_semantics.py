"""Cross-field rules a schema cannot express: ids, topology, checkpoints, paradigm fit."""

from __future__ import annotations

from collections import Counter

from ._errors import Problem
from ._spec import PARADIGM_PROBE_TYPES, ScenarioSpec


def semantic_problems(spec: ScenarioSpec) -> list[Problem]:
    """Return every cross-field problem of a structurally valid scenario."""
    problems: list[Problem] = []
    ids = [entity.id for entity in spec.entities]
    counts = Counter(ids)
    for index, entity_id in enumerate(ids):
        if counts[entity_id] > 1 and ids.index(entity_id) != index:
            problems.append(
                Problem(f"entities[{index}].id", f"duplicate entity id {entity_id!r}; ids must be unique")
            )
    declared = set(ids)

    longest = max(horizon.sessions for _, horizon in spec.horizon.items())
    for index, entry in enumerate(spec.topology):
        for position, entity_id in enumerate(entry.active):
            if entity_id not in declared:
                problems.append(
                    Problem(
                        f"topology[{index}].active[{position}]",
                        f"entity {entity_id!r} is not declared; declared: {', '.join(ids)}",
                    )
                )
        if entry.session_range[0] >= longest:
            problems.append(
                Problem(
                    f"topology[{index}].session_range",
                    f"starts at session {entry.session_range[0]} but the longest horizon has "
                    f"{longest} sessions (0-based indices up to {longest - 1})",
                )
            )
        if spec.paradigm == "user_assistant" and entry.pattern != "linear":
            problems.append(
                Problem(
                    f"topology[{index}].pattern",
                    f"pattern {entry.pattern!r} needs several peers; user_assistant allows: linear",
                )
            )

    allowed_probes = PARADIGM_PROBE_TYPES[spec.paradigm]
    for index, checkpoint in enumerate(spec.checkpoints):
        if checkpoint.after_session is not None and checkpoint.after_session > longest:
            reach = ", ".join(f"{name}={h.sessions}" for name, h in spec.horizon.items())
            problems.append(
                Problem(
                    f"checkpoints[{index}].after_session",
                    f"no horizon reaches session {checkpoint.after_session} (sessions: {reach})",
                )
            )
        for position, probe_type in enumerate(checkpoint.probe_types):
            if probe_type not in allowed_probes:
                problems.append(
                    Problem(
                        f"checkpoints[{index}].probe_types[{position}]",
                        f"probe type {probe_type!r} is not defined for paradigm {spec.paradigm}; "
                        f"allowed: {', '.join(allowed_probes)}",
                    )
                )

    types = Counter(entity.type for entity in spec.entities)
    if spec.paradigm == "user_assistant":
        if types["human"] != 1 or types["assistant_agent"] < 1:
            problems.append(
                Problem(
                    "entities",
                    "user_assistant needs exactly one human and at least one assistant_agent "
                    f"(got {dict(types)})",
                )
            )
        others = sorted(set(types) - {"human", "assistant_agent"})
        if others:
            problems.append(
                Problem("entities", f"user_assistant allows human and assistant_agent, not {others}; "
                        "use paradigm multi_peer")
            )
    elif spec.paradigm == "coding_agent" and types["coding_agent"] < 1:
        problems.append(Problem("entities", "coding_agent paradigm needs at least one coding_agent"))
    elif spec.paradigm == "crawler_agent" and types["tool_agent"] < 1:
        problems.append(Problem("entities", "crawler_agent paradigm needs at least one tool_agent"))
    elif spec.paradigm == "multi_peer" and len(ids) < 2:
        problems.append(Problem("entities", "multi_peer needs at least two entities"))
    return problems
