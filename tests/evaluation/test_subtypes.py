"""Recall per probe subtype: per replicate, then over replicates; pooled over cells by probes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from drift_pipeline.evaluation import Sample, pooled_subtype_rows, subtype_recall


def _answers() -> pa.Table:
    return pa.table(
        {
            "replicate": [0, 0, 0, 1, 1, 0, 0],
            "subtype": ["single_hop"] * 5 + ["temporal"] * 2,
            "correct": [True, False, True, True, None, False, True],
            "score": [1.0, 0.25, 1.0, 0.5, None, 0.0, 0.75],
            "judge_error": [None, None, None, None, None, "reader: timeout", None],
        }
    )


def test_recall_is_the_mean_over_replicates_of_each_replicates_share() -> None:
    recall = subtype_recall(_answers(), n_boot=200)
    # replicate 0: 2 of 3; replicate 1: 1 of 1 (the null row is not scored) -> (2/3 + 1) / 2
    assert recall["single_hop"].value == pytest.approx(5 / 6)
    assert recall["single_hop"].n == 4
    # The failed reader call is left out: one scored temporal probe, right.
    assert (recall["temporal"].value, recall["temporal"].n) == (1.0, 1)
    draws = recall["single_hop"].draws
    assert draws.shape == (200,) and np.all((draws >= 0) & (draws <= 1))


def test_the_graded_score_is_averaged_the_same_way() -> None:
    scores = subtype_recall(_answers(), column="score", n_boot=0)
    assert scores["single_hop"].value == pytest.approx(((1.0 + 0.25 + 1.0) / 3 + 0.5) / 2)
    assert scores["temporal"].value == pytest.approx(0.75)


def test_cells_pool_by_the_probes_they_scored() -> None:
    a = {"single_hop": Sample(1.0, np.full(4, 1.0), 3)}
    b = {"single_hop": Sample(0.0, np.full(4, 0.0), 1), "temporal": Sample(None, np.zeros(0), 0)}
    rows = pooled_subtype_rows([a, b])
    assert rows["single_hop"].value == pytest.approx(0.75) and rows["single_hop"].n == 4
    assert rows["single_hop"].metric == "recall:single_hop"
    assert rows["temporal"].value is None and rows["temporal"].n == 0
