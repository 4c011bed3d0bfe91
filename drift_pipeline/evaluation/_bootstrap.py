"""Cluster bootstrap for DRIFT's metrics: resample weights, weighted statistics and intervals.

Method
------
A cell (one scenario × horizon × arm) has ``R`` replicates: independent worlds, each walked as one
trajectory. Its units are of three kinds, each belonging to one replicate: probes (answers),
sessions (memory snapshots) and retrievals. One bootstrap draw is a two-stage (cluster) resample:

1. draw ``R`` replicates with replacement; ``m[r]`` is how often replicate ``r`` was drawn;
2. every pick of a replicate resamples that replicate's units of each kind with replacement,
   ``n_r`` units per pick, independently per kind. A replicate picked ``k`` times thus gets one
   merged resample of ``k·n_r`` units (the ``k`` picks' counts added up). Its per-replicate
   figures are computed on that merged resample and weigh ``k`` in means over replicates; for
   means of units this is identical to treating the ``k`` picks apart, for ratios it is the
   usual large-sample equivalent.

A draw is held as *count weights*: how often each unit (and each replicate) is in it. Every
statistic is then a weighted sum, a weighted mean or a weighted nearest-rank percentile, computed
for a whole block of draws at once with numpy. The point estimate is the same computation with
every weight equal to 1 (:func:`identity_resample`), so point values and draws share one code path
and cannot drift apart.

Draws are generated in blocks of :data:`CHUNK_DRAWS` from ``numpy.random.default_rng([seed,
block])``, so they depend only on the seed, the number of draws and the number of units of each
kind in each replicate: the same inputs give the same intervals, and two arms of the same world
(same probes, sessions and retrievals) get the same resample indices, which is what a paired
comparison needs.

Intervals
---------
The interval is the percentile interval of the draws in which the figure is defined (a draw can
leave a figure undefined, e.g. when it contains no action probe). When the point estimate falls
outside it (possible for skewed or bounded statistics and for very few replicates) the interval is
widened to include the point, so every reported interval contains its value. A figure with no
defined draw gets the zero-width interval at its point.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CHUNK_DRAWS = 250
"""Draws generated and evaluated together; bounds memory to a few (250 × units) matrices."""

__all__ = [
    "CHUNK_DRAWS",
    "METRIC_ROWS_SCHEMA",
    "Groups",
    "MetricRow",
    "Resample",
    "Sample",
    "bootstrap_resamples",
    "group_sums",
    "identity_resample",
    "metric_rows_table",
    "percentile_interval",
    "ratio",
    "replicate_mean",
    "summarise",
    "weighted_percentiles",
]


class MetricRow(NamedTuple):
    """One reported figure: a metric at one checkpoint (``None`` = over all) with its interval.

    ``value``, ``ci_low`` and ``ci_high`` are ``None`` when the figure is undefined for the cell
    (e.g. Action Alignment without action probes). ``n`` is the number of units (probes, sessions
    or retrievals, as each metric documents) the figure was computed from.
    """

    metric: str
    checkpoint: int | None
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


METRIC_ROWS_SCHEMA = pa.schema(
    [
        pa.field("metric", pa.string(), nullable=False),
        pa.field("checkpoint", pa.string(), nullable=False),
        pa.field("value", pa.float64()),
        pa.field("ci_low", pa.float64()),
        pa.field("ci_high", pa.float64()),
        pa.field("n", pa.int64(), nullable=False),
    ]
)
"""Columns of :func:`metric_rows_table`; ``checkpoint`` is ``'all'`` or the checkpoint number."""


def metric_rows_table(rows: Iterable[MetricRow]) -> pa.Table:
    """Turn metric rows into a pyarrow table with :data:`METRIC_ROWS_SCHEMA`.

    Args:
        rows: The rows, in the order they should appear.

    Returns:
        A table with columns ``metric, checkpoint, value, ci_low, ci_high, n``; ``checkpoint`` is
        the string ``'all'`` for whole-cell figures, else the checkpoint number as a string (one
        string column, so the table stays a single Parquet type).

    """
    listed = list(rows)
    return pa.table(
        {
            "metric": [r.metric for r in listed],
            "checkpoint": ["all" if r.checkpoint is None else str(r.checkpoint) for r in listed],
            "value": [r.value for r in listed],
            "ci_low": [r.ci_low for r in listed],
            "ci_high": [r.ci_high for r in listed],
            "n": [r.n for r in listed],
        },
        schema=METRIC_ROWS_SCHEMA,
    )


@dataclass(frozen=True)
class Sample:
    """A figure's point value with its bootstrap draws, kept for later combination.

    Attributes:
        value: The point estimate, ``None`` when undefined.
        draws: One value per bootstrap draw, NaN where the draw leaves the figure undefined.
        n: Units the figure was computed from.

    """

    value: float | None
    draws: FloatArray
    n: int


def percentile_interval(
    point: float, draws: FloatArray, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the defined draws, widened to contain the point estimate.

    Args:
        point: The point estimate (finite).
        draws: Bootstrap draws; NaN draws are ignored.
        level: Coverage, e.g. 0.95 for the 2.5th and 97.5th percentiles.

    Returns:
        ``(low, high)`` with ``low <= point <= high``; ``(point, point)`` without defined draws.

    """
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return point, point
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return min(float(low), point), max(float(high), point)


