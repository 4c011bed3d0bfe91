"""Bootstrap primitives: resample weights, weighted statistics, intervals, the row table."""

from __future__ import annotations

import numpy as np
import pytest

from drift_pipeline.evaluation._bootstrap import (
    CHUNK_DRAWS,
    METRIC_ROWS_SCHEMA,
    Groups,
    MetricRow,
    bootstrap_resamples,
    group_sums,
    identity_resample,
    metric_rows_table,
    percentile_interval,
    ratio,
    replicate_mean,
    summarise,
    weighted_percentiles,
)

LAYOUTS = (
    np.array([0, 0, 0, 1, 1, 2, 2, 2, 2], dtype=np.int64),
    np.array([0, 1, 1, 1, 2], dtype=np.int64),
    np.zeros(0, dtype=np.int64),
)


def test_identity_resample_has_unit_weights() -> None:
    rs = identity_resample(3, LAYOUTS)
    assert rs.size == 1
    assert rs.replicates.tolist() == [[1.0, 1.0, 1.0]]
    assert [w.shape for w in rs.units] == [(1, 9), (1, 5), (1, 0)]
    assert all(bool(np.all(w == 1)) for w in rs.units)


def test_bootstrap_draws_are_two_stage_and_deterministic() -> None:
    n_boot = CHUNK_DRAWS + 37  # crosses a block boundary
    blocks = list(bootstrap_resamples(3, LAYOUTS, n_boot, seed=5))
    assert [b.size for b in blocks] == [CHUNK_DRAWS, 37]
    for block in blocks:
        m = block.replicates
        assert bool(np.all(m.sum(axis=1) == 3))
        for layout, w in zip(LAYOUTS, block.units, strict=True):
            sizes = np.bincount(layout, minlength=3)
            for r in range(3):
                # A replicate drawn k times contributes k x n_r units, all its own.
                got = w[:, layout == r].sum(axis=1)
                assert bool(np.all(got == m[:, r] * sizes[r]))
    again = list(bootstrap_resamples(3, LAYOUTS, n_boot, seed=5))
    for a, b in zip(blocks, again, strict=True):
        assert np.array_equal(a.replicates, b.replicates)
        assert all(np.array_equal(x, y) for x, y in zip(a.units, b.units, strict=True))
    other = next(bootstrap_resamples(3, LAYOUTS, n_boot, seed=6))
    assert not np.array_equal(other.units[0], blocks[0].units[0])


def test_bootstrap_weights_are_roughly_uniform() -> None:
    total = sum(b.units[0].sum(axis=0) for b in bootstrap_resamples(3, LAYOUTS, 2000, seed=0))
    per_unit = total / 2000
    # Each unit is expected once per draw.
    assert per_unit == pytest.approx(np.ones(9), abs=0.1)


def test_layouts_must_be_sorted_and_in_range() -> None:
    with pytest.raises(ValueError, match="sorted"):
        identity_resample(2, [np.array([1, 0], dtype=np.int64)])
    with pytest.raises(ValueError, match="range"):
        list(bootstrap_resamples(2, [np.array([0, 2], dtype=np.int64)], 5, 0))


def test_group_sums_with_empty_groups() -> None:
    groups = Groups.of(np.array([0, 0, 2, 2, 2, 4], dtype=np.int64), 5)
    w = np.array([[1.0, 2.0, 1.0, 0.0, 3.0, 1.0], [1.0] * 6])
    values = np.array([1.0, 10.0, 100.0, 1000.0, 1.0, 5.0])
    assert group_sums(w, values, groups).tolist() == [
        [21.0, 0.0, 103.0, 0.0, 5.0],
        [11.0, 0.0, 1101.0, 0.0, 5.0],
    ]
    assert group_sums(w, None, groups).tolist() == [
        [3.0, 0.0, 4.0, 0.0, 1.0],
        [2.0, 0.0, 3.0, 0.0, 1.0],
    ]
    with pytest.raises(ValueError):
        Groups.of(np.array([1, 0], dtype=np.int64), 2)


def test_ratio_and_replicate_mean_ignore_undefined() -> None:
    assert np.isnan(ratio(np.array([1.0]), np.array([0.0]))).all()
    values = np.array([[0.5, np.nan, 1.0], [0.2, 0.4, np.nan]])
    weights = np.array([[1.0, 1.0, 3.0], [0.0, 2.0, 1.0]])
    assert replicate_mean(values, weights).tolist() == [pytest.approx((0.5 + 3.0) / 4), 0.4]
    per_cp = np.stack([values, values], axis=2)
    assert replicate_mean(per_cp, weights).shape == (2, 2)
    assert np.isnan(replicate_mean(np.array([[np.nan]]), np.array([[1.0]]))).all()


def test_weighted_percentiles_match_nearest_rank() -> None:
    rng = np.random.default_rng(0)
    values = rng.gamma(2.0, 10.0, 57)
    ones = np.ones((1, 57))
    got = weighted_percentiles(values, ones, [50.0, 95.0, 99.0])[0]
    expected = np.percentile(values, [50, 95, 99], method="inverted_cdf")
    assert got.tolist() == expected.tolist()
    counts = rng.integers(0, 4, size=(6, 57)).astype(np.float64)
    counts[3] = 0.0
    draws = weighted_percentiles(values, counts, [10.0, 50.0, 99.0])
    for row, c in zip(draws, counts, strict=True):
        expanded = np.repeat(values, c.astype(int))
        if expanded.size == 0:
            assert np.isnan(row).all()
        else:
            assert (
                row.tolist()
                == np.percentile(expanded, [10, 50, 99], method="inverted_cdf").tolist()
            )
    assert (draws[~np.isnan(draws[:, 0])] == np.sort(draws[~np.isnan(draws[:, 0])], axis=1)).all()


def test_percentile_interval_contains_the_point() -> None:
    draws = np.linspace(0.0, 1.0, 101)
    low, high = percentile_interval(0.5, draws)
    assert low == pytest.approx(0.025) and high == pytest.approx(0.975)
    widened = percentile_interval(2.0, draws)
    assert widened[0] == pytest.approx(0.025) and widened[1] == 2.0
    assert percentile_interval(-1.0, draws)[0] == -1.0
    assert percentile_interval(0.3, np.array([np.nan, np.nan])) == (0.3, 0.3)
    assert percentile_interval(0.0, np.zeros(50)) == (0.0, 0.0)


def test_summarise_and_rows_table() -> None:
    assert summarise("x", None, float("nan"), np.ones(3), 0) == MetricRow(
        "x", None, None, None, None, 0
    )
    row = summarise("x", 4, 0.5, np.array([0.4, 0.6]), 7)
    assert row.value == 0.5 and row.n == 7 and row.ci_low is not None
    table = metric_rows_table([row, MetricRow("y", None, None, None, None, 0)])
    assert table.schema == METRIC_ROWS_SCHEMA
    assert table.column("checkpoint").to_pylist() == ["4", "all"]
    assert table.column("value").to_pylist() == [0.5, None]
