"""Composite, TES and LPS formulas and the cross-horizon aggregate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from drift_pipeline.evaluation._bootstrap import Sample
from drift_pipeline.evaluation._composites import (
    aggregate_horizons,
    drift_c,
    drift_e,
    latency_profile_score,
    token_efficiency_score,
)


@pytest.mark.parametrize(
    ("horizon", "weights"),
    [
        ("short", (0.35, 0.25, 0.20, 0.20)),
        ("medium", (0.40, 0.25, 0.20, 0.15)),
        ("long", (0.45, 0.20, 0.20, 0.15)),
    ],
)
def test_drift_c_weights(horizon: str, weights: tuple[float, ...]) -> None:
    parts = (0.5, 0.6, 0.7, 0.8)
    expected = sum(w * p for w, p in zip(weights, parts, strict=True))
    assert float(drift_c(horizon, *parts)) == pytest.approx(expected)


def test_drift_c_clips_mvot_and_renormalises_nulls() -> None:
    assert float(drift_c("short", 1.7, 1.0, 1.0, 1.0)) == pytest.approx(1.0)
    assert float(drift_c("short", -0.4, 0.0, 0.0, 0.0)) == 0.0
    # Revision and action undefined: MVOT and Selectivity carry all the weight.
    assert float(drift_c("long", 0.5, 1.0, None, None)) == pytest.approx(
        (0.45 * 0.5 + 0.20 * 1.0) / 0.65
    )
    assert math.isnan(float(drift_c("long", None, None, None, None)))
    draws = drift_c("medium", np.array([0.5, np.nan]), np.array([1.0, 1.0]), 0.5, np.nan)
    assert draws[1] == pytest.approx(1.0 * 0.25 / 0.45 + 0.5 * 0.20 / 0.45)
    with pytest.raises(ValueError, match="horizon"):
        drift_c("eternal", 0.5, 0.5, 0.5, 0.5)


def test_drift_e_clips_tes() -> None:
    assert float(drift_e(0.5, 0.8)) == pytest.approx(0.55 * 0.5 + 0.45 * 0.8)
    assert float(drift_e(3.0, 0.8)) == pytest.approx(0.55 + 0.45 * 0.8)
    assert float(drift_e(-2.0, 0.8)) == pytest.approx(0.45 * 0.8)
    assert float(drift_e(None, 0.8)) == pytest.approx(0.8)


def test_tes_formula_and_edge_cases() -> None:
    assert float(token_efficiency_score(0.6, 0.3, 200.0, 100.0)) == pytest.approx(1.0)
    assert float(token_efficiency_score(0.6, 0.3, 50.0, 100.0)) == pytest.approx(4.0)
    assert float(token_efficiency_score(0.3, 0.3, 100.0, 100.0)) == 1.0
    assert math.isnan(float(token_efficiency_score(0.6, 0.0, 50.0, 100.0)))  # MVOT_ref <= 0
    assert math.isnan(float(token_efficiency_score(0.6, -0.1, 50.0, 100.0)))
    assert math.isnan(float(token_efficiency_score(0.6, 0.3, 50.0, 0.0)))  # TC_ref <= 0
    assert float(token_efficiency_score(0.0, 0.3, 0.0, 100.0)) == 0.0  # free and useless
    assert float(token_efficiency_score(-0.2, 0.3, 0.0, 100.0)) == 0.0
    assert math.isnan(float(token_efficiency_score(0.2, 0.3, 0.0, 100.0)))  # free value
    assert math.isnan(float(token_efficiency_score(None, 0.3, 10.0, 100.0)))
    got = token_efficiency_score(
        np.array([0.6, 0.0, 0.6]), np.array([0.3, 0.3, 0.0]), np.array([200.0, 0.0, 1.0]), 100.0
    )
    assert got[0] == pytest.approx(1.0) and got[1] == 0.0 and np.isnan(got[2])


def test_lps() -> None:
    assert float(latency_profile_score(25.0, 100.0)) == 1.0
    assert float(latency_profile_score(100.0, 400.0)) == pytest.approx(0.4 * 0.5 + 0.6 * 0.5)
    assert float(latency_profile_score(0.0, 0.0)) == 1.0  # a p99 of 0 meets the target
    assert math.isnan(float(latency_profile_score(None, 10.0)))


def _sample(value: float | None, centre: float, seed: int) -> Sample:
    draws = centre + np.random.default_rng(seed).normal(0.0, 0.05, 400)
    return Sample(value, draws, 10)


def test_aggregate_horizons_renormalises_over_present_horizons() -> None:
    row = aggregate_horizons(
        "drift_c", {"short": _sample(0.4, 0.4, 1), "long": _sample(0.8, 0.8, 2)}
    )
    assert row.metric == "drift_c" and row.checkpoint is None and row.n == 20
    assert row.value == pytest.approx((0.2 * 0.4 + 0.5 * 0.8) / 0.7)
    assert row.value is not None and row.ci_low is not None and row.ci_high is not None
    assert row.ci_low <= row.value <= row.ci_high
    full = aggregate_horizons(
        "drift_c",
        {
            "short": _sample(0.4, 0.4, 1),
            "medium": _sample(0.6, 0.6, 3),
            "long": _sample(None, 0.8, 2),
        },
    )
    assert full.value == pytest.approx((0.2 * 0.4 + 0.3 * 0.6) / 0.5)
    again = aggregate_horizons(
        "drift_c", {"short": _sample(0.4, 0.4, 1), "long": _sample(0.8, 0.8, 2)}
    )
    assert again == row


def test_aggregate_horizons_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="horizon"):
        aggregate_horizons("x", {"weekly": _sample(0.5, 0.5, 1)})
    with pytest.raises(ValueError, match="draws"):
        aggregate_horizons(
            "x", {"short": _sample(0.5, 0.5, 1), "long": Sample(0.5, np.zeros(3), 1)}
        )
    empty = aggregate_horizons("x", {})
    assert empty.value is None and empty.n == 0
