"""Which answer rows enter which metric: the probe families' ``feeds``, by subtype."""

from __future__ import annotations

import numpy as np
import pytest

from drift_pipeline.evaluation._probe_masks import metric_masks

ROWS = [
    ("recall", "fact"),
    ("recall", "negative"),
    ("action", "style_adaptive"),
    ("revision", "fact_update"),
    ("revision", "preference_reversal"),
    ("revision", "belief_half_life"),
    ("canary", "canary"),  # the example family of tests/probe_family_example.py
]


def _masks() -> dict[str, list[bool]]:
    probe_type = np.asarray([t for t, _ in ROWS], dtype=object)
    subtype = np.asarray([s for _, s in ROWS], dtype=object)
    feeding = metric_masks(probe_type, subtype)
    metrics = ("error_rate", "action_alignment", "revision_accuracy", "revision_persistence")
    return {m: feeding(m).tolist() for m in (*metrics, "privacy", "tes")}


def test_rows_enter_the_metrics_their_family_declares() -> None:
    assert _masks() == {
        "error_rate": [True, True, True, True, True, True, False],
        "action_alignment": [False, False, True, False, False, False, False],
        "revision_accuracy": [False, False, False, True, True, False, False],
        "revision_persistence": [False, False, False, False, False, True, False],
        "privacy": [False, False, False, False, False, False, True],
        "tes": [False] * 7,  # no family feeds a non-probe metric
    }


def test_an_unregistered_probe_type_is_refused_by_name() -> None:
    frontier = np.asarray(["frontier"], dtype=object)
    with pytest.raises(KeyError, match="unknown probe family 'frontier'"):
        metric_masks(frontier, np.asarray(["x"], dtype=object))
