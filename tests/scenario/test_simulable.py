"""Scenarios that validate as files but cannot be simulated are refused, one line each.

Each is written here as a user would write it; `drift validate` and `drift generate` both exit
2 with one line naming the field and the fix, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drift_pipeline.cli import main

HEAD = "horizon:\n  short: { sessions: 20, session_gap_hours: 4 }\nnoise_ratio: 0.6\n"

CASES = {
    "coding-no-principal": (
        "paradigm: coding_agent\n" + HEAD + "entities:\n"
        "  - { id: coder, type: coding_agent }\n  - { id: reviewer, type: coding_agent }\n",
        "principal: a coding_agent world without a human needs a principal: add 'principal: <id>'",
    ),
    "crawler-no-principal": (
        "paradigm: crawler_agent\n" + HEAD + "entities:\n"
        "  - { id: crawler, type: tool_agent }\n  - { id: notes, type: assistant_agent }\n",
        "principal: a crawler_agent world without a human needs a principal",
    ),
    "agents-no-principal": (
        "paradigm: multi_peer\n" + HEAD + "entities:\n"
        "  - { id: crawler, type: tool_agent }\n  - { id: coder, type: coding_agent }\n",
        "principal: a multi_peer world without a human needs a principal",
    ),
    "principal-undeclared": (
        "paradigm: multi_peer\nprincipal: boss\n" + HEAD + "entities:\n"
        "  - { id: crawler, type: tool_agent }\n  - { id: coder, type: coding_agent }\n",
        "principal: entity 'boss' is not declared; declared: crawler, coder",
    ),
    "canary-no-private-session": (
        "paradigm: multi_peer\n" + HEAD + "entities:\n"
        "  - { id: ana, type: human }\n  - { id: ben, type: human }\n"
        "  - { id: desk, type: assistant_agent }\n"
        "topology:\n  - { session_range: [0, -1], active: [ana, ben, desk], pattern: mesh }\n"
        "checkpoints:\n  - { every: 10, probe_types: [recall, canary] }\n",
        "checkpoints[0].probe_types[1]: canary probes need a session some entity does not "
        "attend, and every session has every entity; add a topology entry",
    ),
    "weights-sum-to-five": (
        "paradigm: user_assistant\n" + HEAD + "entities:\n"
        "  - id: me\n    type: human\n    profile:\n      event_distribution:\n"
        "        { job_change: 1, relocation: 1, health_event: 1, opinion_shift: 1,"
        " relationship_change: 1 }\n  - { id: desk, type: assistant_agent }\n",
        "entities[0].profile.event_distribution: signal event weights add up to 5.05",
    ),
    "horizons-out-of-order": (
        "paradigm: user_assistant\nhorizon:\n  short: { sessions: 300, session_gap_hours: 4 }\n"
        "  medium: { sessions: 40, session_gap_days: 2 }\nnoise_ratio: 0.6\nentities:\n"
        "  - { id: me, type: human }\n  - { id: desk, type: assistant_agent }\n",
        "horizon.medium.sessions: 40 sessions is not more than horizon.short's 300; horizons "
        "run short < medium < long",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_unsimulable_scenario_is_one_line_and_exit_2(tmp_path: Path, name: str) -> None:
    text, expected = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"id: {name}\n{text}", encoding="utf-8")
    runner = CliRunner()
    for args in (["validate", str(path)], ["generate", str(path), "--out", str(tmp_path / "out")]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, lines
        assert expected in lines[0], lines[0]
        assert lines[0].startswith(str(path))
    assert not (tmp_path / "out").exists()


def test_the_canonical_multi_peer_scenarios_are_simulable() -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    result = CliRunner().invoke(main, ["validate", *map(str, sorted(root.glob("mp-*.yaml")))])
    assert result.exit_code == 0, result.output
