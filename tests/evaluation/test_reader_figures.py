"""The reader's shipped figures: current for the running reader, and who scored a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from drift_pipeline.evaluation import (
    MEASURE_COMMAND,
    OFFLINE_SCORING,
    ContextEvaluator,
    LLMEvaluator,
    RuleJudge,
    Scoring,
    load_shipped_figures,
    measure_shipped_figures,
    scoring_from_answers,
    scoring_of,
)
from drift_pipeline.evaluation._reader_figures import CURRENT_READER, main

STALE = (
    f"evaluation/data/reader_figures.json is not current for {CURRENT_READER}: run "
    f"`{MEASURE_COMMAND}` and commit the file"
)


def test_the_shipped_figures_are_current_for_the_running_reader() -> None:
    shipped = load_shipped_figures()
    assert shipped is not None, STALE
    assert shipped.reader == CURRENT_READER, STALE
    assert measure_shipped_figures().to_json() == shipped.to_json(), STALE


def test_every_labelled_set_is_measured_with_counts_rates_and_version() -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    names = [s.name for s in shipped.sets]
    assert names[:2] == ["reader_check", "reader_check_others"] and names[-1] == "judge_check"
    per_set = shipped.others_sets()
    assert len(per_set) == 11
    # The per-set items add up to the whole set written by other authors.
    whole = shipped.by_name("reader_check_others")
    assert whole is not None and sum(s.items for s in per_set) == whole.items
    for figures in shipped.sets:
        assert figures.reader == CURRENT_READER and figures.items > 0
        for rate in (figures.accuracy, figures.false_accept_rate, figures.false_reject_rate):
            assert rate is not None and 0.0 <= rate <= 1.0
    answers = shipped.by_name("judge_check")
    assert answers is not None and answers.scores == "rule judge" and answers.items == 36


def test_the_command_writes_what_it_measures(tmp_path: Path) -> None:
    lines: list[str] = []
    target = tmp_path / "figures.json"
    assert main(["--out", str(target)], lines.append) == 0
    written = load_shipped_figures(target)
    assert written is not None
    assert written.to_json() == json.loads(target.read_text(encoding="utf-8"))
    assert written.to_json() == measure_shipped_figures().to_json()  # deterministic
    assert lines[0].startswith("reader_check ") and "accuracy" in lines[0]
    assert lines[-1].startswith(f"{CURRENT_READER}, context@")


def test_a_file_that_is_not_a_figures_file_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "figures.json"
    bad.write_text('{"reader": "careful@1"}', encoding="utf-8")
    wanted = r"figures\.json: not a figures file .*rerun drift judge-check --write-figures"
    with pytest.raises(ValueError, match=wanted):
        load_shipped_figures(bad)


def test_the_scoring_of_each_evaluator() -> None:
    assert scoring_of(None) == scoring_of(ContextEvaluator()) == OFFLINE_SCORING
    assert OFFLINE_SCORING.offline and OFFLINE_SCORING.judge_kind == "context"
    assert OFFLINE_SCORING.reader == CURRENT_READER

    class _Reader:
        name = "llm:m@abc/cap8192"

    rule = scoring_of(LLMEvaluator(_Reader(), RuleJudge()))  # type: ignore[arg-type]
    assert rule == Scoring("llm:m@abc/cap8192", f"rule:context@2+{CURRENT_READER}", False)
    assert rule.judge_kind == "rule"
    with pytest.raises(TypeError, match="unknown evaluator object"):
        scoring_of(object())


def test_the_scoring_recorded_in_stored_answers() -> None:
    offline = scoring_from_answers([f"context@2+{CURRENT_READER}"], [f"context@2+{CURRENT_READER}"])
    assert offline == OFFLINE_SCORING
    llm = scoring_from_answers(["llm:m@abc/cap8192"], ["llm:m@def"])
    assert llm == Scoring("llm:m@abc/cap8192", "llm:m@def", False) and llm.judge_kind == "llm"
    rule = scoring_from_answers(["llm:m@abc/cap8192"], ["context@2"])
    assert rule is not None and rule.judge == "rule:context@2"
    assert scoring_from_answers(["a", "b"], ["context@2"]) is None
    assert scoring_from_answers([], []) is None
