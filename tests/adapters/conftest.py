"""Shared by the adapter tests: a small world with two assistants in every session."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_scenario

from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import generate_worlds

SCENARIO_ID = "adapters-t"

SCENARIO = f"""\
id: {SCENARIO_ID}
paradigm: user_assistant
seed: 4711
replicates: 2
horizon:
  short: {{ sessions: 6, session_gap_days: 9 }}
noise_ratio: 0.3
entities:
  - id: principal
    type: human
    profile:
      big_five: {{ O: 0.6, C: 0.4, E: 0.5, A: 0.7, N: 0.3 }}
  - id: work_assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
  - id: home_assistant
    type: assistant_agent
    capability_profile: {{ context_window: 32000 }}
topology:
  - session_range: [0, -1]
    active: [principal, work_assistant, home_assistant]
    pattern: linear
checkpoints:
  - {{ after_session: 6, probe_types: [recall] }}
"""


@pytest.fixture(scope="session")
def two_agent_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The generated world's root and its scenario id (generated once per test session)."""
    base = tmp_path_factory.mktemp("adapters")
    path = write_scenario(base / "scenarios", SCENARIO)
    generate_worlds([load_scenario(path)], base / "data")
    return base / "data", SCENARIO_ID
