"""Multi-peer worlds: topologies, every voice, scopes, canaries audited, agents alone.

The scenarios are written here (none is in the repository), small enough to generate in well
under a second; generated tables are read back from Parquet through DuckDB.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from helpers import COMMUTER, table_sql, tree_bytes, write_scenario

from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import AuditError, WorldReplicate, audit_probes, generate_replicate
from drift_pipeline.world import generate_worlds as _generate_worlds
from drift_pipeline.world.probe_families import _registry

TEAM = """\
id: test-peer-team
paradigm: multi_peer
seed: 77
replicates: 2
horizon:
  short: { sessions: 36, session_gap_hours: 5 }
noise_ratio: 0.5
entities:
  - { id: lena, type: human }
  - { id: omar, type: human, profile: { communication_style: { verbosity: verbose } } }
  - { id: lead, type: coding_agent, name: Lead Agent }
  - { id: helper, type: assistant_agent }
  - { id: scout, type: tool_agent, name: Scout }
  - { id: late, type: assistant_agent, name: Late Joiner }
topology:
  - { session_range: [0, -1], active: [lena, helper], pattern: linear }
  - { session_range: [0, -1], every: 2, active: [scout], pattern: async }
  - { session_range: [0, -1], every: 5, offset: 1, active: [omar, helper, lead],
      pattern: broadcast }
  - { session_range: [0, -1], every: 5, offset: 2, active: [lena, omar, helper], pattern: mesh }
  - session_range: [0, -1]
    every: 5
    offset: 3
    active: [lena, lead, scout, helper]
    pattern: hierarchical
  - { session_range: [0, -1], every: 5, offset: 4, active: [scout], pattern: async }
  - { session_range: [20, -1], every: 5, offset: 4, active: [lead, scout], pattern: async }
  - { session_range: [14, -1], every: 5, offset: 2, active: [lena, omar, helper, late] }
checkpoints:
  - { every: 12, probe_types: [recall, revision, canary, consistency, attribution, handoff] }
"""

AGENTS = """\
id: test-peer-agents
paradigm: multi_peer
seed: 5
replicates: 1
principal: boss
horizon:
  short: { sessions: 30, session_gap_hours: 3 }
noise_ratio: 0.4
entities:
  - { id: boss, type: coding_agent, name: Boss }
  - { id: fetcher, type: tool_agent, name: Fetcher }
  - { id: builder, type: coding_agent, name: Builder }
topology:
  - { session_range: [0, -1], active: [boss, fetcher], pattern: async }
  - { session_range: [0, -1], every: 3, offset: 1, active: [boss, builder], pattern: linear }
  - { session_range: [0, -1], every: 3, offset: 2, active: [boss, fetcher, builder], pattern: mesh }
checkpoints:
  - { every: 10, probe_types: [recall, canary, consistency, attribution] }
