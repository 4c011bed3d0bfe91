"""Composite and efficiency formulas of spec §7.6–§7.9, elementwise over point values and draws.

Every function here takes figures that may be undefined (``None`` or NaN) and works elementwise
on numpy arrays, so the same call computes a point value and all its bootstrap draws.

Decisions (docs/decisions.md has the rest):

- **DRIFT-C** per horizon weighs MVOT (clipped to [0, 1]), Selectivity, Revision Accuracy and
  Action Alignment by spec §7.6. An undefined component (no revision or action probes, no noise
  or signal sessions, MVOT with every checkpoint skipped) is dropped and the remaining weights are
  renormalised to sum to 1, so a scenario without, say, action probes is scored on what it
  measures rather than given a free 0 or 1. All components undefined → undefined.
- **DRIFT-E** = 0.55 × TES clipped to [0, 1] + 0.45 × LPS. The clip keeps the composite in
  [0, 1] like LPS and DRIFT-C: beating the reference compressor's efficiency earns the full TES
  share but no more, and a negative TES (memory worse than amnesia) counts as 0. An undefined TES
  (see :func:`token_efficiency_score`) is dropped and LPS carries the whole weight, the same rule
  as DRIFT-C.
- **Across horizons** the weights short 0.2, medium 0.3, long 0.5 are renormalised over the
  horizons present with a defined value. Horizons are independent worlds, so their bootstrap
  draws are combined after a seeded permutation of each horizon's draws (cells computed with the
  same seed would otherwise share resample patterns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from ._bootstrap import FloatArray, MetricRow, Sample, summarise

Figure = float | None | npt.NDArray[np.float64]
"""A point value (``None`` = undefined) or an array of draws (NaN = undefined)."""

HORIZONS: Final = ("short", "medium", "long")

DRIFT_C_WEIGHTS: Final[Mapping[str, tuple[float, float, float, float]]] = {
    # MVOT, Selectivity, Revision Accuracy, Action Alignment (spec §7.6).
    "short": (0.35, 0.25, 0.20, 0.20),
    "medium": (0.40, 0.25, 0.20, 0.15),
    "long": (0.45, 0.20, 0.20, 0.15),
}

DRIFT_E_WEIGHTS: Final = (0.55, 0.45)
"""TES, LPS (spec §7.9)."""

HORIZON_WEIGHTS: Final[Mapping[str, float]] = {"short": 0.20, "medium": 0.30, "long": 0.50}

READ_LATENCY_TARGET_MS: Final = 50.0
TTFRT_TARGET_MS: Final = 200.0
LPS_WEIGHTS: Final = (0.40, 0.60)
"""Read score, TTFRT score (spec §7.8)."""

__all__ = [
    "DRIFT_C_WEIGHTS",
    "DRIFT_E_WEIGHTS",
    "HORIZONS",
    "HORIZON_WEIGHTS",
    "LPS_WEIGHTS",
    "READ_LATENCY_TARGET_MS",
    "TTFRT_TARGET_MS",
    "Figure",
    "aggregate_horizons",
    "drift_c",
    "drift_e",
    "latency_profile_score",
    "token_efficiency_score",
]


def _arr(x: Figure) -> FloatArray:
    if x is None:
        return np.asarray(np.nan, dtype=np.float64)
    return np.asarray(x, dtype=np.float64)


def _weighted(components: list[FloatArray], weights: tuple[float, ...]) -> FloatArray:
    shape = np.broadcast_shapes(*(c.shape for c in components))
    num = np.zeros(shape)
    den = np.zeros(shape)
    for c, w in zip(components, weights, strict=True):
        defined = np.isfinite(c)
        num = num + np.where(defined, w * np.where(defined, c, 0.0), 0.0)
        den = den + np.where(defined, w, 0.0)
    out = np.full(shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _check_horizon(horizon: str) -> None:
    if horizon not in HORIZONS:
        raise ValueError(f"unknown horizon {horizon!r}; expected one of {', '.join(HORIZONS)}")


def drift_c(
    horizon: str, mvot: Figure, selectivity: Figure, revision: Figure, action: Figure
) -> FloatArray:
    """DRIFT-C for one horizon (spec §7.6), renormalising over defined components.

    Args:
        horizon: ``short``, ``medium`` or ``long`` (chooses the weights).
        mvot: MVOT; clipped to [0, 1] before weighting.
        selectivity: Selectivity Score.
        revision: Revision Accuracy.
        action: Action Alignment.

    Returns:
        The composite, elementwise; NaN where every component is undefined.

    Raises:
        ValueError: For an unknown horizon.

    """
    _check_horizon(horizon)
    parts = [np.clip(_arr(mvot), 0.0, 1.0), _arr(selectivity), _arr(revision), _arr(action)]
    return _weighted(parts, DRIFT_C_WEIGHTS[horizon])


def drift_e(tes: Figure, lps: Figure) -> FloatArray:
    """DRIFT-E = 0.55 × clip(TES, 0, 1) + 0.45 × LPS, renormalising over defined components.

    Args:
        tes: Token Efficiency Score (unbounded; clipped to [0, 1] here).
        lps: Latency Profile Score in [0, 1].

    Returns:
        The composite, elementwise; NaN where both are undefined.

    """
    return _weighted([np.clip(_arr(tes), 0.0, 1.0), _arr(lps)], DRIFT_E_WEIGHTS)


def token_efficiency_score(
    mvot_sys: Figure, mvot_ref: Figure, cost_sys: Figure, cost_ref: Figure
) -> FloatArray:
    """TES = (MVOT_sys / MVOT_ref) / (TC_sys / TC_ref) (spec §7.7), with its edge cases.

    Edge cases, elementwise:

    - ``MVOT_ref <= 0`` or ``TC_ref <= 0``: undefined (NaN). A reference with no value over
      amnesia, or no cost, cannot normalise anything.
    - ``TC_sys <= 0`` (a system that spends nothing, e.g. the amnesiac): 0 when ``MVOT_sys <= 0``
      (no value for no cost), undefined otherwise (value for free is an infinite ratio).
    - Any undefined input: undefined.

    The reference compressor against its own figures gives exactly 1.

    Args:
        mvot_sys: The system's MVOT.
        mvot_ref: The reference compressor's MVOT on the same world.
        cost_sys: The system's token cost per session TC.
        cost_ref: The reference compressor's TC.

    Returns:
        TES, elementwise.

    """
    ms, mr, cs, cr = _arr(mvot_sys), _arr(mvot_ref), _arr(cost_sys), _arr(cost_ref)
    ref_ok = (mr > 0) & (cr > 0)
    shape = np.broadcast_shapes(ms.shape, mr.shape, cs.shape, cr.shape)
    value = np.full(shape, np.nan)
    np.divide(ms * cr, mr * cs, out=value, where=ref_ok & (cs > 0))
    free = ref_ok & (cs <= 0)
    value = np.where(free & (ms <= 0), 0.0, value)
    return np.where(free & ~(ms <= 0), np.nan, value)


def latency_profile_score(read_p99_ms: Figure, ttfrt_p99_ms: Figure) -> FloatArray:
    """LPS = 0.4 × min(1, 50 / RL_p99) + 0.6 × min(1, 200 / TTFRT_p99) (spec §7.8).

    A p99 of 0 ms meets its target (score 1) instead of dividing by zero.

    Args:
        read_p99_ms: p99 read latency in ms.
        ttfrt_p99_ms: p99 time to first relevant token in ms.

    Returns:
        LPS in [0, 1], elementwise; NaN where either input is undefined.

    """

    def score(p99: FloatArray, target: float) -> FloatArray:
        capped = np.full(p99.shape, 1.0)
        np.divide(target, p99, out=capped, where=p99 > 0)
        return np.where(np.isfinite(p99), np.minimum(1.0, capped), np.nan)

    read, ttfrt = _arr(read_p99_ms), _arr(ttfrt_p99_ms)
    return LPS_WEIGHTS[0] * score(read, READ_LATENCY_TARGET_MS) + LPS_WEIGHTS[1] * score(
        ttfrt, TTFRT_TARGET_MS
    )


def aggregate_horizons(
    metric: str, per_horizon: Mapping[str, Sample], seed: int = 0, level: float = 0.95
) -> MetricRow:
    """Combine one metric across a scenario's horizons (weights 0.2 / 0.3 / 0.5, renormalised).

    Args:
        metric: Name for the output row (e.g. ``drift_c``).
        per_horizon: Horizon name → that cell's :class:`Sample` of the metric
            (``CellMetrics.samples[metric]``). Every sample must have the same number of draws.
        seed: Seed of the per-horizon permutations that decorrelate the draws.
        level: Interval coverage.

    Returns:
        The aggregate row (checkpoint ``None``); ``n`` is the sum over horizons.

    Raises:
        ValueError: For an unknown horizon or samples with different numbers of draws.

    """
    for horizon in per_horizon:
        _check_horizon(horizon)
    present = [h for h in HORIZONS if h in per_horizon]
    sizes = {per_horizon[h].draws.size for h in present}
    if len(sizes) > 1:
        raise ValueError("horizon samples have different numbers of bootstrap draws")
    n_draws = sizes.pop() if sizes else 0
    weights = tuple(HORIZON_WEIGHTS[h] for h in present)
    point = _weighted([_arr(per_horizon[h].value) for h in present], weights) if present else None
    draws = [
        per_horizon[h].draws[np.random.default_rng([seed, HORIZONS.index(h)]).permutation(n_draws)]
        for h in present
    ]
    combined = _weighted(draws, weights) if present else np.zeros(0)
    n = sum(per_horizon[h].n for h in present)
    value = float(point) if point is not None else float("nan")
    return summarise(metric, None, value, combined, n, level)
