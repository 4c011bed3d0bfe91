"""The reader's shipped figures: current for the running reader, and who scored a run."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
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
from drift_pipeline.evaluation._reader_check import load_context_set, score_reader
from drift_pipeline.evaluation._reader_figures import CURRENT_READER, main

STALE = (
    f"evaluation/data/reader_figures.json is not current for {CURRENT_READER}: run "
    f"`{MEASURE_COMMAND}` and commit the file"
)


def test_the_shipped_figures_are_current_for_the_running_reader() -> None:
    shipped = load_shipped_figures()
    assert shipped is not None, STALE
    assert shipped.reader == CURRENT_READER, STALE
    assert measure_shipped_figures().to_json() == shipped.shipped_only().to_json(), STALE
    # Held-out figures cannot be re-measured from the package: they must at least be this
    # reader's (a rewrite drops them once the reader changes).
    assert all(s.reader == CURRENT_READER for s in shipped.sets if s.held_out), STALE


def test_every_labelled_set_is_measured_with_counts_rates_and_version() -> None:
    shipped = load_shipped_figures()
    assert shipped is not None
    names = [s.name for s in shipped.sets if not s.held_out]
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


def _held_out_files(folder: Path) -> list[Path]:
    """Two small sets in the labelled-context format, as a maintainer would keep them."""
    source = resources.files("drift_pipeline.evaluation") / "data" / "reader_check.jsonl"
    shipped = source.read_text(encoding="utf-8").splitlines()
    paths = []
    for number, (prefix, chosen) in enumerate([("ya", shipped[:9]), ("yb", shipped[40:47])]):
        records = [json.loads(line) | {"id": f"{prefix}{i:03d}"} for i, line in enumerate(chosen)]
        path = folder / f"set_{number}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        paths.append(path)
    return paths


def test_held_out_sets_are_measured_whole_and_per_set_with_their_digests(tmp_path: Path) -> None:
    first, second = _held_out_files(tmp_path)
    target = tmp_path / "figures.json"
    lines: list[str] = []
    assert (
        main(
            ["--out", str(target), "--held-out", str(first), "--held-out", str(second)],
            lines.append,
        )
        == 0
    )
    written = load_shipped_figures(target)
    assert written is not None
    held = [s for s in written.sets if s.held_out]
    assert [s.name for s in held] == ["held_out", "held_out/ya", "held_out/yb"]
    assert held == [written.by_name("held_out"), *written.held_out_sets()]
    whole, ya, yb = held
    assert (whole.items, ya.items, yb.items) == (16, 9, 7)
    # A file is named by its name alone (never where it was on the machine) and its digest.
    assert whole.file == "set_0.jsonl,set_1.jsonl" and ya.file == "set_0.jsonl"
    digest = hashlib.sha256(first.read_bytes()).hexdigest()[:12]
    assert ya.digest == digest and whole.digest == f"{digest},{yb.digest}"
    assert str(tmp_path) not in target.read_text(encoding="utf-8")
    report = score_reader(load_context_set(first) + load_context_set(second))
    assert whole.accuracy == round(report.accuracy or 0, 4)
    assert all(s.reader == CURRENT_READER and s.written_by == "other authors" for s in held)
    # The shipped sets are measured as without them, and nothing else is marked held out.
    assert written.shipped_only().to_json() == measure_shipped_figures().to_json()
    assert any(line.startswith("held_out ") for line in lines)


def test_a_rewrite_keeps_held_out_figures_of_this_reader_and_drops_another_readers(
    tmp_path: Path,
) -> None:
    files = _held_out_files(tmp_path)
    target = tmp_path / "figures.json"
    main(["--out", str(target), *(a for f in files for a in ("--held-out", str(f)))], print)
    measured = load_shipped_figures(target)
    assert measured is not None
    # Without the files (a maintainer re-measuring the shipped sets): kept, same reader.
    main(["--out", str(target)], print)
    assert load_shipped_figures(target) == measured
    # The reader changed since they were measured: they are another reader's, and go.
    data = json.loads(target.read_text(encoding="utf-8"))
    for record in data["sets"]:
        if record["held_out"]:
            record["reader"] = "careful@0"
    target.write_text(json.dumps(data), encoding="utf-8")
    main(["--out", str(target)], print)
    rewritten = load_shipped_figures(target)
    assert rewritten is not None and not any(s.held_out for s in rewritten.sets)


def test_a_bad_held_out_file_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    good, _ = _held_out_files(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "zz1"}\n', encoding="utf-8")
    target = tmp_path / "figures.json"
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: "):
        main(["--out", str(target), "--held-out", str(good), "--held-out", str(bad)], print)
    assert not target.exists()
    twice = tmp_path / "again.jsonl"
    twice.write_text(good.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ValueError, match="item id 'ya000' is in more than one held-out set"):
        main(["--out", str(target), "--held-out", str(good), "--held-out", str(twice)], print)
    assert not target.exists()


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
