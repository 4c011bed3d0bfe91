"""World generation for one (scenario, horizon): profiles → schedule → transcripts → probes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import pyarrow as pa

from drift_pipeline.entities import get_entity_type
from drift_pipeline.scenario import HorizonName, ScenarioSpec, checkpoints_for, root_seed
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    PROBES,
    TRANSCRIPTS,
    WORLD_TABLES,
    TableDef,
)
from drift_pipeline.textmatch import PhraseIndex

from ._audit import audit_probes
from ._events import plan_horizon
from ._model import EntityState, Event, Fact, Probe, SessionPlan, Turn
from ._paradigms import paradigm_generator, paradigm_names
from ._probes import ProbeBuilder
from ._profiles import build_profiles
from ._rng import rng_for
from .synthesis import SessionContext, Synthesizer, TemplateSynthesizer

if TYPE_CHECKING:
    from ._peer_model import PeerWorld
    from .synthesis import SynthesisFallback


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
    synthesis_fallbacks: tuple[SynthesisFallback, ...] = ()
    """Sessions the synthesizer could not write and handed to its fallback (LLM only)."""
    peer: PeerWorld | None = None
    """A multi-peer world's canaries, decisions and hand-overs (``None`` for other paradigms)."""


def session_id(horizon: str, replicate: int, session_index: int) -> str:
    """The session id handed to memory systems: opaque, stable, and free of labels."""
    return f"{horizon}-r{replicate}-s{session_index:05d}"