def summarise(
    metric: str,
    checkpoint: int | None,
    point: float,
    draws: FloatArray,
    n: int,
    level: float = 0.95,
) -> MetricRow:
    """Build a metric row from a point estimate (NaN = undefined) and its draws.

    Args:
        metric: Metric name.
        checkpoint: Checkpoint number, or ``None`` for the whole cell.
        point: Point estimate; NaN means undefined and gives a row of nulls.
        draws: Bootstrap draws of the same figure.
        n: Units used.
        level: Interval coverage.

    Returns:
        The row, its interval containing its value.

    """
    if not np.isfinite(point):
        return MetricRow(metric, checkpoint, None, None, None, n)
    low, high = percentile_interval(float(point), draws, level)
    return MetricRow(metric, checkpoint, float(point), low, high, n)


@dataclass(frozen=True)
class Resample:
    """A block of draws as count weights.

    Attributes:
        replicates: ``(b, R)`` times each replicate is in each draw.
        units: One ``(b, N_k)`` matrix per unit kind: times each unit is in each draw.

    """

    replicates: FloatArray
    units: tuple[FloatArray, ...]

    @property
    def size(self) -> int:
        """Number of draws in the block."""
        return int(self.replicates.shape[0])


def _check_layout(layout: IntArray, n_replicates: int) -> None:
    if layout.size and (layout.min() < 0 or layout.max() >= n_replicates):
        raise ValueError("unit replicate index out of range")
    if layout.size > 1 and bool(np.any(np.diff(layout) < 0)):
        # Contiguous replicates let one slice hold a replicate's units.
        raise ValueError("units must be sorted by replicate")


def identity_resample(n_replicates: int, layouts: Sequence[IntArray]) -> Resample:
    """The draw that contains every replicate and unit once: the point estimate's weights.

    Args:
        n_replicates: Number of replicates ``R``.
        layouts: Per unit kind, the replicate index (0..R-1) of each unit, sorted.

    Returns:
        A one-draw block with all weights 1.

    """
    for layout in layouts:
        _check_layout(layout, n_replicates)
    return Resample(
        np.ones((1, n_replicates)), tuple(np.ones((1, layout.size)) for layout in layouts)
    )


def bootstrap_resamples(
    n_replicates: int, layouts: Sequence[IntArray], n_boot: int, seed: int
) -> Iterator[Resample]:
    """Yield the cluster-bootstrap draws in blocks of at most :data:`CHUNK_DRAWS`.

    Args:
        n_replicates: Number of replicates ``R``.
        layouts: Per unit kind, the replicate index (0..R-1) of each unit, sorted.
        n_boot: Total number of draws.
        seed: Seed; with the layouts and ``n_boot`` it fixes every draw.

    Yields:
        Blocks of draws, in order.

    """
    for layout in layouts:
        _check_layout(layout, n_replicates)
    sizes = [np.bincount(layout, minlength=n_replicates) for layout in layouts]
    offsets = [np.concatenate(([0], np.cumsum(s)[:-1])) for s in sizes]
    for block, start in enumerate(range(0, n_boot, CHUNK_DRAWS)):
        b = min(CHUNK_DRAWS, n_boot - start)
        rng = np.random.default_rng([seed, block])
        slots = rng.integers(0, n_replicates, size=(b, n_replicates))
        rows = np.arange(b)[:, None]
        m = np.bincount((rows * n_replicates + slots).ravel(), minlength=b * n_replicates)
        units: list[FloatArray] = []
        for layout, size, offset in zip(layouts, sizes, offsets, strict=True):
            n_units = layout.size
            n_max = int(size.max()) if n_units else 0
            if n_max == 0:
                units.append(np.zeros((b, n_units)))
                continue
            # Every slot (one pick of a replicate) resamples that replicate's own units; slots
            # of the same replicate add up, the merged resample the module docstring describes.
            n_slot = size[slots][:, :, None]
            draw = rng.random((b, n_replicates, n_max))
            draw *= n_slot
            # Truncation is the floor here (the products are >= 0); done in place, one pass each.
            local = draw.astype(np.int64)
            del draw
            np.minimum(local, n_slot - 1, out=local)  # guards a product rounding up to n
            # Each unit's flat index: its replicate's offset and its draw's row, added once per
            # slot before broadcasting over the slot's picks.
            local += (offset[slots] + rows * n_units)[:, :, None]
            if bool(np.all(size == n_max)):
                picked = local.ravel()  # every replicate has n_max units: no padding to drop
            else:
                picked = local[np.arange(n_max)[None, None, :] < n_slot]
            counts = np.bincount(picked, minlength=b * n_units)
            units.append(counts.reshape(b, n_units).astype(np.float64))
        yield Resample(m.reshape(b, n_replicates).astype(np.float64), tuple(units))


