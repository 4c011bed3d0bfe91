"""Fixtures of the probe family tests: small generated worlds, made once per package."""

from __future__ import annotations

import pytest
from helpers import TEST_SCENARIOS

from drift_pipeline.scenario import parse_scenario_text
from drift_pipeline.world import WorldReplicate, generate_replicate

# Together these generate every built-in family's every subtype.
_SMALL = (
    ("test-commuter-a", "short"),
    ("test-commuter-a", "medium"),
    ("test-two-desks-b", "medium"),
)


@pytest.fixture(scope="package")
def small_worlds() -> list[WorldReplicate]:
    """Replicate 0 of a few small test worlds."""
    return [
        generate_replicate(parse_scenario_text(TEST_SCENARIOS[scenario]), horizon, 0)
        for scenario, horizon in _SMALL
    ]


@pytest.fixture(scope="package")
def replicate(small_worlds: list[WorldReplicate]) -> WorldReplicate:
    """The commuter's medium world."""
    return small_worlds[1]
