"""World generation for one (scenario, horizon): profiles → schedule → transcripts → probes."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from drift_pipeline.entities import get_entity_type
from drift_pipeline.scenario import HorizonName, ScenarioSpec, checkpoints_for, root_seed
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    PROBES,
    TRANSCRIPTS,
)
from drift_pipeline.textmatch import PhraseIndex

from ._audit import audit_probes
from ._events import plan_horizon
from ._model import EntityState, Fact, Probe, SessionPlan, Turn
from ._probes import ProbeBuilder
from ._profiles import build_profiles
from ._rng import rng_for
from .synthesis import SessionContext, Synthesizer, TemplateSynthesizer

GENERATOR_READY_PARADIGMS = ("user_assistant",)


class GenerationUnsupported(ValueError):
    """The scenario is valid but its paradigm or entity types cannot be simulated yet."""


@dataclass
class WorldReplicate:
    """Everything generated for one replicate of one horizon."""

    replicate: int
    profiles: list[EntityState]
    plans: list[SessionPlan]
    turns: list[Turn]
    facts: list[Fact]
    probes: list[Probe]


def session_id(horizon: str, replicate: int, session_index: int) -> str:
    """The session id handed to memory systems: opaque, stable, and free of labels."""
    return f"{horizon}-r{replicate}-s{session_index:05d}"


def check_supported(spec: ScenarioSpec) -> None:
    """Raise :class:`GenerationUnsupported` for paradigms whose generator is not built yet."""
    if spec.paradigm not in GENERATOR_READY_PARADIGMS:
        raise GenerationUnsupported(
            f"scenario {spec.id}: paradigm {spec.paradigm!r} validates, but world generation "
            f"supports only {', '.join(GENERATOR_READY_PARADIGMS)} so far"
        )
    for entity in spec.entities:
        if not get_entity_type(entity.type).generator_ready:
            raise GenerationUnsupported(
                f"scenario {spec.id}: entity type {entity.type!r} has no generator yet"
            )


def generate_replicate(
    spec: ScenarioSpec,
    horizon: HorizonName,
    replicate: int,
    synthesizer: Synthesizer | None = None,
) -> WorldReplicate:
    """Generate one replicate of one horizon's world, audited.

    Raises:
        AuditError: If any probe fails the answerability audit (a generator bug).
    """
    check_supported(spec)
    synthesizer = synthesizer or TemplateSynthesizer()
    root = root_seed(spec)
    profiles = build_profiles(spec, rng_for(root, replicate, horizon, "profiles"))
    plans, state = plan_horizon(
        spec,
        horizon,
        profiles,
        tier_rng=rng_for(root, replicate, horizon, "tiers"),
        event_rng=rng_for(root, replicate, horizon, "events"),
    )
    by_id = {profile.entity_id: profile for profile in profiles}
    # Replay state session by session so each transcript sees the world as it was then.
    current: dict[tuple[str, str], tuple[str, ...]] = {
        (p.entity_id, slot): (str(value),) for p in profiles for slot, value in p.initial.items()
    }
    session_rng = rng_for(root, replicate, horizon, "sessions")
    turns: list[Turn] = []
    for plan in plans:
        context = SessionContext(by_id, current, rng_for(session_rng.getrandbits(64)))
        turns.extend(synthesizer.session(plan, context))
        event = plan.event
        if event is not None and event.enters_ground_truth:
            key = (event.subject, event.slot)
            current[key] = (
                (event.value,)
                if event.op == "set"
                or (event.tier == "soft" and _functional(by_id, event.subject, event.slot))
                else (*current.get(key, ()), event.value)
            )

    mentions = _event_mentions(profiles, turns)
    builder = ProbeBuilder(
        profiles,
        plans,
        state.facts,
        mentions,
        rng_for(root, replicate, horizon, "probes"),
        spec.probes_per_checkpoint,
        id_prefix=f"{horizon}-r{replicate}-",
    )
    probes: list[Probe] = []
    previous = 0
    for checkpoint in checkpoints_for(spec, horizon):
        probes.extend(builder.checkpoint(checkpoint, previous))
        previous = checkpoint.after_session
    audit_probes(probes, plans, turns)
    return WorldReplicate(replicate, profiles, plans, turns, state.facts, probes)


def _functional(profiles: dict[str, EntityState], subject: str, slot: str) -> bool:
    return get_entity_type(profiles[subject].entity_type).slot(slot).kind == "functional"


def _event_mentions(profiles: list[EntityState], turns: list[Turn]) -> dict[str, int]:
    """First session whose event turn mentions each pool value (so decoys stay unsaid)."""
    values = {
        value.text: value.all_aliases()
        for profile in profiles
        for slot in get_entity_type(profile.entity_type).slots
        for value in slot.values
    }
    owners: dict[str, list[str]] = {}
    for text, aliases in values.items():
        for alias in aliases:
            owners.setdefault(alias, []).append(text)
    # One pass over the event turns (in session order) instead of one search per value.
    index = PhraseIndex(owners)
    first: dict[str, int] = {}
    for turn in turns:
        if turn.label_event_id:
            for alias in index.find(turn.content):
                for text in owners[alias]:
                    first.setdefault(text, turn.session_index)
    return first


# --- tables ---------------------------------------------------------------------------------


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def world_tables(
    spec: ScenarioSpec, horizon: HorizonName, replicates: list[WorldReplicate]
) -> dict[str, pa.Table]:
    """The five world tables of one (scenario, horizon), all replicates together."""
    scenario = spec.id
    cols: dict[str, dict[str, list[object]]] = {
        t.name: {f.name: [] for f in t.schema}
        for t in (LATENT_PROFILES, EVENT_SCHEDULES, TRANSCRIPTS, GROUND_TRUTH, PROBES)
    }
    checkpoints = checkpoints_for(spec, horizon)
    for world in replicates:
        rep = world.replicate
        profiles = cols[LATENT_PROFILES.name]
        for p in world.profiles:
            entry: tuple[tuple[str, object], ...] = (
                ("scenario", scenario),
                ("horizon", horizon),
                ("replicate", rep),
                ("entity_id", p.entity_id),
                ("entity_type", p.entity_type),
                ("name", p.name),
                ("stable_attributes", _canonical(p.stable)),
                ("initial_state", _canonical(p.initial)),
            )
            for key, value in entry:
                profiles[key].append(value)

        turns_per_session = [0] * len(world.plans)
        for turn in world.turns:
            turns_per_session[turn.session_index] += 1
        schedule = cols[EVENT_SCHEDULES.name]
        for plan in world.plans:
            e = plan.event
            row: dict[str, object] = {
                "scenario": scenario,
                "horizon": horizon,
                "replicate": rep,
                "session_index": plan.session_index,
                "session_id": session_id(horizon, rep, plan.session_index),
                "sim_time": plan.sim_time,
                "tier": plan.tier,
                "participants": list(plan.participants),
                "pattern": plan.pattern,
                "n_turns": turns_per_session[plan.session_index],
                "event_id": e and e.event_id,
                "event_type": e and e.event_type,
                "subject": e and e.subject,
                "slot": e and e.slot,
                "value": e and e.value,
                "previous_value": e and e.previous_value,
                "op": e and e.op,
                "mention": e and e.mention,
                "enters_ground_truth": e and e.enters_ground_truth,
            }
            for key, value in row.items():
                schedule[key].append(value)

        transcripts = cols[TRANSCRIPTS.name]
        times = [plan.sim_time for plan in world.plans]
        n = len(world.turns)
        transcripts["scenario"].extend([scenario] * n)
        transcripts["horizon"].extend([horizon] * n)
        transcripts["replicate"].extend([rep] * n)
        for turn in world.turns:
            transcripts["session_index"].append(turn.session_index)
            transcripts["turn_index"].append(turn.turn_index)
            transcripts["speaker"].append(turn.speaker)
            transcripts["role"].append(turn.role)
            transcripts["content"].append(turn.content)
            transcripts["sim_time"].append(times[turn.session_index])
            transcripts["label_event_id"].append(turn.label_event_id)
            transcripts["label_kind"].append(turn.label_kind)

        truth = cols[GROUND_TRUTH.name]
        kinds = {
            (p.entity_id, slot.name): slot.kind
            for p in world.profiles
            for slot in get_entity_type(p.entity_type).slots
        }
        for checkpoint in checkpoints:
            after = checkpoint.after_session
            for fact in world.facts:
                if fact.valid_from >= after:
                    continue
                row = {
                    "scenario": scenario,
                    "horizon": horizon,
                    "replicate": rep,
                    "checkpoint": after,
                    "fact_id": fact.fact_id,
                    "subject": fact.subject,
                    "slot": fact.slot,
                    "slot_kind": kinds[(fact.subject, fact.slot)],
                    "value": fact.value,
                    "valid_from": fact.valid_from,
                    "valid_to": fact.valid_to
                    if fact.valid_to is not None and fact.valid_to < after
                    else None,
                    "current": fact.valid_at(after),
                    "source_session": fact.source_session,
                    "tier": fact.tier,
                    "event_id": fact.event_id,
                    "evidence_sessions": list(fact.evidence_sessions),
                }
                for key, value in row.items():
                    truth[key].append(value)

        probes = cols[PROBES.name]
        for probe in world.probes:
            row = {
                "scenario": scenario,
                "horizon": horizon,
                "replicate": rep,
                "checkpoint": probe.checkpoint,
                "probe_id": probe.probe_id,
                "probe_type": probe.probe_type,
                "subtype": probe.subtype,
                "asker": probe.asker,
                "subject": probe.subject,
                "question": probe.question,
                "answer": probe.answer,
                "aliases": list(probe.aliases),
                "deprecated": list(probe.deprecated),
                "options": [
                    {"text": o.text, "terms": list(o.terms), "utility": o.utility}
                    for o in probe.options
                ],
                "correct_option": probe.correct_option,
                "default_option": probe.default_option,
                "evidence_sessions": list(probe.evidence_sessions),
                "event_id": probe.event_id,
                "polarity": probe.polarity,
                "slot": probe.slot,
                "event_session": probe.event_session,
                "evidence_terms": list(probe.evidence_terms),
            }
            for key, value in row.items():
                probes[key].append(value)

    return {
        table.name: pa.Table.from_pydict(cols[table.name], schema=table.schema)
        for table in (LATENT_PROFILES, EVENT_SCHEDULES, TRANSCRIPTS, GROUND_TRUTH, PROBES)
    }
