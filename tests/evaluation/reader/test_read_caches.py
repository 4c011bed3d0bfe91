"""The reader's kept results (per text, per line, per mention) never change a reading."""

from __future__ import annotations

import pytest

from drift_pipeline._bounded import release_caches
from drift_pipeline.evaluation import load_context_set
from drift_pipeline.evaluation.reader import _read, _scope, _segment, read_context


def _clear() -> None:
    for cached in (
        _read._occurrences,
        _read._scan,
        _read._prepare,
        _read._attached_dates,
        _read._moves,
        _segment._read_line,
        _segment._joined_lines,
        _scope.split_clauses,
        _scope.lowered,
        _scope._ordered,
        _scope.frame_of,
    ):
        cached.cache_clear()


def test_readings_with_kept_results_equal_readings_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = load_context_set()
    # Every probe read against every context of the set, so texts, lines and mentions repeat
    # across probes as they do when the probes of a checkpoint share one memory.
    probes = [item.probe for item in items[:40]]
    contexts = [item.context for item in items[:40]]
    _clear()
    kept = [read_context(context, probe) for context in contexts for probe in probes]
    again = [read_context(context, probe) for context in contexts for probe in probes]
    with monkeypatch.context() as patch:
        patch.setattr(_read, "_bounded_seen", _read._bounded)
        patch.setattr(_read, "_prepare", _read._prepare.__wrapped__)
        patch.setattr(_read, "_scan", _read._scan.__wrapped__)
        patch.setattr(_read, "_attached_dates", _read._attached_dates.__wrapped__)
        patch.setattr(_read, "_moves", _read._moves.__wrapped__)
        patch.setattr(_segment, "_read_line", _segment._read_line.__wrapped__)
        patch.setattr(_segment, "_joined_lines", _segment._joined_lines.__wrapped__)
        patch.setattr(_read, "frame_of", _scope.frame_of.__wrapped__)
        patch.setattr(_scope, "_ordered", _scope._ordered.__wrapped__)
        for module in (_read, _scope):
            patch.setattr(module, "split_clauses", _scope.split_clauses.__wrapped__)
            patch.setattr(module, "lowered", _scope.lowered.__wrapped__)
        fresh = [read_context(context, probe) for context in contexts for probe in probes]
    assert kept == again == fresh


def test_occurrences_are_kept_for_a_few_texts_only() -> None:
    _clear()
    texts = [f"moved to lisbon in {year}; lisbon again" for year in range(2000, 2030)]
    for text in texts:
        assert _read._bounded_seen("lisbon", text) == _read._bounded("lisbon", text)
    assert _read._occurrences.cache_info().currsize == 8
    # A text seen again after it was dropped is searched afresh, with the same answer.
    assert _read._bounded_seen("lisbon", texts[0]) == _read._bounded("lisbon", texts[0])


def test_a_context_read_for_several_subjects_is_segmented_for_each() -> None:
    # The joined lines of a context are kept and shared by every subject's reading; who speaks
    # is still decided for each subject's names.
    _clear()
    context = "[2027-01-04] maria: I moved to Lisbon\n[2027-01-05] tom: I moved to Porto"
    maria, tom = frozenset({"maria"}), frozenset({"tom"})
    as_maria = list(_segment.segment(context, maria, tom))
    as_tom = list(_segment.segment(context, tom, maria))
    assert [line.speaker for line in as_maria] == ["subject", "other"]
    assert [line.speaker for line in as_tom] == ["other", "subject"]
    assert _segment._joined_lines.cache_info().hits == 1
    _segment._joined_lines.cache_clear()
    _segment._read_line.cache_clear()
    assert list(_segment.segment(context, tom, maria)) == as_tom


def test_joined_lines_are_released_with_the_readers_other_per_text_results() -> None:
    _segment._joined_lines(f"a line\nanother {id(object())}")
    assert _segment._joined_lines.cache_info().currsize > 0
    release_caches("drift_pipeline.evaluation.reader")
    assert _segment._joined_lines.cache_info().currsize == 0