@dataclass(frozen=True)
class Groups:
    """A partition of units into contiguous groups (units sorted by group id).

    Attributes:
        n_groups: Number of groups, empty ones included.
        starts: Index of the first unit of every non-empty group.
        present: Id of every non-empty group, aligned with ``starts``.

    """

    n_groups: int
    starts: IntArray
    present: IntArray

    @classmethod
    def of(cls, ids: IntArray, n_groups: int) -> Groups:
        """Groups from each unit's group id.

        Args:
            ids: Group id per unit, non-decreasing, in ``[0, n_groups)``.
            n_groups: Total number of groups.

        Returns:
            The partition.

        Raises:
            ValueError: If ids are unsorted or out of range.

        """
        if ids.size and (ids.min() < 0 or ids.max() >= n_groups):
            raise ValueError("group id out of range")
        if ids.size > 1 and bool(np.any(np.diff(ids) < 0)):
            raise ValueError("units must be sorted by group")
        if ids.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return cls(n_groups, empty, empty)
        starts = np.concatenate(([0], np.flatnonzero(np.diff(ids)) + 1)).astype(np.int64)
        return cls(n_groups, starts, ids[starts].astype(np.int64))


def group_sums(weights: FloatArray, values: FloatArray | None, groups: Groups) -> FloatArray:
    """Weighted sum of unit values per group, for every draw.

    Args:
        weights: ``(b, N)`` unit weights.
        values: ``(N,)`` unit values, or ``None`` to sum the weights (weighted counts).
        groups: The partition of the ``N`` units.

    Returns:
        ``(b, n_groups)`` sums; empty groups sum to 0.

    """
    out = np.zeros((weights.shape[0], groups.n_groups))
    if groups.starts.size == 0:
        return out
    data = weights if values is None else weights * values[None, :]
    # reduceat mishandles empty segments, so only non-empty groups are reduced.
    out[:, groups.present] = np.add.reduceat(data, groups.starts, axis=1)
    return out


def ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """Elementwise ``num / den``, NaN (undefined) where ``den <= 0``.

    Args:
        num: Numerators.
        den: Denominators, same shape.

    Returns:
        The ratios.

    """
    out = np.full(np.broadcast_shapes(num.shape, den.shape), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def replicate_mean(values: FloatArray, replicate_weights: FloatArray) -> FloatArray:
    """Mean over replicates (axis 1) weighted by draw counts, ignoring undefined (NaN) values.

    Args:
        values: ``(b, R)`` or ``(b, R, ...)`` per-replicate figures.
        replicate_weights: ``(b, R)`` times each replicate is in each draw.

    Returns:
        ``(b,)`` or ``(b, ...)`` means; NaN where no drawn replicate defines the figure.

    """
    w = replicate_weights.reshape(replicate_weights.shape + (1,) * (values.ndim - 2))
    w = np.where(np.isfinite(values), w, 0.0)
    num = (w * np.where(np.isfinite(values), values, 0.0)).sum(axis=1)
    return ratio(num, w.sum(axis=1))


def weighted_percentiles(
    values: FloatArray, weights: FloatArray, percents: Sequence[float]
) -> FloatArray:
    """Nearest-rank (inverted-CDF) percentiles of unit values under integer count weights.

    The p-th percentile is the smallest value whose cumulative weight reaches p% of the total, so
    it is always an observed value; with all weights 1 it equals numpy's ``inverted_cdf``.

    Args:
        values: ``(N,)`` unit values.
        weights: ``(b, N)`` non-negative integer counts.
        percents: Percentiles in (0, 100].

    Returns:
        ``(b, len(percents))``; NaN for draws with zero total weight.

    """
    b = weights.shape[0]
    out = np.full((b, len(percents)), np.nan)
    if values.size == 0 or b == 0:
        return out
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    # Scaled by 100 so "cum >= p% of total" is an exact comparison of integers held in floats.
    # One (b, N) matrix, worked on in place: a cell pools thousands of reads per draw. `take`
    # lays it out row by row (indexing `[:, order]` gives columns), so the running sum walks
    # memory in order and the flat view below is free.
    cum = weights.take(order, axis=1)
    np.cumsum(cum, axis=1, out=cum)
    cum *= 100.0
    total = cum[:, -1] / 100.0
    # Offsetting each row above the previous row's maximum makes the matrix one sorted
    # sequence, so one searchsorted finds the rank in every draw.
    span = float(cum[:, -1].max()) + 1.0
    offsets = np.arange(b, dtype=np.float64) * span
    cum += offsets[:, None]
    flat = cum.ravel()
    n = values.size
    for j, p in enumerate(percents):
        targets = np.asarray(p, dtype=np.float64) * total + offsets
        pos = np.searchsorted(flat, targets, side="left") - np.arange(b) * n
        pos = np.clip(pos, 0, n - 1)
        out[:, j] = np.where(total > 0, sorted_values[pos], np.nan)
    return out
