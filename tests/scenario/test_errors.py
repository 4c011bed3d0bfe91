"""How problems are worded and rendered: one line, the field path, what is allowed."""

from __future__ import annotations

import pytest

from drift_pipeline.scenario import Problem, ScenarioError, parse_scenario_text
from drift_pipeline.scenario._errors import format_path

from .corpus import CANONICAL

BASE = CANONICAL.read_text()


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario_text(text, "s.yaml")
    return caught.value.problems


def only_problem(text: str) -> Problem:
    (problem,) = problems_of(text)
    return problem


def test_format_path() -> None:
    assert format_path(()) == ""
    loc = ("entities", 1, "profile", "big_five", "O")
    assert format_path(loc) == "entities[1].profile.big_five.O"
    assert format_path(("topology", 0, "active", 2)) == "topology[0].active[2]"


def test_render() -> None:
    assert Problem("noise_ratio", "bad", 12).render("a.yaml") == "a.yaml:12: noise_ratio: bad"
    assert Problem("noise_ratio", "bad").render("a.yaml") == "a.yaml: noise_ratio: bad"
    assert Problem("", "empty", None).render("a.yaml") == "a.yaml: empty"


def test_scenario_error_lines() -> None:
    error = ScenarioError("a.yaml", [Problem("x", "one", 1), Problem("", "two")])

    assert error.lines() == ["a.yaml:1: x: one", "a.yaml: two"]
    assert str(error) == "a.yaml:1: x: one\na.yaml: two"


@pytest.mark.parametrize(
    ("old", "new", "path", "allowed"),
    [
        (
            "short: { sessions: 30,",
            "short: { sesions: 30,",
            "horizon.short.sesions",
            "sessions, session_gap_hours, session_gap_days",
        ),
        (
            "{ after_session: 30,",
            "{ after: 30,",
            "checkpoints[0].after",
            "after_session, every, probe_types",
        ),
        (
            "pattern: linear }",
            "pattern: linear, range: 3 }",
            "topology[0].range",
            "session_range, active, pattern, every, offset",
        ),
        (
            "context_window: 200000",
            "context_windw: 200000",
            "entities[1].capability_profile.context_windw",
            "context_window, tool_access, response_style",
        ),
        (
            "    type: assistant_agent",
            "    type: assistant_agent\n    role: helper",
            "entities[1].role",
            "id, type, name, capability_profile, event_distribution",
        ),
    ],
)
def test_unknown_key_lists_the_keys_of_its_own_model(
    old: str, new: str, path: str, allowed: str
) -> None:
    # A misspelt required key also leaves that key missing; look at the unknown one.
    (problem,) = [p for p in problems_of(BASE.replace(old, new)) if p.path == path]

    assert problem.message == f"unknown key {path.rsplit('.', 1)[-1]!r}; allowed: {allowed}"


def test_unknown_key_in_an_entity_of_unknown_type_reports_the_type() -> None:
    problem = only_problem(BASE.replace("type: assistant_agent", "type: robot"))

    assert problem.path == "entities[1].type"
    assert problem.message.startswith("unknown entity type 'robot'; allowed: human, ")


@pytest.mark.parametrize(
    ("old", "new", "path", "allowed"),
    [
        (
            "big_five:",
            "communication_style: { verbosity: chatty }\n      big_five:",
            "entities[0].profile.communication_style.verbosity",
            "terse, moderate, verbose",
        ),
        (
            "probe_types: [recall, action] }",
            "probe_types: [recall, actoin] }",
            "checkpoints[0].probe_types[1]",
            "recall, action, revision, frontier, consistency, attribution, canary, handoff",
        ),
    ],
)
def test_unknown_value_lists_the_allowed_values(
    old: str, new: str, path: str, allowed: str
) -> None:
    problem = only_problem(BASE.replace(old, new, 1))

    assert problem.path == path
    assert problem.message.endswith(f"; allowed: {allowed}")


def test_entity_type_not_text() -> None:
    problem = only_problem(BASE.replace("type: assistant_agent", "type: 7"))

    assert (problem.path, problem.line) == ("entities[1].type", 31)
    assert problem.message.startswith("unknown entity type 7; allowed: ")


def test_long_values_are_shortened() -> None:
    problem = only_problem(BASE.replace("paradigm: user_assistant", "paradigm: " + "x" * 200))

    assert "'" + "x" * 50 in problem.message
    assert "x" * 100 not in problem.message
