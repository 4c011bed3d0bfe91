"""A world of the tests' own (in no scenario folder) and a small run on it, shared by modules.

Two horizons of a dozen or two sessions, one replicate: the smallest world on which the sanity
floor, per-horizon rows, records, reports and drill-downs all have something to show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from drift_pipeline.cli import main

SCENARIO = """\
id: report-tiny
version: 1
seed: 90817
paradigm: user_assistant
replicates: 1
horizon:
  short: { sessions: 12, session_gap_days: 2 }
  medium: { sessions: 20, session_gap_days: 3 }
noise_ratio: 0.4
entities:
  - id: principal
    type: human
    name: Ilse Varga
    profile:
      big_five: { O: 0.5, C: 0.5, E: 0.5, A: 0.5, N: 0.5 }
      event_distribution:
        job_change: 0.10
        relocation: 0.08
        preference_reveal: 0.25
        habit_form: 0.15
        opinion_shift: 0.10
  - id: assistant
    type: assistant_agent
    capability_profile: { context_window: 50000 }
checkpoints:
  - { every: 6, probe_types: [recall, action, revision] }
"""
ARMS = ("fact_store", "sentence_log", "amnesiac", "full_context")
"""A reference memory, the sanity floor, the amnesiac and the whole transcript."""


def invoke(*args: str) -> Result:
    """``drift ARGS`` in this process (the CLI is what is tested, not a subprocess)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run_world(folder: Path, *args: str) -> Result:
    """``drift run`` of the tiny world into ``folder/data`` with ``args`` (any exit status)."""
    folder.mkdir(parents=True, exist_ok=True)
    scenario = folder / "report-tiny.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    return invoke("run", str(scenario), "--out", str(folder / "data"), *args)


def run_tiny(folder: Path, *extra: str) -> tuple[Result, dict[str, Any]]:
    """``drift run`` of the tiny world with :data:`ARMS` into ``folder/data``, and its summary."""
    summary = folder / "summary.json"
    backends = [arg for name in ARMS for arg in ("--backend", name)]
    result = run_world(folder, "--json", str(summary), *backends, *extra)
    assert result.exit_code == 0, result.output
    return result, json.loads(summary.read_text(encoding="utf-8"))
