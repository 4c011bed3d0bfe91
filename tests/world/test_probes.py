"""The generic probe loop: families in registration order, groups sampled in a fixed order."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest
from helpers import TEST_SCENARIOS

from drift_pipeline.scenario import ResolvedCheckpoint, parse_scenario_text
from drift_pipeline.world import Probe, WorldReplicate, generate_replicate
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
    monkeypatch.setattr(_registry, "_TARGETS", dict(_registry._TARGETS))
    register_probe_family("bad", f"{__name__}:{family}")
    with pytest.raises(ValueError, match=problem):
        _builder(replicate).checkpoint(ResolvedCheckpoint(10, ("bad",)), 0)
