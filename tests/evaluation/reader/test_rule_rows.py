"""The reader's rows are applied as they read: side, scope, terminator, conditions and cue."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from drift_pipeline.evaluation.reader._rules import RULES, load_rules
from drift_pipeline.evaluation.reader._scope import MentionKey, Scope, _step, asked_relations


def _mention(line: str, word: str = "kestrel", *, next_value: str = "", **fields: object) -> Scope:
    """The subject's mention of ``word`` on ``line`` (a following ``next_value`` ends it)."""
    start = line.index(word)
    values: dict[str, object] = {
        "folded": line,
        "start": start,
        "end": start + len(word),
        "window_start": 0,
        "next_start": line.index(next_value, start + 1) if next_value else len(line),
        "in_aside": False,
        "speaker": "subject",
        "head": "",
        "phrase": "Kestrel",
        "value": "Kestrel",
        "names": frozenset({"rhiannon"}),
        "other_name_at": -1,
        "asked": frozenset(),
        "asked_place": False,
    }
    values.update(fields)
    return Scope(MentionKey(**values))  # type: ignore[arg-type]


def _applied(rule_id: str, line: str, **changes: object) -> tuple[str, str, str] | None:
    scope = changes.pop("scope", None)
    row = RULES.rule(rule_id).model_copy(update=changes)
    return _step(row)(scope if isinstance(scope, Scope) else _mention(line))


def test_a_row_reads_only_its_own_side_of_the_value() -> None:
    # joke-right reads the words after the value: "jk" before it takes nothing back.
    assert _applied("joke-right", "kestrel jk") == ("retracted", " jk", "joke-right")
    assert _applied("joke-right", "jk kestrel") is None
    # Several sides are tried in turn: corrected reads the clause after, then the tail.
    tail_only = "kestrel here (that was wrong)"
    assert _applied("corrected", tail_only) == ("retracted", "corrected", "corrected")
    assert _applied("corrected", tail_only, side="after") is None


def test_a_row_reaches_no_further_than_its_scope() -> None:
    near = "i used to work at kestrel"
    far = "i used to go running every single morning near kestrel"
    assert _applied("retract-window", near) == ("retracted", "used to", "retract-window")
    assert _applied("retract-window", far) is None  # seven words apart, the scope is five
    assert _applied("retract-window", far, max_scope=7) is not None
    assert _applied("retract-window", near, max_scope=1) is None


def test_a_row_stops_at_its_terminator() -> None:
    parted = "i used to, kestrel"
    assert _applied("retract-window", parted) is None  # the pause parts the cue from the value
    assert _applied("retract-window", parted, terminated_by=None) is not None
    # Without a terminator or a scope the row searches its whole side.
    far = "i used to go running every single morning near kestrel"
    assert _applied("retract-window", far, max_scope=None, terminated_by=None) is not None


def test_the_next_value_ends_a_row_that_reads_after_the_value() -> None:
    line = "kestrel, york fell through"
    before_york = _mention(line, next_value="york")
    assert _applied("ended-right", line) is not None
    assert _applied("ended-right", line, scope=before_york) is None  # the ending is York's


def test_an_exception_keeps_a_row_from_applying() -> None:
    said = "i wouldn't call myself kestrel"
    assert _applied("denial", said) == ("negated", "wouldn't call myself", "denial")
    negative = _mention(said, value="no kestrel")
    assert _applied("denial", said, scope=negative) is None  # the value's own wording negates


def test_conditions_are_states_patterns_on_a_side_negations_and_alternatives() -> None:
    line = "my sister used to work at kestrel"
    assert _applied("joke-right", "kestrel jk", when=["one-word"]) is not None
    assert _applied("joke-right", "kestrel jk", when=["!one-word"]) is None
    assert _applied("retract-window", line, when=["third@before"]) is not None
    assert _applied("retract-window", line, when=["third@right"]) is None
    assert _applied("retract-window", line, when=[["third@right", "assistant"]]) is None
    assert _applied("retract-window", line, when=[["third@right", "one-word"]]) is not None
    # A list under unless keeps the row from applying when any one of them holds.
    assert _applied("retract-window", line, unless=[["third@right", "assistant"]]) is not None
    assert _applied("retract-window", line, unless=[["third@right", "one-word"]]) is None
    with pytest.raises(ValueError, match="rule 'joke-right': 'nonsense': not read by order rows"):
        _applied("joke-right", line, when=["nonsense"])


def test_the_order_reads_the_mention_and_only_revise_rows_read_the_probe() -> None:
    # The order's frames are kept per mention across probes: what the probe asks is not theirs.
    with pytest.raises(ValueError, match="rule 'joke-right': 'temporal': not read by order rows"):
        _step(RULES.rule("joke-right").model_copy(update={"when": ["temporal"]}))
    with pytest.raises(ValueError, match="rule 'joke-right': 'question': not read by order rows"):
        _step(RULES.rule("joke-right").model_copy(update={"when": ["asks-ahead@question"]}))
    assert _step(RULES.rule("plan-cue"), revise=True) is not None


def test_an_agent_word_a_cancelling_pair_and_the_asked_relation_are_row_features() -> None:
    # The agent word that opens the window is not itself the cue: "i'd" is no modal of Kestrel.
    assert _applied("negation", "i don't work at kestrel")[:2] == ("negated", "n't")  # type: ignore[index]
    # Two negations since the last comma cancel out.
    assert _applied("negation", "it's not like i don't still use kestrel") is None
    assert _applied("negation", "it's not like i don't still use kestrel", cancel_pairs_in=None)
    # A role the question asks about names the value, not another person.
    partner = "kestrel is my partner"
    assert _applied("another-role-right", partner) == (
        "aside",
        "named for another role",
        "another-role-right",
    )
    asked = _mention(partner, asked=asked_relations("Who is Rhiannon's partner?"))
    assert _applied("another-role-right", partner, scope=asked) is None


def test_the_cue_is_named_as_the_row_says() -> None:
    past = _applied("past-state", "i was at kestrel")
    assert past == ("retracted", "past state (was)", "past-state")
    partial = _applied("partial-right", "kestrel mostly,")
    assert partial == ("vague", "held in part (mostly,)", "partial-right")
    assert _applied("partial-right", "kestrel mostly,", cue=None, strip=" ,") == (
        "vague",
        "mostly",
        "partial-right",
    )


def test_a_row_that_cannot_be_applied_is_refused() -> None:
    with pytest.raises(ValueError, match="rule 'joke-right': side"):
        _step(RULES.rule("joke-right").model_copy(update={"side": "elsewhere"}))


def test_an_order_that_names_no_rule_is_refused(tmp_path: Path) -> None:
    text = files("drift_pipeline.evaluation.reader").joinpath("rules.yaml").read_text("utf-8")
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace("  - joke-right\n", "  - joke-rigth\n", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="order: no rule 'joke-rigth'"):
        load_rules(path)
