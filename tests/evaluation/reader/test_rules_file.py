"""The reader's rules file: every example passes, bad rows are refused, the version follows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift_pipeline.evaluation.reader import READER_VERSION, read_context
from drift_pipeline.evaluation.reader._read import reader_version
from drift_pipeline.evaluation.reader._rules import RULES, Example, load_rules

from .helpers import probe
from .rule_examples import example_failure, failing_examples


def _shipped_text() -> str:
    from importlib.resources import files

    return files("drift_pipeline.evaluation.reader").joinpath("rules.yaml").read_text("utf-8")


def _every_example() -> list[tuple[str, int, Example]]:
    cases = RULES.spec.rules
    return [(case.id, n, example) for case in cases for n, example in enumerate(case.examples)]


@pytest.mark.parametrize(
    ("rule_id", "number", "example"),
    _every_example(),
    ids=[f"{rule_id}#{number}" for rule_id, number, _ in _every_example()],
)
def test_every_example_of_every_rule_passes(rule_id: str, number: int, example: Example) -> None:
    assert example_failure(RULES, rule_id, example) is None


def test_every_rule_and_compound_case_has_an_example_and_every_frame_rule_reads_one() -> None:
    cases = RULES.spec.rules
    assert all(case.examples for case in cases)
    assert len(cases) > 150  # the reader's cue chain, its parts and its compound cases
    # Compound cases are checked by reading: their examples are contexts.
    assert all(e.context for case in RULES.spec.rules if case.code for e in case.examples)


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    text = _shipped_text()
    assert text.count(old) == 1, old
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_a_rule_whose_example_does_not_pass_fails_the_check(tmp_path: Path) -> None:
    # The year rule's example says "2027" is found; claim it finds "2028" instead.
    path = _edited(
        tmp_path,
        '- {text: "moved in 2027", matches: "2027"}',
        '- {text: "moved in 2027", matches: "2028"}',
    )
    failures = failing_examples(load_rules(path))
    assert len(failures) == 1
    assert "rule year:" in failures[0] and "'2027'" in failures[0]


def test_a_reading_example_with_the_wrong_frame_fails_the_check(tmp_path: Path) -> None:
    path = _edited(
        tmp_path,
        'value: "Leeds", question: "Which town does Rhiannon live in now?", slot: "city", '
        'frame: "not_about_subject"}',
        'value: "Leeds", question: "Which town does Rhiannon live in now?", slot: "city", '
        'frame: "asserted"}',
    )
    failures = failing_examples(load_rules(path))
    assert [f.split(":")[1].strip() for f in failures] == ["rule other-speaker"]


def test_a_rule_without_examples_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "version: 1\nrules:\n  - id: lonely\n    purpose: a rule with nothing to show\n"
        "    pattern: 'x'\n    examples: []\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError) as error:
        load_rules(path)
    message = str(error.value)
    assert "\n" not in message
    assert "rule 'lonely': examples:" in message


def test_a_row_without_a_pattern_needs_the_states_it_fires_on(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "version: 1\nrules:\n  - id: empty\n    purpose: a row that says nothing\n"
        "    frame: aside\n    side: sentence\n"
        "    examples:\n      - {context: 'x', value: 'x', frame: aside}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"^[^\n]*rule 'empty': row: .*or only states"):
        load_rules(path)
    # The shipped rows of states alone fire on them: another speaker's line is not the subject's.
    row = RULES.rule("other-speaker")
    assert row.pattern is None and row.when == ["other-speaker"]


def test_a_malformed_row_gives_one_line_naming_the_rule_and_the_field(tmp_path: Path) -> None:
    path = _edited(tmp_path, "  - id: sarcasm\n", "  - id: sarcasm\n    colour: red\n")
    with pytest.raises(ValueError, match=r"^.*rules\.yaml: rule 'sarcasm': colour: Extra"):
        load_rules(path)
    broken = _edited(tmp_path, "pattern: '[^\\W_]'", "pattern: '[^\\W_'")
    with pytest.raises(ValueError, match=r"rule 'alnum': pattern: unterminated character set"):
        load_rules(broken)


def test_a_compound_case_may_only_use_rules_that_exist(tmp_path: Path) -> None:
    path = _edited(tmp_path, "uses: [ack]", "uses: [acknowledgement]")
    with pytest.raises(ValueError, match=r"rule 'assistant-acknowledges': uses: no rule"):
        load_rules(path)
    # A compound case is decided in code: a pattern of its own would never be read.
    path = _edited(tmp_path, "uses: [ack]", "uses: [ack]\n    pattern: 'noted'")
    with pytest.raises(ValueError, match=r"rule 'assistant-acknowledges': row: .*no body"):
        load_rules(path)


def test_the_reader_version_carries_the_rules_files_hash(tmp_path: Path) -> None:
    assert reader_version(RULES) == READER_VERSION
    assert RULES.digest in READER_VERSION
    # Any change of content, even a comment, makes another reader version.
    path = _edited(tmp_path, "version: 1\n", "version: 1\n# edited\n")
    changed = load_rules(path)
    assert changed.digest != RULES.digest
    assert reader_version(changed) != READER_VERSION


def test_the_rationale_names_the_rule_that_decided() -> None:
    reading = read_context("user: I used to work at Kestrel Aerospace", probe())
    assert reading.answer is None
    assert reading.mentions[0].rule == "retract-window"
    assert "rule retract-window" in reading.rationale
    stated = read_context("user: I work at Kestrel Aerospace", probe())
    assert "rule stated-as-current" in stated.rationale


def test_taking_back_and_never_meaning_are_one_rule() -> None:
    rule = RULES.rule("take-back")
    assert rule.alternatives is not None
    phrases = [a.p for a in rule.alternatives]
    assert len(phrases) == len(set(phrases))  # each phrase written once
    never_meant = RULES.alternation("take-back", lambda a: a.unsaid)
    next_line = RULES.alternation("take-back", lambda a: a.next_line)
    assert never_meant.search("jk april fools") and next_line.search("jk april fools")
    assert never_meant.search("that was a joke") and not next_line.search("that was a joke")
    assert next_line.search("changed my mind") and not never_meant.search("changed my mind")
