"""The reader's rows are applied as they read: side, scope, terminator, exceptions and cue."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from drift_pipeline.evaluation.reader._cues import MentionContext, _row, _View
from drift_pipeline.evaluation.reader._rules import RULES, load_rules


def _mention(left: str = "", right: str = "", **fields: object) -> _View:
    """A mention of "kestrel" with ``left`` and ``right`` its clause either side of it."""
    values: dict[str, object] = {
        "left": left,
        "right": right,
        "window": left,
        "sentence_left": left,
        "sentence": left + "kestrel" + right,
        "next_sentence": "",
        "tail": right,
        "speaker": "subject",
        "phrase_raw": "kestrel",
        "phrase_given": "Kestrel",
        "raw_sentence_left": left,
        "weak": False,
        "negative_value": False,
        "line_has_ack": False,
        "other_name_at": -1,
    }
    values.update(fields)
    return _View(MentionContext(**values))  # type: ignore[arg-type]


def _applied(rule_id: str, view: _View, **changes: object) -> tuple[str, str, str] | None:
    return _row(RULES.rule(rule_id).model_copy(update=changes))(view)


def test_a_row_reads_only_its_own_side_of_the_value() -> None:
    # joke-right reads the words after the value: "jk" before it takes nothing back.
    assert _applied("joke-right", _mention(right=" jk")) == ("retracted", " jk", "joke-right")
    assert _applied("joke-right", _mention(left="jk ")) is None
    # Several sides are tried in turn: corrected reads the clause after, then the tail.
    tail_only = _mention(right=" here", tail=" (that was wrong)")
    assert _applied("corrected", tail_only) == ("retracted", "corrected", "corrected")
    assert _applied("corrected", tail_only, side="after") is None


def test_a_row_reaches_no_further_than_its_scope() -> None:
    near = _mention(left="i used to work at ")
    far = _mention(left="i used to go running every single morning near ")
    assert _applied("retract-window", near) == ("retracted", "used to", "retract-window")
    assert _applied("retract-window", far) is None  # seven words apart, the scope is five
    assert _applied("retract-window", far, max_scope=7) is not None
    assert _applied("retract-window", near, max_scope=1) is None


def test_a_row_stops_at_its_terminator() -> None:
    parted = _mention(left="i used to; ")
    assert _applied("retract-window", parted) is None  # the pause parts the cue from the value
    assert _applied("retract-window", parted, terminated_by=None) is not None
    # Without a terminator or a scope the row searches its whole side.
    far = _mention(left="i used to go running every single morning near ")
    assert _applied("retract-window", far, max_scope=None, terminated_by=None) is not None


def test_the_next_value_ends_a_row_that_reads_after_the_value() -> None:
    ending = ", york fell through"
    own = _mention(right=ending)
    before_york = _mention(right=ending, until_next=", ")
    assert _applied("ended-right", own) is not None
    assert _applied("ended-right", before_york) is None  # the ending is York's


def test_an_exception_keeps_a_row_from_applying() -> None:
    said = _mention(left="i wouldn't call myself ")
    assert _applied("denial", said) == ("negated", "wouldn't call myself", "denial")
    assert _applied("denial", _mention(left="i wouldn't call myself ", negative_value=True)) is None


def test_the_cue_is_named_as_the_row_says() -> None:
    past = _applied("past-state", _mention(left="i was at "))
    assert past == ("retracted", "past state (was)", "past-state")
    partial = _applied("partial-right", _mention(right=" mostly,"))
    assert partial == ("vague", "held in part (mostly,)", "partial-right")
    assert _applied("partial-right", _mention(right=" mostly,"), cue=None, strip=" ,") == (
        "vague",
        "mostly",
        "partial-right",
    )


def test_a_row_that_cannot_be_applied_is_refused() -> None:
    with pytest.raises(ValueError, match="rule 'joke-right': side"):
        _row(RULES.rule("joke-right").model_copy(update={"side": "head"}))


def test_an_order_that_names_no_rule_is_refused(tmp_path: Path) -> None:
    text = files("drift_pipeline.evaluation.reader").joinpath("rules.yaml").read_text("utf-8")
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace("  - joke-right\n", "  - joke-rigth\n", 1), encoding="utf-8")
    with pytest.raises(ValueError, match="order: no rule or compound case 'joke-rigth'"):
        load_rules(path)
