"""What a registered metric reads from a cell, and what it gives back.

A registered metric's ``compute`` function receives the cell's :class:`CellInputs` (one arm on
one world, every replicate) and returns a :class:`UnitRate`: per row of one of the cell's tables
(probes, sessions or retrievals), a value and whether the row counts. The suite makes the figure
the same way as its own rates: per replicate the mean of the counted values, then the mean over
replicates, with the cluster bootstrap of :mod:`._bootstrap` for the interval (and the same
resamples for both arms in a paired comparison). A probe rate also gets one row per checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ._bootstrap import FloatArray
from ._metric_specs import MetricSpec

if TYPE_CHECKING:
    from ._metrics import MetricConfig

__all__ = [
    "TEXT_COLUMNS",
    "CellInputs",
    "ComputedRate",
    "MetricUnit",
    "UnitRate",
    "computed_rates",
    "without_text",
]

MetricUnit = Literal["probe", "session", "retrieval"]
"""The rows a :class:`UnitRate` is over: ``answers``, ``snapshots`` or ``retrievals``."""

_UNITS: tuple[str, ...] = get_args(MetricUnit)

TEXT_COLUMNS: tuple[str, ...] = ("context", "snapshot")
"""Left out of the inputs: cells read back from storage do not load them either, so a metric
sees the same columns whichever path scored the cell."""


@dataclass(frozen=True)
class CellInputs:
    """One arm's scored data on one world, rows in the suite's order.

    Attributes:
        answers: One row per (replicate, probe), sorted by ``replicate, checkpoint, probe_id``:
            ``probe_type, subtype, correct, action_score, update_correct, deprecation_correct,
            judge_error`` and the other ``probe_answers`` columns present.
        amnesiac: The amnesiac's answers to the same probes, row for row with ``answers``.
        snapshots: One row per (replicate, session), sorted by ``replicate, session_index``
            (``tier, write_tokens, storage_tokens, storage_delta_tokens, write_ms, error``...).
        retrievals: One row per (replicate, probe), sorted by ``replicate, checkpoint,
            probe_id`` (``read_ms, read_tokens, llm_read_tokens, error``...).
        horizon: The world's horizon.
        config: The suite's constants (e.g. ``epsilon_tokens``, above which a session's
            storage growth counts as stored).

    """

    answers: pa.Table
    amnesiac: pa.Table
    snapshots: pa.Table
    retrievals: pa.Table
    horizon: str
    config: MetricConfig

    def judged(self) -> npt.NDArray[np.bool_]:
        """Per answer, whether its reader and judge calls succeeded (the suite scores no other)."""
        if "judge_error" not in self.answers.column_names:
            return np.ones(self.answers.num_rows, dtype=bool)
        errors = self.answers.column("judge_error").to_pylist()
        return np.array([not (e or "").strip() for e in errors], dtype=bool)


@dataclass(frozen=True)
class UnitRate:
    """A registered metric's values: one per row of the table of ``unit``.

    Attributes:
        unit: ``probe`` (rows of ``answers``), ``session`` (``snapshots``) or ``retrieval``
            (``retrievals``).
        values: One finite number per row (a NaN is allowed where the row does not count).
        counted: Per row, whether it enters the figure; ``None``: every row. A replicate
            without a counted row leaves its figure undefined there.

    """

    unit: MetricUnit
    values: Sequence[float] | npt.NDArray[np.float64]
    counted: Sequence[bool] | npt.NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class ComputedRate:
    """A :class:`UnitRate` checked and ready for the bootstrap (numerator and denominator)."""

    unit: MetricUnit
    numerator: FloatArray
    denominator: FloatArray


def _target(spec: MetricSpec) -> str:
    if spec.compute is None or isinstance(spec.compute, str):
        return str(spec.compute)
    module = getattr(spec.compute, "__module__", "?")
    return f"{module}:{getattr(spec.compute, '__qualname__', type(spec.compute).__name__)}"


def _checked(spec: MetricSpec, rate: object, rows: dict[str, int]) -> ComputedRate:
    where = f"metric {spec.name!r} ({_target(spec)})"
    if not isinstance(rate, UnitRate):
        raise TypeError(f"{where} returned a {type(rate).__name__}, not a UnitRate")
    if rate.unit not in _UNITS:
        raise ValueError(f"{where}: unit {rate.unit!r} is not one of {', '.join(_UNITS)}")
    n = rows[rate.unit]
    values = np.asarray(rate.values, dtype=np.float64)
    counted = (
        np.ones(n, dtype=bool) if rate.counted is None else np.asarray(rate.counted, dtype=bool)
    )
    if values.shape != (n,) or counted.shape != (n,):
        flags = "" if rate.counted is None else f" and {counted.size} counted flags"
        raise ValueError(f"{where} returned {values.size} values{flags} for {n} {rate.unit} rows")
    if not np.isfinite(values[counted]).all():
        raise ValueError(f"{where} returned a non-finite value for a counted row")
    return ComputedRate(rate.unit, np.where(counted, values, 0.0), counted.astype(np.float64))


def computed_rates(specs: Sequence[MetricSpec], inputs: CellInputs) -> dict[str, ComputedRate]:
    """Run every registered metric on one cell's inputs.

    Args:
        specs: Metrics carrying ``compute``.
        inputs: The cell's data, rows in the suite's order.

    Returns:
        Each metric's checked rate, by name, in the order of ``specs``.

    Raises:
        TypeError: When a metric returns something else than a :class:`UnitRate`.
        ValueError: When its values do not match the rows of its unit, or are not finite.

    """
    rows = {
        "probe": inputs.answers.num_rows,
        "session": inputs.snapshots.num_rows,
        "retrieval": inputs.retrievals.num_rows,
    }
    return {spec.name: _checked(spec, spec.computation()(inputs), rows) for spec in specs}


def without_text(table: pa.Table) -> pa.Table:
    """``table`` without :data:`TEXT_COLUMNS`."""
    return table.drop_columns([c for c in TEXT_COLUMNS if c in table.column_names])