"""


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> list[WorldReplicate]:
    path = write_scenario(tmp_path_factory.mktemp("team"), TEAM)
    spec = load_scenario(path).spec
    return [generate_replicate(spec, "short", replicate) for replicate in range(2)]


@pytest.fixture(scope="module")
def team_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("team-tables")
    _generate_worlds([load_scenario(write_scenario(base / "s", TEAM))], base / "data", workers=1)
    return base / "data"


def test_every_participant_speaks_and_patterns_shape_the_turns(
    team: list[WorldReplicate],
) -> None:
    for world in team:
        speakers: dict[int, list[str]] = {}
        order: dict[int, list[str]] = {}  # the pattern's turns: decisions are taken in between
        roles: dict[int, set[str]] = {}
        for turn in world.turns:
            speakers.setdefault(turn.session_index, []).append(turn.speaker)
            if turn.label_kind not in ("decision", "agree") and turn.role != "tool":
                order.setdefault(turn.session_index, []).append(turn.speaker)
            roles.setdefault(turn.session_index, set()).add(turn.role)
        for plan in world.plans:
            said = speakers[plan.session_index]
            # The speakers of a session are its participants: who attended is who spoke.
            assert set(said) == set(plan.participants), plan
            if plan.pattern == "hierarchical":
                # The principal briefs the orchestrator first, who then delegates.
                assert order[plan.session_index][:2] == ["lena", "lead"]
            if plan.pattern == "broadcast":
                # The lead posts, then everyone else answers.
                answers = set(order[plan.session_index][1:3])
                assert said[0] == "omar" and answers == {"helper", "lead"}
            if "scout" in plan.participants or "lead" in plan.participants:
                assert roles[plan.session_index] <= {"user", "assistant", "tool"}
        # Agents that use tools get their output back as role "tool", spoken for the agent.
        tools = [t for t in world.turns if t.role == "tool"]
        assert tools and {t.speaker for t in tools} <= {"lead", "scout"}
        assert all(t.label_event_id is None and t.label_kind == "tool" for t in tools)
        # People speak as users, agents as assistants.
        assert {t.role for t in world.turns if t.speaker in ("lena", "omar")} == {"user"}
        assert {t.role for t in world.turns if t.speaker == "helper"} == {"assistant"}


def test_every_fact_carries_its_scope(team: list[WorldReplicate]) -> None:
    for world in team:
        scopes = Counter(fact.scope for fact in world.facts)
        assert scopes["private"] and scopes["shared"], scopes
        for fact in world.facts:
            if fact.source_session is None:
                assert (fact.scope, fact.audience) == ("private", (fact.subject,))
                continue
            sessions = fact.evidence_sessions
            audience = {e for s in sessions for e in world.plans[s].participants}
            assert set(fact.audience) == audience
            expected = (
                "emergent" if len(sessions) > 1 else "private" if len(audience) == 1 else "shared"
            )
            assert fact.scope == expected, fact
        # A canary told in the scout's sessions alone is private to it.
        alone = [
            f
            for f in world.facts
            if f.slot.startswith("canary/") and world.plans[f.valid_from].participants == ("scout",)
        ]
        assert alone and all(f.scope == "private" and f.audience == ("scout",) for f in alone)


def test_every_canary_is_told_only_where_the_asked_entity_was_absent(team_tables: Path) -> None:
    probes = table_sql(team_tables, "probes")
    transcripts = table_sql(team_tables, "transcripts")
    schedules = table_sql(team_tables, "event_schedules")
    rows = duckdb.execute(
        f"""
        select p.replicate, p.probe_id, p.asker, p.subject, p.answer,
               list(distinct t.session_index) as said_in,
               list(distinct t.speaker) filter (where t.label_kind = 'canary') as owners
        from {probes} p join {transcripts} t
          on t.replicate = p.replicate and contains(t.content, p.answer)
        where p.probe_type = 'canary'
        group by all
        """
    ).fetchall()
    assert len(rows) >= 10
    present = {
        (replicate, session): set(participants)
        for replicate, session, participants in duckdb.execute(
            f"select replicate, session_index, participants from {schedules}"
        ).fetchall()
    }
    owner_of: dict[tuple[int, str], set[str]] = {}
    for replicate, probe_id, asker, subject, answer, said_in, owners in rows:
        # Said by its owner, in sessions the asked entity did not attend, and nowhere else.
        assert owners == [subject], probe_id
        for session in said_in:
            assert asker not in present[(replicate, session)], (probe_id, session)
        owner_of.setdefault((replicate, answer), set()).add(subject)
    # Every value is one entity's: no canary shares its value with another.
    assert all(len(owners) == 1 for owners in owner_of.values())


def test_a_canary_asked_of_someone_who_heard_it_fails_the_audit(
    team: list[WorldReplicate],
) -> None:
    world = team[0]
    canary = next(p for p in world.probes if p.probe_type == "canary")
    heard = next(
        e for e in world.plans[canary.event_session or 0].participants if e != canary.subject
    )
    leaked = dataclasses.replace(canary, asker=heard)
    with pytest.raises(AuditError, match="which the asker attended"):
        audit_probes([leaked], world.plans, world.turns)
    audit_probes([canary], world.plans, world.turns)


def test_decisions_are_what_each_asked_entity_last_saw(team: list[WorldReplicate]) -> None:
    for world in team:
        assert world.peer is not None
        consistency = [p for p in world.probes if p.probe_type == "consistency"]
        attribution = [p for p in world.probes if p.probe_type == "attribution"]
        assert consistency and attribution
        for probe in consistency:
            seen = [
                d
                for d in world.peer.decisions
                if d.session < probe.checkpoint
                and probe.asker in d.audience
                and f"agreed/{d.topic}" == probe.slot
            ]
            assert seen[-1].value == probe.answer
            # A group: every probe of it shares the tag, the question and the answer.
            tag = probe.probe_id.rsplit("-", 1)[1]
            group = [p for p in consistency if p.probe_id.endswith(f"-{tag}")]
            assert len({(p.question, p.answer, p.checkpoint) for p in group}) <= len(
                {p.checkpoint for p in group}
            )
        for probe in attribution:
            assert probe.asker != probe.subject
            assert probe.answer in probe.aliases


def test_a_newcomer_is_briefed_and_asked_what_it_was_told(team: list[WorldReplicate]) -> None:
    for world in team:
        assert world.peer is not None and world.peer.joins
        handoff = [p for p in world.probes if p.probe_type == "handoff"]
        briefings = {b.briefing_id: b for b in world.peer.briefings}
        assert handoff and briefings
        for probe in handoff:
            briefing = briefings[probe.event_id or ""]
            assert probe.asker == briefing.newcomer
            assert probe.probe_id.endswith(f"-j{briefing.joined:05d}")
            assert briefing.newcomer in world.plans[briefing.session].participants
            assert probe.checkpoint > briefing.joined


def test_agents_alone_run_with_the_issuer_as_principal(tmp_path: Path) -> None:
    spec = load_scenario(write_scenario(tmp_path, AGENTS)).spec
    world = generate_replicate(spec, "short", 0)
    assert {p.entity_type for p in world.profiles} == {"coding_agent", "tool_agent"}
    events = [t for t in world.turns if t.label_kind == "event"]
    assert events and {t.speaker for t in events} == {"boss"}
    # The agent that issued the objective instructs the others: its turns are the users'.
    assert {t.role for t in world.turns if t.speaker == "boss"} == {"user"}
    assert {p.probe_type for p in world.probes} >= {"recall", "canary", "consistency"}


def test_same_scenario_and_seed_give_the_same_bytes(tmp_path: Path, team_tables: Path) -> None:
    path = write_scenario(tmp_path / "s", TEAM)
    _generate_worlds([load_scenario(path)], tmp_path / "again", workers=2)
    assert tree_bytes(tmp_path / "again") == tree_bytes(team_tables)


def test_the_multi_peer_families_leave_single_principal_worlds_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_scenario(tmp_path / "s", COMMUTER)
    _generate_worlds([load_scenario(path)], tmp_path / "with", horizons=["short"], workers=1)
    bare = _registry._FAMILIES.copy()
    for name in ("canary", "consistency", "attribution", "handoff"):
        bare.unregister(name)
    monkeypatch.setattr(_registry, "_FAMILIES", bare)
    _generate_worlds([load_scenario(path)], tmp_path / "without", horizons=["short"], workers=1)
    assert tree_bytes(tmp_path / "with") == tree_bytes(tmp_path / "without")


@pytest.mark.parametrize(
    "name",
    [
        "mp-shared-assistant-011",
        "mp-coding-team-012",
        "mp-research-crawler-013",
        "mp-agents-only-014",
    ],
)
def test_the_canonical_multi_peer_scenarios_generate_audited(name: str) -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    spec = load_scenario(root / f"{name}.yaml").spec
    world = generate_replicate(spec, "short", 0)  # audited inside
    kinds = Counter(p.probe_type for p in world.probes)
    assert kinds["canary"] and kinds["consistency"] and kinds["recall"], kinds
    if name == "mp-agents-only-014":
        assert all(p.entity_type != "human" for p in world.profiles)
