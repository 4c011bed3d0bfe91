"""The context judge: each probe is judged by its family's rule; contexts are decoded once."""

from __future__ import annotations

import pyarrow as pa
import pytest

from drift_pipeline.evaluation import ANSWER_COLUMNS, judge, judge_all
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


def test_each_probe_is_judged_by_its_familys_rule() -> None:
    context = "Lives in Lisbon, moved from Porto."
    # The same aliases and text: recall finds the answer; revision also wants Porto gone.
    assert judge(_probe("recall"), context).correct
    revision = judge(_probe("revision", subtype="fact_update"), context)
    assert (revision.correct, revision.update_correct, revision.deprecation_correct) == (
        False,
        True,
        False,
    )


def test_judge_all_gives_every_answer_column_in_probe_order() -> None:
    probes = pa.Table.from_pylist([_probe("recall"), _probe("recall", probe_id="r2")])
    columns = judge_all(probes, {(0, "r2"): "Lisbon"})
    assert tuple(columns) == ANSWER_COLUMNS
    assert columns["probe_id"] == ["recall-1", "r2"]
    assert columns["correct"] == [False, True]  # a missing context is empty
    assert columns["judge"] == ["context@1", "context@1"]


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
