"""Loading scenario files in-process: the canonical example, the corpus, and YAML corner cases."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from drift_pipeline.entities.assistant import AssistantSpec
from drift_pipeline.entities.human import HumanSpec
from drift_pipeline.scenario import (
    Problem,
    ScenarioError,
    load_scenario,
    parse_scenario,
    parse_scenario_text,
    scenario_files,
)

from .corpus import CANONICAL, Expected, malformed, valid

BASE = CANONICAL.read_text()


def problems_of(text: str) -> list[Problem]:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario_text(text, "s.yaml")
    return caught.value.problems


def test_spec_example_loads_unchanged() -> None:
    loaded = load_scenario(CANONICAL)
    spec = loaded.spec

    assert loaded.sha256 == hashlib.sha256(CANONICAL.read_bytes()).hexdigest()
    assert (spec.id, spec.version, spec.paradigm) == ("ua-baseline-001", "1", "user_assistant")
    horizons = [(name, h.sessions, h.gap) for name, h in spec.horizon.items()]
    assert horizons == [
        ("short", 30, timedelta(hours=8)),
        ("medium", 200, timedelta(days=3)),
        ("long", 1000, timedelta(days=14)),
    ]
    assert spec.noise_ratio == pytest.approx(0.70)
    principal, assistant = spec.entities
    assert isinstance(principal, HumanSpec) and isinstance(assistant, AssistantSpec)
    big_five = principal.profile.big_five.model_dump()
    assert big_five == {"O": 0.7, "C": 0.5, "E": 0.4, "A": 0.8, "N": 0.3}
    assert principal.profile.event_distribution == {
        "job_change": 0.02, "opinion_shift": 0.05, "habit_form": 0.10,
    }  # fmt: skip
    assert assistant.capability_profile.tool_access == ["search", "code_interpreter"]
    assert assistant.capability_profile.context_window == 200_000
    (entry,) = spec.topology
    assert (entry.session_range, entry.active, entry.pattern) == (
        (0, -1), ["principal", "assistant"], "linear",
    )  # fmt: skip
    assert [(c.after_session, c.probe_types) for c in spec.checkpoints] == [
        (30, ["recall", "action"]),
        (200, ["recall", "action", "revision"]),
        (1000, ["recall", "action", "revision"]),
    ]


@pytest.mark.parametrize("file", valid(), ids=lambda file: file.name)
def test_valid_fixture_loads(file: Path) -> None:
    assert load_scenario(file).spec.id == yaml.safe_load(file.read_text())["id"]


@pytest.mark.parametrize("case", malformed(), ids=lambda case: case.kind)
def test_malformed_fixture_names_field_and_line(case: Expected) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(case.file)

    problems = caught.value.problems
    assert any(
        (p.path, p.line) == (case.path, case.line) and case.message in p.message for p in problems
    ), problems
    assert caught.value.lines() == [p.render(str(case.file)) for p in problems]
    assert all("\n" not in line for line in caught.value.lines())


def test_data_without_text_has_paths_but_no_lines() -> None:
    data = yaml.safe_load(BASE)
    data["horizon"]["short"]["sessions"] = 0

    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data, "in-memory")

    assert caught.value.problems == [
        Problem("horizon.short.sessions", "must be greater than 0 (got 0)")
    ]
    assert str(caught.value) == "in-memory: horizon.short.sessions: must be greater than 0 (got 0)"


def test_problems_come_in_file_order() -> None:
    text = BASE.replace("noise_ratio: 0.70", "noise_ratio: 1.5").replace("O: 0.7", "O: -1")
    text = text.replace("paradigm: user_assistant", "paradigm: chat")

    problems = problems_of(text)

    paths = [p.path for p in problems]
    assert paths == ["paradigm", "noise_ratio", "entities[0].profile.big_five.O"]
    assert [p.line for p in problems] == sorted(p.line or 0 for p in problems)


def test_missing_nested_field_is_placed_on_its_parent() -> None:
    text = BASE.replace(
        "short: { sessions: 30, session_gap_hours: 8 }", "short:\n    session_gap_hours: 8"
    )

    assert problems_of(text) == [Problem("horizon.short.sessions", "required field is missing", 6)]


def test_block_value_is_placed_on_its_key_line() -> None:
    text = BASE.replace(
        "big_five: { O: 0.7, C: 0.5, E: 0.4, A: 0.8, N: 0.3 }", "big_five:\n        O: 2"
    )

    (problem,) = problems_of(text)

    assert (problem.path, problem.line) == ("entities[0].profile.big_five.O", 21)


# --- strict values -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("sessions: 30,", 'sessions: "30",', "horizon.short.sessions"),
        ("sessions: 30,", "sessions: 30.0,", "horizon.short.sessions"),
        ("noise_ratio: 0.70", "noise_ratio: '0.7'", "noise_ratio"),
        ("O: 0.7", "O: yes", "entities[0].profile.big_five.O"),
        (
            "context_window: 200000",
            "context_window: on",
            "entities[1].capability_profile.context_window",
        ),
    ],
)
def test_values_are_read_as_written_not_coerced(old: str, new: str, path: str) -> None:
    (problem,) = problems_of(BASE.replace(old, new))

    assert problem.path == path
    assert problem.message.startswith("must be a valid ")


def test_numbers_where_text_is_expected_and_ints_where_floats_are() -> None:
    spec = parse_scenario_text(BASE.replace("noise_ratio: 0.70", "noise_ratio: 0\nversion: 2.1"))

    assert spec.version == "2.1"
    assert spec.noise_ratio == 0.0


def test_integer_mapping_key_is_shown_as_a_key() -> None:
    (problem,) = problems_of(BASE.replace("job_change: 0.02", "1: 0.02"))

    assert (problem.path, problem.line) == ("entities[0].profile.event_distribution.1", 23)


# --- YAML corner cases -------------------------------------------------------------------------


def test_merge_key_override_is_not_a_duplicate() -> None:
    text = BASE.replace("short: { sessions", "short: &short { sessions").replace(
        "medium: { sessions: 200, session_gap_days: 3 }", "medium: { <<: *short, sessions: 200 }"
    )

    spec = parse_scenario_text(text)

    assert spec.horizon.medium is not None
    assert (spec.horizon.medium.sessions, spec.horizon.medium.session_gap_hours) == (200, 8)


def test_error_in_merged_override_points_at_the_override() -> None:
    text = BASE.replace("short: { sessions", "short: &short { sessions").replace(
        "medium: { sessions: 200, session_gap_days: 3 }", "medium: { <<: *short, sessions: 0 }"
    )

    (problem,) = problems_of(text)

    assert (problem.path, problem.line) == ("horizon.medium.sessions", 8)


def test_syntax_error_names_where_the_open_bracket_is() -> None:
    (problem,) = problems_of(BASE.replace("session_gap_hours: 8 }", "session_gap_hours: 8"))

    assert problem.line == 8
    assert problem.message.startswith("YAML syntax error, column ")
    assert "while parsing a flow mapping from line 6" in problem.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: !!python/object/apply:os.system [echo hi]", "could not determine a constructor"),
        ("a: 1\n---\nb: 2\n", "expected a single document"),
        ("? [a, b]\n: 1\n", "found unhashable key"),
        ("a: 'open\n", "found unexpected end of stream"),
    ],
)
def test_unsafe_or_broken_yaml_is_a_syntax_problem(text: str, fragment: str) -> None:
    (problem,) = problems_of(text)

    assert problem.path == ""
    assert problem.line is not None
    assert fragment in problem.message


def test_deep_nesting_is_reported_not_raised() -> None:
    (problem,) = problems_of("a: " + "[" * 5000)

    assert problem == Problem("", "YAML nesting is too deep for a scenario file")


def test_self_referencing_alias_is_reported_not_raised() -> None:
    text = "id: x\nparadigm: multi_peer\nnoise_ratio: 0.7\n"
    text += "horizon: {short: {sessions: 3, session_gap_days: 1}}\nentities: &e [*e]\n"

    (problem,) = problems_of(text)

    assert (problem.path, problem.line) == ("entities[0]", 5)


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    file = tmp_path / "bom.yaml"
    file.write_bytes(b"\xef\xbb\xbf" + CANONICAL.read_bytes())

    assert load_scenario(file).spec.id == "ua-baseline-001"


@pytest.mark.parametrize("content", [b"", b"# only a comment\n", b"---\n", b"~\n"])
def test_empty_documents(tmp_path: Path, content: bytes) -> None:
    file = tmp_path / "empty.yaml"
    file.write_bytes(content)

    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)

    (problem,) = caught.value.problems
    assert problem.path == ""
    assert problem.message.startswith("empty scenario file; expected a mapping with id, paradigm")


@pytest.mark.parametrize(
    ("text", "kind"), [("just text\n", "a string"), ("42\n", "a number"), ("- a\n", "a list")]
)
def test_top_level_must_be_a_mapping(text: str, kind: str) -> None:
    (problem,) = problems_of(text)

    assert problem == Problem("", f"top level must be a mapping of fields, got {kind}", 1)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path)

    (problem,) = caught.value.problems
    assert problem.message.startswith("cannot read file: ")


# --- scenario_files ----------------------------------------------------------------------------


def test_scenario_files_expands_folders_and_keeps_files(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.yml", "ablations.yaml", "notes.txt"):
        (tmp_path / name).write_text("")
    explicit = tmp_path / "notes.txt"

    found = scenario_files([tmp_path, explicit])

    assert found == [tmp_path / "a.yml", tmp_path / "b.yaml", explicit]
