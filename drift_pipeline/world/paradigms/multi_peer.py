"""The ``multi_peer`` paradigm (spec §4.3.4): several entities of any registered type.

Sessions follow the scenario's topology (who attends, in which interaction pattern); events
change the entities' slots as in a single-principal world, voiced by the person they concern or,
for an agent's state, by the principal (the first human, or the entity the scenario names as
having issued the objective, in a world of agents alone). On top of the schedule the world
draws canaries (private facts disclosed where some entity is absent), team decisions agreed in
shared sessions and hand-over lines for entities that join mid-trajectory; every fact carries
its scope. Probes of every family the checkpoints ask for are generated and audited.
"""

from __future__ import annotations

from drift_pipeline.scenario import (
    HorizonName,
    ScenarioSpec,
    checkpoints_for,
    principal_of,
    root_seed,
)

from .. import _peer_vocab as vocab
from .._audit import audit_probes
from .._events import plan_horizon
from .._generate import GenerationUnsupported, WorldReplicate, _advance, _event_mentions
from .._model import Fact
from .._peer_model import Briefing, PeerWorld
from .._probes import ProbeBuilder
from .._profiles import build_profiles
from .._rng import rng_for
from ..synthesis import SessionContext, Synthesizer, TemplateSynthesizer
from ..synthesis._peer_writer import PeerSession, PeerVoices, display_names, write_peer_session
from ._peer_plan import fact_scope, plan_peer_world

__all__ = ["VOICES", "generate_multi_peer"]

VOICES = PeerVoices(
    proposals=vocab.PROPOSALS,
    agreements=vocab.AGREEMENTS,
    briefing_leads=vocab.BRIEFING_LEADS,
    briefings=vocab.BRIEFINGS,
    agent_tasks=vocab.AGENT_TASKS,
    task_fills=vocab.TASK_FILLS,
    agent_acks=vocab.AGENT_ACKS,
    delegations=vocab.DELEGATIONS,
    topics=vocab.OPINION_TOPIC_WORDS,
)
"""The words multi-peer sessions are written with."""


def generate_multi_peer(
    spec: ScenarioSpec,
    horizon: HorizonName,
    replicate: int,
    synthesizer: Synthesizer,
) -> WorldReplicate:
    """The ``multi_peer`` paradigm's generator: schedule, peers' extras, sessions, probes.

    Raises:
        GenerationUnsupported: The synthesizer is not the template one (multi-peer sessions
            are written from the phrasing grammar only), or no principal can be found.
        AuditError: If any probe fails the answerability audit (a generator bug).
    """
    if not isinstance(synthesizer, TemplateSynthesizer):
        raise GenerationUnsupported(
            f"scenario {spec.id}: multi_peer worlds are written by the template synthesizer "
            f"only (got {synthesizer.name!r}); run without --synthesizer llm"
        )
    principal = principal_of(spec)
    if principal is None:
        raise GenerationUnsupported(
            f"scenario {spec.id}: principal: a world of agents alone needs the agent that "
            "issued the objective named as principal"
        )
    root = root_seed(spec)
    profiles = build_profiles(spec, rng_for(root, replicate, horizon, "profiles"))
    plans, state = plan_horizon(
        spec,
        horizon,
        profiles,
        tier_rng=rng_for(root, replicate, horizon, "tiers"),
        event_rng=rng_for(root, replicate, horizon, "events"),
        principal=principal,
    )
    checkpoints = checkpoints_for(spec, horizon)
    peer = plan_peer_world(
        plans,
        state.facts,
        profiles,
        principal,
        checkpoints[0].after_session,
        rng_for(root, replicate, horizon, "peers"),
    )
    by_id = {profile.entity_id: profile for profile in profiles}
    names = display_names(by_id)
    canaries = {c.session: c for c in peer.canaries}
    decisions = {d.session: d for d in peer.decisions}
    briefings: dict[int, list[Briefing]] = {}
    for briefing in peer.briefings:
        briefings.setdefault(briefing.session, []).append(briefing)
    current: dict[tuple[str, str], tuple[str, ...]] = {
        (p.entity_id, slot): (str(value),) for p in profiles for slot, value in p.initial.items()
    }
    session_rng = rng_for(root, replicate, horizon, "sessions")
    turns = []
    for plan in plans:
        index = plan.session_index
        extras = PeerSession(
            principal,
            canaries.get(index),
            decisions.get(index),
            tuple(briefings.get(index, ())),
            names,
        )
        context = SessionContext(by_id, current, rng_for(session_rng.getrandbits(64)))
        turns.extend(write_peer_session(plan, context, extras, VOICES, synthesizer))
        _advance(current, by_id, plan.event)
    for fact in state.facts:
        fact_scope(fact, plans)
    builder = ProbeBuilder(
        profiles,
        plans,
        state.facts,
        _event_mentions(profiles, turns),
        rng_for(root, replicate, horizon, "probes"),
        spec.probes_per_checkpoint,
        id_prefix=f"{horizon}-r{replicate}-",
        peer=peer,
        principal=principal,
    )
    probes = builder.all_checkpoints(checkpoints)
    audit_probes(probes, plans, turns)
    facts = [*state.facts, *_peer_facts(peer, len(state.facts))]
    return WorldReplicate(replicate, profiles, plans, turns, facts, probes, peer=peer)


def _peer_facts(peer: PeerWorld, start: int) -> list[Fact]:
    """Canaries and decisions as latent facts, with their scope (the sessions' audiences)."""
    facts: list[Fact] = []
    for canary in peer.canaries:
        facts.append(
            Fact(
                f"f{start + len(facts):05d}",
                canary.owner,
                f"canary/{canary.key}",
                canary.value,
                canary.session,
                None,
                canary.session,
                "signal",
                canary.canary_id,
                (canary.session,),
                "private" if len(canary.audience) == 1 else "shared",
                canary.audience,
            )
        )
    for decision in peer.decisions:
        facts.append(
            Fact(
                f"f{start + len(facts):05d}",
                decision.proposer,
                f"agreed/{decision.topic}",
                decision.value,
                decision.session,
                None,
                decision.session,
                "signal",
                decision.decision_id,
                (decision.session,),
                "shared",
                decision.audience,
            )
        )
    return facts
