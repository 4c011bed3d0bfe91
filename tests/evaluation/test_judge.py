"""The context judge: the careful reader reads, the judge scores; contexts are decoded once."""

from __future__ import annotations

import pyarrow as pa
import pytest

from drift_pipeline.evaluation import ANSWER_COLUMNS, JUDGE_ID, judge, judge_all, judge_answer
from drift_pipeline.pipeline._cells import _contexts


def _probe(probe_type: str, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "replicate": 0,
        "checkpoint": 4,
        "probe_id": f"{probe_type}-1",
        "probe_type": probe_type,
        "subtype": "fact",
        "polarity": "positive",
        "aliases": ["Lisbon"],
        "deprecated": ["Porto"],
        "options": [],
        "correct_option": None,
        "default_option": None,
    }
    return {**base, **fields}


def test_the_careful_reader_reads_every_builtin_family() -> None:
    context = "Lives in Lisbon, moved from Porto."
    # A reported past state ("moved from Porto") does not present Porto as current.
    assert judge(_probe("recall"), context).correct
    revision = judge(_probe("revision", subtype="fact_update"), context)
    assert (revision.correct, revision.update_correct, revision.deprecation_correct) == (
        True,
        True,
        True,
    )
    # A dated supersession passes in either order of the lines; the stale line alone fails.
    dated = "[2027-05-02] I now live in Lisbon.\n[2026-01-10] I live in Porto."
    assert judge(_probe("revision", subtype="fact_update"), dated).correct
    stale = judge(_probe("revision", subtype="fact_update"), "[2026-01-10] I live in Porto.")
    assert (stale.update_correct, stale.deprecation_correct) == (False, False)
    # Substring presence is not an answer: a question and a hypothetical name the value.
    assert not judge(_probe("recall"), "Is Lisbon nice in spring?").correct
    assert not judge(_probe("recall"), "If we ever moved, Lisbon would be top.").correct


def test_an_answer_is_judged_like_a_context() -> None:
    revision = _probe("revision", subtype="fact_update")
    assert judge_answer(revision, "They moved from Porto to Lisbon.").correct
    stale = judge_answer(revision, "They live in Porto.")
    assert (stale.correct, stale.deprecation_correct) == (False, False)


def test_judge_all_gives_every_answer_column_in_probe_order() -> None:
    probes = pa.Table.from_pylist([_probe("recall"), _probe("recall", probe_id="r2")])
    columns = judge_all(probes, {(0, "r2"): "Lisbon"})
    assert tuple(columns) == ANSWER_COLUMNS
    assert columns["probe_id"] == ["recall-1", "r2"]
    assert columns["correct"] == [False, True]  # a missing context is empty
    assert columns["judge"] == [JUDGE_ID, JUDGE_ID]


def test_judge_all_reads_each_table_it_is_given() -> None:
    # The rows of the last table are kept for the next arm on it: an equal table built anew, or
    # another one, is read from its own rows.
    first = pa.Table.from_pylist([_probe("recall")])
    contexts = {(0, "recall-1"): "Lives in Lisbon."}
    assert judge_all(first, contexts)["correct"] == [True]
    assert judge_all(first, {})["correct"] == [False]
    other = pa.Table.from_pylist([_probe("recall", probe_id="r9", aliases=["Porto"])])
    assert judge_all(other, {(0, "r9"): "Lives in Porto."})["probe_id"] == ["r9"]
    assert judge_all(first, contexts)["probe_id"] == ["recall-1"]


def test_an_unregistered_probe_type_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="unknown probe family 'frontier'; registered: recall"):
        judge(_probe("frontier"), "Lisbon")


def test_contexts_decode_each_distinct_text_once() -> None:
    texts = ["a long tail " * 50, "other", "a long tail " * 50]
    plain = pa.table({"context": texts})
    encoded = pa.table({"context": pa.array(texts).dictionary_encode()})
    assert _contexts(plain) == texts == _contexts(encoded)
    decoded = _contexts(encoded)
    assert decoded[0] is decoded[2]  # one string object, not one copy per row
    nulls = pa.table({"context": pa.array(["x", None]).dictionary_encode()})
    assert _contexts(nulls) == ["x", ""]
