"""The generic probe loop: families in registration order, groups sampled in a fixed order."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from datetime import datetime

import pytest
from helpers import TEST_SCENARIOS

from drift_pipeline.scenario import ResolvedCheckpoint, parse_scenario_text
from drift_pipeline.world import Probe, WorldReplicate, generate_replicate
from drift_pipeline.world._model import EntityState, Event, Fact, SessionPlan
from drift_pipeline.world._probes import ProbeBuilder, _group_order
from drift_pipeline.world.probe_families import (
    CheckpointFacts,
    ProbeContext,
    ProbeFamily,
    _registry,
    register_probe_family,
)
from drift_pipeline.world.probe_families.recall import RECALL


@pytest.fixture(scope="module")
def replicate() -> WorldReplicate:
    return generate_replicate(parse_scenario_text(TEST_SCENARIOS["test-commuter-a"]), "short", 0)


def _builder(world: WorldReplicate) -> ProbeBuilder:
    return ProbeBuilder(world.profiles, world.plans, world.facts, {}, random.Random(3), 30, "t-")


def _renamed(probe_type: str, subtype: str) -> ProbeFamily:
    """A family that re-labels recall's candidates (to break the loop's expectations)."""

    def generate(context: ProbeContext, checkpoint: CheckpointFacts) -> Iterator[Probe | None]:
        for probe in RECALL.generate(context, checkpoint):
            if probe is not None:
                yield dataclasses.replace(probe, probe_type=probe_type, subtype=subtype)

    return ProbeFamily("bad", ("fact",), 9, generate, RECALL.audit, RECALL.judge, {})


WRONG_TYPE = _renamed("recall", "fact")
WRONG_SUBTYPE = _renamed("bad", "temporal")


def test_groups_are_sampled_rarest_family_first_then_in_declared_subtype_order() -> None:
    assert _group_order() == [
        ("revision", "fact_update"),
        ("revision", "preference_reversal"),
        ("revision", "belief_half_life"),
        # Imported datasets' update questions: declared, never generated.
        ("revision", "knowledge_update"),
        ("recall", "fact"),
        ("recall", "relationship"),
        ("recall", "temporal"),
        ("recall", "negative"),
        ("action", "preference_driven"),
        ("action", "constraint_aware"),
        ("action", "style_adaptive"),
        # The multi-peer families, last.
        ("canary", "private_fact"),
        ("consistency", "shared_decision"),
        ("attribution", "proposer"),
        ("handoff", "caught_up"),
    ]


def test_only_the_families_a_checkpoint_asks_for_are_generated(replicate: WorldReplicate) -> None:
    probes = _builder(replicate).checkpoint(ResolvedCheckpoint(10, ("action",)), 0)
    assert probes and {p.probe_type for p in probes} == {"action"}
    assert [p.probe_id for p in probes] == [f"t-c00010-{i:03d}" for i in range(len(probes))]


@pytest.mark.parametrize(
    ("family", "problem"),
    [
        ("WRONG_TYPE", "generated a probe of type 'recall'; its probes must have probe_type 'bad'"),
        ("WRONG_SUBTYPE", "generated subtype 'temporal', which it does not declare"),
    ],
)
def test_a_family_must_generate_its_own_type_and_declared_subtypes(
    family: str, problem: str, replicate: WorldReplicate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_registry, "_FAMILIES", _registry._FAMILIES.copy())
    register_probe_family("bad", f"{__name__}:{family}")
    with pytest.raises(ValueError, match=problem):
        _builder(replicate).checkpoint(ResolvedCheckpoint(10, ("bad",)), 0)


def _plan(session: int, event: Event | None) -> SessionPlan:
    return SessionPlan(session, datetime(2030, 1, 1 + session), "noise", ("me", "bot"), "p", event)


def _soft(session: int, slot: str, value: str, mention: int, established: bool) -> Event:
    return Event(
        f"e{session}",
        session,
        "x",
        "soft",
        "me",
        slot,
        value,
        None,
        "mention",
        mention,
        established,
    )


def _fact(slot: str, value: str, start: int, end: int | None, source: int | None) -> Fact:
    return Fact(f"f-{slot}-{value}", "me", slot, value, start, end, source, "signal", None)


UNSETTLED_PLANS = [
    _plan(0, None),
    # city: Porto from session 1; a soft mention of Valencia at 2, established at 5.
    _plan(1, None),
    _plan(2, _soft(2, "city", "Valencia", 1, False)),
    _plan(3, _soft(3, "habits", "learning Portuguese", 1, False)),
    _plan(4, None),
    _plan(5, _soft(5, "city", "Valencia", 2, True)),
    # employer: a soft mention at 6, then a change at 7 that supersedes it.
    _plan(6, _soft(6, "employer", "Northwind", 1, False)),
    _plan(7, None),
]
UNSETTLED_FACTS = [
    _fact("city", "Porto", 1, 5, 1),
    _fact("city", "Valencia", 5, None, 5),
    _fact("employer", "Acme", 0, 7, None),
    _fact("employer", "Globex", 7, None, 7),
    _fact("habits", "meditating daily", 0, None, 0),
]


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (2, set()),  # nothing mentioned yet
        (3, {("me", "city")}),  # Valencia said once, Porto still holds
        (4, {("me", "city"), ("me", "habits")}),  # a set slot: any pending value
        (6, {("me", "habits")}),  # Valencia established at 5
        (7, {("me", "employer"), ("me", "habits")}),  # said after Acme began
        (8, {("me", "habits")}),  # Globex came after the mention: a later change wins
    ],
)
def test_a_slot_is_unsettled_from_a_soft_mention_until_its_value_is_established(
    after: int, expected: set[tuple[str, str]]
) -> None:
    profiles = [
        EntityState("me", "human", "Ada Lind", {}),
        EntityState("bot", "assistant_agent", "Bot", {}),
    ]
    context = ProbeContext(profiles, UNSETTLED_PLANS, UNSETTLED_FACTS, {}, random.Random(0))
    assert context.unsettled(after) == expected


def test_no_probe_asks_the_current_value_of_an_unsettled_slot() -> None:
    # Half the sessions soft, four mentions to establish: many checkpoints find slots unsettled.
    world = generate_replicate(parse_scenario_text(TEST_SCENARIOS["test-habit-loop-c"]), "short", 0)
    builder = _builder(world)
    seen_unsettled = 0
    kept = {"temporal": 0, "negative": 0}
    for after in range(5, len(world.plans) + 1, 5):
        unsettled = builder.context.unsettled(after)
        seen_unsettled += len(unsettled)
        for probe in builder.checkpoint(ResolvedCheckpoint(after, ("recall", "action")), 0):
            if (probe.subject, probe.slot) in unsettled:
                # Only questions whose answer does not depend on the value holding now.
                assert probe.subtype in kept, probe
                kept[probe.subtype] += 1
    assert seen_unsettled > 0
    assert sum(kept.values()) > 0


def test_a_family_cannot_name_an_undeclared_subtype_as_asking_the_current_value() -> None:
    with pytest.raises(ValueError, match=r"asks_current names undeclared subtypes \['later'\]"):
        ProbeFamily(
            "odd",
            ("fact",),
            9,
            RECALL.generate,
            RECALL.audit,
            RECALL.judge,
            {},
            asks_current=frozenset({"later"}),
        )
