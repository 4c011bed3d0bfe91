"""Derived views: checkpoints per horizon, who is active per session, the root seed."""

from __future__ import annotations

from typing import Any

import yaml

from drift_pipeline.scenario import (
    ResolvedCheckpoint,
    ScenarioSpec,
    SessionTopology,
    checkpoints_for,
    load_scenario,
    parse_scenario,
    root_seed,
    topology_for,
)

from .corpus import CANONICAL


def spec_with(**changes: Any) -> ScenarioSpec:
    data: dict[str, Any] = yaml.safe_load(CANONICAL.read_text())
    data.update(changes)
    return parse_scenario(data)


def test_canonical_checkpoints_apply_to_each_horizon_that_reaches_them() -> None:
    spec = load_scenario(CANONICAL).spec

    assert checkpoints_for(spec, "short") == [ResolvedCheckpoint(30, ("recall", "action"))]
    assert checkpoints_for(spec, "medium") == [
        ResolvedCheckpoint(30, ("recall", "action")),
        ResolvedCheckpoint(200, ("recall", "action", "revision")),
    ]
    assert [c.after_session for c in checkpoints_for(spec, "long")] == [30, 200, 1000]


def test_final_session_is_always_a_checkpoint_with_declared_types() -> None:
    spec = spec_with(checkpoints=[{"after_session": 10, "probe_types": ["revision", "recall"]}])

    assert checkpoints_for(spec, "short") == [
        ResolvedCheckpoint(10, ("recall", "revision")),
        ResolvedCheckpoint(30, ("recall", "revision")),
    ]


def test_without_checkpoints_the_final_session_asks_every_paradigm_type() -> None:
    spec = spec_with(checkpoints=[])

    assert checkpoints_for(spec, "medium") == [
        ResolvedCheckpoint(200, ("recall", "action", "revision"))
    ]


def test_every_and_after_session_merge_at_the_same_session() -> None:
    spec = spec_with(
        checkpoints=[
            {"every": 10, "probe_types": ["recall"]},
            {"after_session": 20, "probe_types": ["revision", "action"]},
        ]
    )

    assert checkpoints_for(spec, "short") == [
        ResolvedCheckpoint(10, ("recall",)),
        ResolvedCheckpoint(20, ("recall", "action", "revision")),
        ResolvedCheckpoint(30, ("recall",)),
    ]


def test_every_that_does_not_divide_the_horizon_still_ends_with_a_checkpoint() -> None:
    spec = spec_with(checkpoints=[{"every": 7, "probe_types": ["action"]}])

    assert [c.after_session for c in checkpoints_for(spec, "short")] == [7, 14, 21, 28, 30]


def test_topology_defaults_to_everyone_linear() -> None:
    spec = spec_with(topology=[])

    assert topology_for(spec, 3) == [SessionTopology(("principal", "assistant"), "linear")] * 3


def test_later_topology_entries_override_and_ranges_clip() -> None:
    spec = spec_with(
        paradigm="multi_peer",
        topology=[
            {"session_range": [0, -1], "active": ["principal", "assistant"]},
            {"session_range": [2, 3], "active": ["principal"]},
            {"session_range": [4, 99], "active": ["assistant"]},
        ],
    )

    active = [session.active for session in topology_for(spec, 6)]

    assert active == [
        ("principal", "assistant"),
        ("principal", "assistant"),
        ("principal",),
        ("principal",),
        ("assistant",),
        ("assistant",),
    ]


def test_root_seed_is_explicit_or_derived_from_the_id() -> None:
    assert root_seed(spec_with(seed=42)) == 42
    derived = root_seed(spec_with())
    assert derived == root_seed(spec_with())
    assert derived != root_seed(spec_with(id="ua-baseline-002"))
    assert 0 <= derived < 2**63