def check_supported(spec: ScenarioSpec) -> None:
    """Raise :class:`GenerationUnsupported` for paradigms that have no registered generator."""
    if paradigm_generator(spec.paradigm) is None:
        raise GenerationUnsupported(
            f"scenario {spec.id}: paradigm {spec.paradigm!r} validates, but world generation "
            f"supports only {', '.join(paradigm_names()) or 'none'} so far"
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
    """Generate one replicate of one horizon's world, audited, by its paradigm's generator.

    Raises:
        GenerationUnsupported: No generator is registered for the paradigm, or an entity type
            has none.
        AuditError: If any probe fails the answerability audit (a generator bug).
    """
    check_supported(spec)
    generator = paradigm_generator(spec.paradigm)
    assert generator is not None  # check_supported said so
    return generator(spec, horizon, replicate, synthesizer or TemplateSynthesizer())


def generate_user_assistant(
    spec: ScenarioSpec,
    horizon: HorizonName,
    replicate: int,
    synthesizer: Synthesizer,
) -> WorldReplicate:
    """The ``user_assistant`` paradigm's generator: profiles → schedule → transcripts → probes.

    Raises:
        AuditError: If any probe fails the answerability audit (a generator bug).
    """
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
    prepare = getattr(synthesizer, "prepare", None)
    if prepare is not None:
        # A batching synthesizer (the LLM one) writes all sessions at once. State replays from
        # the plans alone, so every session's context (with a snapshot of the state) is known.
        contexts = []
        for plan in plans:
            rng = rng_for(session_rng.getrandbits(64))
            contexts.append(SessionContext(by_id, dict(current), rng))
            _advance(current, by_id, plan.event)
        prepare(plans, contexts)
        for plan, context in zip(plans, contexts, strict=True):
            turns.extend(synthesizer.session(plan, context))
    else:
        for plan in plans:
            context = SessionContext(by_id, current, rng_for(session_rng.getrandbits(64)))
            turns.extend(synthesizer.session(plan, context))
            _advance(current, by_id, plan.event)

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
    probes = builder.all_checkpoints(checkpoints_for(spec, horizon))
    audit_probes(probes, plans, turns)
    take_fallbacks = getattr(synthesizer, "take_fallbacks", None)
    fallbacks = tuple(take_fallbacks()) if take_fallbacks is not None else ()
    return WorldReplicate(replicate, profiles, plans, turns, state.facts, probes, fallbacks)


def _advance(
    current: dict[tuple[str, str], tuple[str, ...]],
    profiles: dict[str, EntityState],
    event: Event | None,
) -> None:
    """Apply one session's event to the values holding now."""
    if event is not None and event.enters_ground_truth:
        key = (event.subject, event.slot)
        current[key] = (
            (event.value,)
            if event.op == "set"
            or (event.tier == "soft" and _functional(profiles, event.subject, event.slot))
            else (*current.get(key, ()), event.value)
        )


def _functional(profiles: dict[str, EntityState], subject: str, slot: str) -> bool:
    return get_entity_type(profiles[subject].entity_type).slot(slot).kind == "functional"


def _event_mentions(profiles: list[EntityState], turns: list[Turn]) -> dict[str, int]:
    """First session whose event turn mentions each pool value (so decoys stay unsaid)."""
    owners, index = _pool_index(tuple(profile.entity_type for profile in profiles))
    # One pass over the event turns (in session order) instead of one search per value.
    first: dict[str, int] = {}
    for turn in turns:
        if turn.label_event_id:
            for alias in index.find(turn.content):
                for text in owners[alias]:
                    first.setdefault(text, turn.session_index)
    return first


@lru_cache(maxsize=64)
def _pool_index(entity_types: tuple[str, ...]) -> tuple[dict[str, list[str]], PhraseIndex]:
    """Every alias of the pool values of these entity types, with the values it names.

    Registered types never change, so one index serves every replicate of every world.
    """
    values = {
        value.text: value.all_aliases()
        for name in entity_types
        for slot in get_entity_type(name).slots
        for value in slot.values
    }
    owners: dict[str, list[str]] = {}
    for text, aliases in values.items():
        for alias in aliases:
            owners.setdefault(alias, []).append(text)
    return owners, PhraseIndex(owners)


# --- tables ---------------------------------------------------------------------------------


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def world_tables(
    spec: ScenarioSpec, horizon: HorizonName, replicates: list[WorldReplicate]
) -> dict[str, pa.Table]:
    """The five world tables of one (scenario, horizon), all replicates together."""
    return concat_tables([replicate_tables(spec, horizon, world) for world in replicates])


def concat_tables(parts: list[dict[str, pa.Table]]) -> dict[str, pa.Table]:
    """Per-replicate tables (in replicate order) as one table each, in one chunk per column.

    One chunk makes the Parquet bytes independent of how the replicates were produced.
    """
    return {
        table.name: pa.concat_tables([part[table.name] for part in parts]).combine_chunks()
        if parts
        else table.schema.empty_table()
        for table in WORLD_TABLES
    }


def replicate_tables(
    spec: ScenarioSpec, horizon: HorizonName, world: WorldReplicate
) -> dict[str, pa.Table]:
    """The five world tables of one replicate, built column by column."""
    scenario = spec.id
    rep = world.replicate

    key_scalars = {
        "scenario": pa.scalar(scenario, pa.string()),
        "horizon": pa.scalar(horizon, pa.string()),
        "replicate": pa.scalar(rep, pa.int32()),
    }

    def table(definition: TableDef, n: int, columns: dict[str, object]) -> pa.Table:
        keys = {name: pa.repeat(value, n) for name, value in key_scalars.items()}
        return pa.Table.from_pydict({**keys, **columns}, schema=definition.schema)

    profiles = world.profiles
    tables = {
        LATENT_PROFILES.name: table(
            LATENT_PROFILES,
            len(profiles),
            {
                "entity_id": [p.entity_id for p in profiles],
                "entity_type": [p.entity_type for p in profiles],
                "name": [p.name for p in profiles],
                "stable_attributes": [_canonical(p.stable) for p in profiles],
                "initial_state": [_canonical(p.initial) for p in profiles],
            },
        )
    }

    plans = world.plans
    turns_per_session = [0] * len(plans)
    for turn in world.turns:
        turns_per_session[turn.session_index] += 1
    events = [plan.event for plan in plans]
    sim_times = pa.array([plan.sim_time for plan in plans], pa.timestamp("ms"))
    tables[EVENT_SCHEDULES.name] = table(
        EVENT_SCHEDULES,
        len(plans),
        {
            "session_index": [plan.session_index for plan in plans],
            "session_id": [session_id(horizon, rep, plan.session_index) for plan in plans],
            "sim_time": sim_times,
            "tier": [plan.tier for plan in plans],
            "participants": [list(plan.participants) for plan in plans],
            "pattern": [plan.pattern for plan in plans],
            "n_turns": [turns_per_session[plan.session_index] for plan in plans],
            "event_id": [e and e.event_id for e in events],
            "event_type": [e and e.event_type for e in events],
            "subject": [e and e.subject for e in events],
            "slot": [e and e.slot for e in events],
            "value": [e and e.value for e in events],
            "previous_value": [e and e.previous_value for e in events],
            "op": [e and e.op for e in events],
            "mention": [e and e.mention for e in events],
            "enters_ground_truth": [e and e.enters_ground_truth for e in events],
        },
    )

    n_turns = len(world.turns)
    if n_turns:
        sessions, indexes, speakers, roles, contents, labels, kinds = zip(*world.turns, strict=True)
    else:
        sessions = indexes = speakers = roles = contents = labels = kinds = ()
    session_column = pa.array(sessions, pa.int32())
    tables[TRANSCRIPTS.name] = table(
        TRANSCRIPTS,
        n_turns,
        {
            "session_index": session_column,
            "turn_index": indexes,
            "speaker": speakers,
            "role": roles,
            "content": contents,
            "sim_time": sim_times.take(session_column),
            "label_event_id": labels,
            "label_kind": kinds,
        },
    )

    kinds_of = {
        (p.entity_id, slot.name): slot.kind
        for p in profiles
        for slot in get_entity_type(p.entity_type).slots
    }
    # A multi-peer world's canaries and decisions are facts of no entity-type slot: one value
    # each, as a functional slot holds.
    for fact in world.facts:
        kinds_of.setdefault((fact.subject, fact.slot), "functional")
    truth: list[tuple[int, Fact]] = [
        (checkpoint.after_session, fact)
        for checkpoint in checkpoints_for(spec, horizon)
        for fact in world.facts
        if fact.valid_from < checkpoint.after_session
    ]
    tables[GROUND_TRUTH.name] = table(
        GROUND_TRUTH,
        len(truth),
        {
            "checkpoint": [after for after, _ in truth],
            "fact_id": [f.fact_id for _, f in truth],
            "subject": [f.subject for _, f in truth],
            "slot": [f.slot for _, f in truth],
            "slot_kind": [kinds_of[(f.subject, f.slot)] for _, f in truth],
            "value": [f.value for _, f in truth],
            "valid_from": [f.valid_from for _, f in truth],
            "valid_to": [
                f.valid_to if f.valid_to is not None and f.valid_to < after else None
                for after, f in truth
            ],
            "current": [f.valid_at(after) for after, f in truth],
            "source_session": [f.source_session for _, f in truth],
            "tier": [f.tier for _, f in truth],
            "event_id": [f.event_id for _, f in truth],
            "evidence_sessions": [list(f.evidence_sessions) for _, f in truth],
        },
    )

    probes = world.probes
    tables[PROBES.name] = table(
        PROBES,
        len(probes),
        {
            "checkpoint": [p.checkpoint for p in probes],
            "probe_id": [p.probe_id for p in probes],
            "probe_type": [p.probe_type for p in probes],
            "subtype": [p.subtype for p in probes],
            "asker": [p.asker for p in probes],
            "subject": [p.subject for p in probes],
            "question": [p.question for p in probes],
            "answer": [p.answer for p in probes],
            "aliases": [list(p.aliases) for p in probes],
            "deprecated": [list(p.deprecated) for p in probes],
            "options": [
                [{"text": o.text, "terms": list(o.terms), "utility": o.utility} for o in p.options]
                for p in probes
            ],
            "correct_option": [p.correct_option for p in probes],
            "default_option": [p.default_option for p in probes],
            "evidence_sessions": [list(p.evidence_sessions) for p in probes],
            "event_id": [p.event_id for p in probes],
            "polarity": [p.polarity for p in probes],
            "slot": [p.slot for p in probes],
            "event_session": [p.event_session for p in probes],
            "evidence_terms": [list(p.evidence_terms) for p in probes],
        },
    )
    return tables
