"""The scenario models on their own: defaults, derived values and single-field rules."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from drift_pipeline.scenario import (
    PARADIGM_PROBE_TYPES,
    CheckpointSpec,
    HorizonSpec,
    Problem,
    ScenarioError,
    TopologyEntry,
    json_schema,
    parse_scenario,
)

from .corpus import CANONICAL


def canonical(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CANONICAL.read_text())
    data.update(changes)
    return data


def only_problem(data: dict[str, Any]) -> Problem:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data)
    (problem,) = caught.value.problems
    return problem


def test_defaults() -> None:
    spec = parse_scenario(canonical())

    assert spec.version == "1"
    assert spec.seed is None
    assert spec.replicates == 4
    assert spec.soft_signal_mentions == 3
    assert CheckpointSpec(every=5).probe_types == ["recall", "action", "revision"]
    assert TopologyEntry(session_range=(0, -1), active=["a"]).pattern == "linear"


@pytest.mark.parametrize(("written", "text"), [(2, "2"), (1.1, "1.1"), ("2024.1", "2024.1")])
def test_version_is_text(written: object, text: str) -> None:
    assert parse_scenario(canonical(version=written)).version == text


def test_horizon_gap_and_order() -> None:
    spec = parse_scenario(canonical())

    assert [name for name, _ in spec.horizon.items()] == ["short", "medium", "long"]
    assert HorizonSpec(sessions=3, session_gap_hours=1.5).gap == timedelta(minutes=90)
    assert HorizonSpec(sessions=3, session_gap_days=2).gap == timedelta(days=2)


def test_entity_lookup() -> None:
    spec = parse_scenario(canonical())

    assert spec.entity("assistant").type == "assistant_agent"
    with pytest.raises(KeyError, match="no entity 'nobody'"):
        spec.entity("nobody")


# --- tier ratios -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratios", "expected"),
    [
        ({"noise_ratio": 0.7}, (0.1, 0.2, 0.7)),
        ({"noise_ratio": 0.5, "signal_ratio": 0.2}, (0.2, 0.3, 0.5)),
        ({"noise_ratio": 0.9, "soft_ratio": 0.04}, (0.06, 0.04, 0.9)),
        ({"noise_ratio": 0.6, "signal_ratio": 0.1, "soft_ratio": 0.3}, (0.1, 0.3, 0.6)),
        ({"noise_ratio": 0.0}, (1 / 3, 2 / 3, 0.0)),
        ({"noise_ratio": 0.8, "signal_ratio": 0.2}, (0.2, 0.0, 0.8)),
    ],
)
def test_tier_ratios(ratios: dict[str, float], expected: tuple[float, float, float]) -> None:
    assert parse_scenario(canonical(**ratios)).tier_ratios() == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ratios", "path", "message"),
    [
        ({"signal_ratio": 0.5}, "signal_ratio", "must be at most 1 - noise_ratio = 0.3 (got 0.5)"),
        ({"soft_ratio": 0.31}, "soft_ratio", "must be at most 1 - noise_ratio = 0.3 (got 0.31)"),
        (
            {"signal_ratio": 0.1, "soft_ratio": 0.1},
            "soft_ratio",
            "signal_ratio + soft_ratio + noise_ratio must be 1 (got 0.1 + 0.1 + 0.7)",
        ),
    ],
)
def test_ratios_that_do_not_add_up_name_a_field(
    ratios: dict[str, float], path: str, message: str
) -> None:
    assert only_problem(canonical(**ratios)) == Problem(path, message)


def test_ratio_rule_waits_for_a_valid_noise_ratio() -> None:
    # Only the broken field is reported, not a confusing sum built from it.
    problem = only_problem(canonical(noise_ratio=2.0, signal_ratio=0.1, soft_ratio=0.1))

    assert problem.path == "noise_ratio"


def test_tier_ratios_still_checks_an_unvalidated_spec() -> None:
    valid = parse_scenario(canonical())
    spec = valid.model_copy(update={"signal_ratio": 0.5, "soft_ratio": 0.5})  # not validated

    with pytest.raises(ValueError, match="must be 1"):
        spec.tier_ratios()


# --- single-field rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("session_range", "message"),
    [
        ([-1, 5], "the first session index must be ≥ 0"),
        ([5, -2], "the last session index must be -1 or ≥ the first"),
        ([5], "expected 2 items (got 1)"),
        ([], "expected 2 items (got 0)"),
        ([1, 2, 3], "expected at most 2 items (got 3)"),
        (5, "expected a list (got 5)"),
    ],
)
def test_session_range(session_range: object, message: str) -> None:
    topology = [{"session_range": session_range, "active": ["principal"]}]

    problem = only_problem(canonical(topology=topology))

    assert problem.path == "topology[0].session_range"
    assert message in problem.message


def test_session_range_accepts_lists_and_tuples() -> None:
    entry = TopologyEntry.model_validate({"session_range": [3, 9], "active": ["a"]}, strict=True)

    assert entry.session_range == (3, 9)


def test_checkpoint_needs_one_trigger() -> None:
    with pytest.raises(ValidationError, match="give exactly one of after_session or every"):
        CheckpointSpec()


def test_paradigm_probe_types_nest() -> None:
    # Every paradigm's probe types are a subset of multi_peer's, which orders them all.
    everything = PARADIGM_PROBE_TYPES["multi_peer"]
    assert all(set(types) <= set(everything) for types in PARADIGM_PROBE_TYPES.values())


def test_json_schema_in_process() -> None:
    schema = json_schema()

    assert schema["title"] == "DRIFT scenario"
    assert "$defs" in schema
