"""DRIFT's metric suite (spec §7, with the choices it leaves open) for one cell, with 95% intervals.

A *cell* is one scenario × horizon × arm, run over ``R`` replicates (independent worlds). The
entry points are :func:`compute_cell` (every figure of one arm), :func:`compare_arms` (paired
differences A − B) and :func:`reference_figures` (the reference compressor's per-replicate
baseline, which MVOT and TES of every arm need). Intervals come from the cluster bootstrap of
:mod:`._bootstrap`; composites and the TES/LPS formulas live in :mod:`._composites`.

Inputs
------
An arm's data is an :class:`ArmData` of three pyarrow tables (extra columns are ignored; a polars
frame converts with ``.to_arrow()``):

- ``answers``: one row per (replicate, probe): ``replicate, checkpoint, probe_id, probe_type,
  subtype, correct`` and, where they apply, ``action_score`` (−1/0/+1), ``update_correct`` and
  ``deprecation_correct``. A null ``correct`` (e.g. a failed judge call) is not scored; an
  optional ``judge_error`` column (non-empty = the reader or judge call failed) is counted in
  ``judge_errors`` and such a row is never scored, whatever its other columns say. Which rows
  enter which probe metric is declared by each probe family (its ``feeds``, by subtype). For a
  canary probe (a family feeding ``privacy``) ``correct`` means *no leak*: the asker correctly
  cannot know the private fact (spec §6.2), so canary recall = 1 − mean(correct).
- ``snapshots``: one row per (replicate, session): ``replicate, session_index, tier,
  write_tokens, storage_tokens, storage_delta_tokens, write_ms`` and optional ``error``;
  optionally the agent's reads before the session (``session_read_ms`` and
  ``session_read_tokens``, one list entry per retrieve, as the memory loop records them).
- ``retrievals``: one row per (replicate, probe): ``replicate, checkpoint, probe_id, read_ms,
  read_tokens, llm_read_tokens`` and optional ``error``. ``read_tokens`` is the size of the whole
  context handed to the reader (soft-gate buffer included).
- ``ttft_ms``: optional measured reader time to first token per retrieval row (same order as
  ``retrievals``); when given it replaces the prefill model below. A NaN entry (no measurement,
  e.g. the reader call failed) falls back to the model for that row; ``ttft_measured`` reports
  the share of rows measured.

``amnesiac_answers`` has the answers' columns for the same probes, answered from an empty
context. The reference is either a :class:`ReferenceFigures` (per-replicate C_ref, TC_ref and
MVOT_ref, fixed per replicate and following the replicate draw in the bootstrap) or the reference
compressor's own :class:`ArmData` on the same world, in which case its figures are recomputed in
every bootstrap draw from the same resample indices (a paired TES interval).

Aggregation over replicates
---------------------------
A replicate is one trajectory through its own world, and the spec defines MVOT per trajectory
(``C_ref`` is the reference compressor's on that world). So every rate is computed per replicate
and the cell value is the mean over replicates (each replicate weighs the same whatever its probe
count); figures derived from several rates (Selectivity, the harmonic mean of Revision Accuracy,
TES, LPS, composites) are computed from those cell means. Latency percentiles pool every call of
the cell, because the replicates run concurrently as one load (spec §7.8) and a mean of p99s is
not a p99. Percentiles are nearest-rank (always an observed latency).

Definitions (``n`` = units the figure uses; figures marked (t) are also given per checkpoint)
-------------------------------------------------------------------------------------------
- ``error_rate`` (t): E(t) = 1 − mean(correct) over scored probes feeding it at t; overall = mean
  of E(t) over checkpoints. ``error_rate_amnesiac`` the same for the amnesiac answers. n = probes.
- ``mvot`` (t): per replicate, mean over checkpoints of (E_amn − E_mem) / E_amn ×
  min(1, TC_ref / TC_mem), TC being the replicate's token cost per session (below); TC_mem = 0
  gives factor 1. Checkpoints with E_amn = 0 are skipped; per checkpoint the figure is that
  checkpoint's term. ``mvot_skipped`` (t) counts the skipped (replicate, checkpoint) pairs (a
  diagnostic; its interval is its value; n = pairs considered). An arm whose answers equal the
  amnesiac's has MVOT exactly 0. n = probes in non-skipped checkpoints.
- ``selectivity`` = (TNR_noise + (1 − FNR_signal)) / 2 from content: with a ``content_kept``
  column in ``snapshots`` (:func:`~._selectivity.content_kept`: a signal session's value, a
  noise session's decoy values, in the memory's snapshot at the next checkpoint; null = not
  scored) a session is *stored* when it is true; without one, when ``storage_delta_tokens >
  epsilon_tokens``. With content the two rates are taken within age bands (sessions to the
  scoring checkpoint: 0-1, 2-5, 6-13, ...; a band needs both tiers) and the band figures
  averaged weighted by scored sessions, so keeping only what is recent is not selectivity.
  Reported parts ``noise_tnr``, ``signal_fnr`` (plain rates over all scored sessions) and,
  apart, ``soft_store_rate``. n = scored sessions.
- ``revision_accuracy`` (t): harmonic mean of ``update_correctness`` and
  ``deprecation_correctness`` over the probes whose family feeds it (``fact_update``,
  ``preference_reversal``; update correctness alone where no probe names an old value; 0 when
  either is 0); ``revision_persistence`` (t) the same over ``belief_half_life`` probes
  (older changes re-asked). A null ``update_correct`` / ``deprecation_correct`` leaves that probe
  out of that part. n = revision probes.
- ``action_alignment`` (t): mean of (action_score + 1) / 2 over action probes. n = action probes.
- ``privacy`` (t): 1 − canary recall = mean(correct) over canary probes. n = canary probes.
- ``storage_per_session`` (C), ``write_tokens_per_session`` (W), ``storage_delta_per_session``
  (S_delta), ``read_llm_tokens_per_retrieve`` (R), ``read_tokens_per_retrieve`` (context size),
  ``token_cost_per_session`` TC = W + S_delta + (R + context) × Q_rate: everything the system
  makes a model read (its own model calls, its storage growth, the context handed to the reader
  per query). In TC, R and context are measured on the agent's reads before each session (or
  user turn): per read, the LLM tokens charged inside it (``session_metered_read_tokens``, or
  ``session_reported_read_tokens`` when the cell is self-reported) plus the tokens of the text
  it returned (``session_read_tokens``), averaged over the replicate's reads, each read priced
  by the checkpoint it leads up to: the reads since the previous checkpoint cost, each, the
  larger of their mean and the mean the checkpoint's probes were handed (their LLM tokens and
  the memory's own text, the soft-gate buffer left out; see :mod:`._read_cost`), so answering
  the probes more generously than the agent costs as much as giving the agent that much. The
  R and context figures reported on their own are the probes' retrieves'. Tables without the
  agent's reads take the probes' retrieves for both. n = sessions (retrievals for reads). W
  and R are the ``write_tokens`` and ``llm_read_tokens`` columns: the tokens the harness's
  meter counted (or, for a backend that reports more than the meter counted, its own report;
  see :mod:`._token_audit`).
- A cell whose model spend is unknown (its models run where the meter cannot see them, and it
  does not report their tokens) knows its cost only in part: TC, W and R are lower bounds;
  MVOT is its upper bound per replicate (the figure on the known cost where the memory beats
  the amnesiac, 0 where it does not), DRIFT-C and its lift follow from it as upper bounds
  (``CellMetrics.bounds``); TES and DRIFT-E are not measured.
- Without ``snapshot()`` (``storage_tokens`` null) Selectivity, its parts and the storage
  figures are not measured (``CellMetrics.not_measured``, with the reason). So that leaving the
  snapshot out never raises a score, DRIFT-C counts Selectivity at chance
  (:data:`UNSEEN_SELECTIVITY`, also the amnesiac's in the lift) and TC counts each session's
  transcript as its storage growth (what keeping everything verbatim costs).
- ``q_rate``: Q_rate, retrieve calls per session the agent makes, measured from the reads
  recorded before each session (per replicate, then the mean); ``MetricConfig.q_rate`` for
  tables without them. n = sessions.
- ``session_read_tokens_per_read``: tokens of the text a read before a session returned
  (NaN without such reads). n = reads.
- ``tes`` = (MVOT_sys / MVOT_ref) / (TC_sys / TC_ref), both MVOTs averaged over the replicates
  where both are defined; edge cases in :func:`~._composites.token_efficiency_score`. n = sessions.
- ``read_ms_p50/p95/p99``, ``write_ms_p50/p95/p99``: latency percentiles (never the mean);
  read latency pools every retrieve: the probes' and the agent's reads before each session.
- ``ttfrt_ms_p50/p95/p99``: read_ms + reader TTFT, TTFT measured if given, else
  :data:`READER_BASE_TTFT_MS` + :data:`PREFILL_MS_PER_TOKEN` × read_tokens; pooled over the
  probes' retrievals and the reads before a session or user turn (spec §7.8: start of a new
  session turn to the first token of a memory-informed reply), whose TTFT is measured at a
  session start where the run has a reader model (``session_start_ttft_ms``), else modelled.
- ``dialectic_ms_p50/p95/p99``: per retrieval, read_ms + reader TTFT + the median ``write_ms``
  of that replicate's sessions: retrieve → incorporate → first token → store, where the store of
  the exchange is represented by the replicate's typical (p50) store because the harness stores
  whole sessions, not single exchanges. Reported on its own, not in LPS. n = retrievals.
- ``lps`` = 0.4 × min(1, 50 / read p99) + 0.6 × min(1, 200 / TTFRT p99). n = retrievals and
  reads before sessions (so for every latency percentile above but the write's).
- ``read_error_rate``, ``write_error_rate``: share of calls with an error.
- ``judge_errors`` (t): answers whose reader or judge call failed (``judge_error``), excluded from
  every probe metric (a count; its interval is its value; n = probes).
- ``ttft_measured``: share of TTFRT units (retrievals and reads before sessions) whose reader
  TTFT was measured (0 when TTFRT is modelled; its interval is its value).
- ``drift_c``, ``drift_e``: composites of :mod:`._composites` (n = probes, sessions). A
  Selectivity, Revision or Action figure measured on fewer than ``MIN_COMPONENT_UNITS`` units
  stays out of DRIFT-C (and of the amnesiac's DRIFT-C behind Lift), the weights renormalising.
- ``drift_c_lift``: DRIFT-C minus the amnesiac's DRIFT-C on the same probes and draw (its MVOT
  0, Selectivity 0.5, its own Revision Accuracy and Action Alignment). n = probes.

Errored calls are kept: a crash or timeout is part of a system's cost and behaviour.

Registered metrics
------------------
After these, every metric registered with a ``compute`` (:mod:`._metric_registry`) gets its rows,
computed from the cell's :class:`~._metric_inputs.CellInputs` as :mod:`._metric_inputs`
describes. With none registered the rows are exactly the ones above.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ._bootstrap import (
    FloatArray,
    Groups,
    IntArray,
    MetricRow,
    Resample,
    Sample,
    bootstrap_resamples,
    group_sums,
    identity_resample,
    metric_rows_table,
    ratio,
    replicate_mean,
    summarise,
    weighted_percentiles,
)
from ._builtin_metrics import BUILTIN_METRICS
from ._composites import (
    _check_horizon,
    drift_c,
    drift_e,
    latency_profile_score,
    token_efficiency_score,
)
from ._judging import JudgeFailures, judge_failures
from ._metric_inputs import CellInputs, ComputedRate, computed_rates, without_text
from ._metric_registry import computed_metric_specs
from ._peer_metrics import Leak, handoff_row, leaked, peer_parts
from ._probe_masks import metric_masks
from ._read_cost import charged_per_read, probe_handout, read_checkpoints
from ._selectivity import CONTENT_KEPT
from ._subtypes import subtype_recall
from ._token_audit import (
    COST_BOUNDS,
    COST_NOT_MEASURED,
    NO_SNAPSHOT,
    SELF_REPORTED,
    SNAPSHOT_METRICS,
    UNKNOWN_MODEL_TOKENS,
    Bound,
    TokenAudit,
    storage_measured,
    storage_trusted,
    token_audit,
    unreported_line,
    unreported_reason,
)

PREFILL_MS_PER_TOKEN: Final = 0.05
"""Modelled reader prefill: 20k context tokens per second, a locally served reader of the
size the spec's local latency targets assume (8k tokens of context cost 400 ms)."""

READER_BASE_TTFT_MS: Final = 25.0
"""Modelled reader time to first token with an empty context (scheduling plus one decode step).
Kept small on purpose: TTFRT measures what memory adds to a response, and an amnesiac reader
(empty context, no read) then meets the 200 ms target with room to spare."""

MIN_COMPONENT_UNITS: Final = 10
"""Fewest probes (sessions for Selectivity) a Revision, Action or Selectivity figure needs to
enter DRIFT-C. On fewer its 95% interval spans most of [0, 1] (four revision probes: [0, 1]),
so with a fifth of the weight it would swing the composite by a tenth either way on luck; the
figure is still reported with its n. Every arm of a cell answers the same probes, so the cell's
arms leave out the same components."""

UNSEEN_SELECTIVITY: Final = 0.5
"""Selectivity DRIFT-C counts for a backend without ``snapshot()``: chance, what keeping every
session (or none) scores, so a memory that hides what it keeps never gains by hiding it."""

EPSILON_TOKENS: Final = 8
Q_RATE: Final = 1.0
PERCENTILES: Final = (50.0, 95.0, 99.0)

METRICS: Final[Mapping[str, str]] = {spec.name: spec.description for spec in BUILTIN_METRICS}
"""The suite's own metrics, in row order, with a one-line description (registered metrics
follow them; see :func:`~._metric_registry.metric_specs`)."""

__all__ = [
    "EPSILON_TOKENS",
    "METRICS",
    "PERCENTILES",
    "PREFILL_MS_PER_TOKEN",
    "Q_RATE",
    "READER_BASE_TTFT_MS",
    "ArmData",
    "CellMetrics",
    "MetricConfig",
    "ReferenceFigures",
    "compare_arms",
    "compute_cell",
    "mark_not_applicable",
    "mark_not_measured",
    "reference_figures",
]

_Key = tuple[str, int | None]
_Figures = dict[_Key, FloatArray]

_ANSWER_COLUMNS = ("replicate", "checkpoint", "probe_id", "probe_type", "correct")
_SNAPSHOT_COLUMNS = (
    "replicate",
    "session_index",
    "tier",
    "write_tokens",
    "storage_tokens",
    "storage_delta_tokens",
    "write_ms",
)
_RETRIEVAL_COLUMNS = (
    "replicate",
    "checkpoint",
    "probe_id",
    "read_ms",
    "read_tokens",
    "llm_read_tokens",
)


@dataclass(frozen=True)
class MetricConfig:
    """Constants of the metric suite and of the bootstrap.

    Attributes:
        epsilon_tokens: A session counts as stored when its storage delta exceeds this.
        q_rate: Retrieve calls per session in TC (default 1).
        prefill_ms_per_token: Modelled reader prefill per context token (ms).
        reader_base_ttft_ms: Modelled reader TTFT with an empty context (ms).
        n_boot: Bootstrap draws (0 gives zero-width intervals).
        seed: Bootstrap seed; fixed so the output is deterministic.
        level: Interval coverage.
        min_component_units: Fewest units a Selectivity, Revision or Action figure needs to
            enter DRIFT-C (see ``MIN_COMPONENT_UNITS``).

    """

    epsilon_tokens: int = EPSILON_TOKENS
    q_rate: float = Q_RATE
    prefill_ms_per_token: float = PREFILL_MS_PER_TOKEN
    reader_base_ttft_ms: float = READER_BASE_TTFT_MS
    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95
    min_component_units: int = MIN_COMPONENT_UNITS

    def __post_init__(self) -> None:
        if self.n_boot < 0 or self.seed < 0 or self.min_component_units < 0:
            raise ValueError("n_boot, seed and min_component_units must be >= 0")
        if not 0.0 < self.level < 1.0:
            raise ValueError("level must be in (0, 1)")
        if self.q_rate < 0 or self.prefill_ms_per_token < 0 or self.reader_base_ttft_ms < 0:
            raise ValueError("q_rate and reader constants must be >= 0")


@dataclass(frozen=True)
class ArmData:
    """One arm's records for one world (see the module docstring for the columns).

    Attributes:
        answers: Scored answers, one row per (replicate, probe).
        snapshots: Per-session costs, one row per (replicate, session).
        retrievals: Per-retrieval costs, one row per (replicate, probe).
        ttft_ms: Optional measured reader TTFT per ``retrievals`` row, in the table's order.

    """

    answers: pa.Table
    snapshots: pa.Table
    retrievals: pa.Table
    ttft_ms: npt.NDArray[np.float64] | None = None


@dataclass(frozen=True)
class ReferenceFigures:
    """The reference compressor's per-replicate figures on one world.

    Attributes:
        replicates: Replicate numbers.
        storage_per_session: C_ref per replicate (final storage tokens / sessions).
        token_cost: TC_ref per replicate (tokens per session).
        mvot: MVOT_ref per replicate; ``None`` where every checkpoint was skipped.

    """

    replicates: tuple[int, ...]
    storage_per_session: tuple[float, ...]
    token_cost: tuple[float, ...]
    mvot: tuple[float | None, ...]

    def to_table(self) -> pa.Table:
        """The figures as a table ``replicate, c_ref, tc_ref, mvot_ref`` (for storage)."""
        return pa.table(
            {
                "replicate": pa.array(self.replicates, pa.int32()),
                "c_ref": pa.array(self.storage_per_session, pa.float64()),
                "tc_ref": pa.array(self.token_cost, pa.float64()),
                "mvot_ref": pa.array(self.mvot, pa.float64()),
            }
        )

    @classmethod
    def from_table(cls, table: pa.Table) -> ReferenceFigures:
        """Read figures written by :meth:`to_table`.

        Args:
            table: Columns ``replicate, c_ref, tc_ref, mvot_ref``.

        Returns:
            The figures.

        """
        _require(table, "reference figures", ("replicate", "c_ref", "tc_ref", "mvot_ref"))
        return cls(
            tuple(int(v) for v in table.column("replicate").to_pylist()),
            tuple(float(v) for v in table.column("c_ref").to_pylist()),
            tuple(float(v) for v in table.column("tc_ref").to_pylist()),
            tuple(None if v is None else float(v) for v in table.column("mvot_ref").to_pylist()),
        )


@dataclass(frozen=True)
class CellMetrics:
    """Every figure of a cell (or of a paired comparison).

    Attributes:
        rows: One row per metric and checkpoint (``None`` = the whole cell), in
            :data:`METRICS` order, then registered metrics in registration order, each metric's
            overall row first.
        samples: Whole-cell figures with their bootstrap draws, by metric name, for
            combination across horizons (:func:`~._composites.aggregate_horizons`).
        by_subtype: Recall per probe subtype (:func:`~._subtypes.subtype_recall`), the
            figures an imported dataset reports per question category.
        score_by_subtype: The mean graded score per probe subtype (``probe_answers.score``:
            LoCoMo's token F1 under an LLM reader, else 1/0 like ``correct``).
        not_applicable: Metrics the world's data cannot support; their rows are undefined.
        not_measured: Metrics the backend gave the harness no way to measure, each with the
            reason (a backend without ``snapshot()``: :data:`~._token_audit.SNAPSHOT_METRICS`);
            their rows are undefined, never zero.
        llm_tokens: The cell's LLM tokens as metered and as self-reported
            (:class:`~._token_audit.TokenAudit`); ``None`` for tables written before metering.
        leaks: The canaries the arm gave away (multi-peer worlds), for inspection.
        bounds: Figures that are bounds rather than values, each with the side it bounds: a
            cell whose model spend is unknown has its cost-dependent figures computed on the
            part that is known (:data:`~._token_audit.COST_BOUNDS`). Empty otherwise.
        judge_failures: The answers the reader or judge failed on (the arm's, the amnesiac's,
            the reference compressor's) and the figures they leave partly judged; the figures
            they leave without a judged answer are in ``not_measured``. ``None`` when every
            answer was judged. Such a cell is not to be ranked (see :mod:`._judging`).

    """

    rows: tuple[MetricRow, ...]
    samples: Mapping[str, Sample]
    by_subtype: Mapping[str, Sample] = field(default_factory=dict)
    score_by_subtype: Mapping[str, Sample] = field(default_factory=dict)
    not_applicable: frozenset[str] = frozenset()
    not_measured: Mapping[str, str] = field(default_factory=dict)
    llm_tokens: TokenAudit | None = None
    leaks: tuple[Leak, ...] = ()
    bounds: Mapping[str, Bound] = field(default_factory=dict)
    judge_failures: JudgeFailures | None = None

    def table(self) -> pa.Table:
        """The rows as a pyarrow table (``checkpoint`` is ``'all'`` or the number).

        Its ``bound`` column says which rows are bounds (``lower`` or ``upper``; null: a value).
        """
        bound = [self.bounds.get(row.metric) for row in self.rows]
        return metric_rows_table(self.rows).append_column("bound", pa.array(bound, pa.string()))

    def get(self, metric: str, checkpoint: int | None = None) -> MetricRow:
        """The row of one metric at one checkpoint (``None`` = whole cell).

        Args:
            metric: Metric name.
            checkpoint: Checkpoint number or ``None``.

        Returns:
            The row.

        Raises:
            KeyError: When the cell has no such row.

        """
        for row in self.rows:
            if row.metric == metric and row.checkpoint == checkpoint:
                return row
        raise KeyError((metric, checkpoint))


# --- loading tables into arrays -------------------------------------------------------------


def _require(table: pa.Table, what: str, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise ValueError(f"{what} table lacks column(s): {', '.join(missing)}")


def _raw(table: pa.Table, column: str) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]]:
    """Values (object or numeric) and validity of a column; an absent column is all null."""
    if column not in table.column_names:
        return np.full(table.num_rows, None, dtype=object), np.zeros(table.num_rows, bool)
    col = table.column(column)
    valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(col.to_numpy(zero_copy_only=False)), valid


def _num(table: pa.Table, column: str, what: str) -> FloatArray:
    values, valid = _raw(table, column)
    if not valid.all():
        raise ValueError(f"{what}.{column} has nulls")
    out = np.asarray(values, dtype=np.float64)
    if not np.isfinite(out).all():
        raise ValueError(f"{what}.{column} has non-finite values")
    return out


def _opt_num(table: pa.Table, column: str) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    values, valid = _raw(table, column)
    return np.where(valid, values, 0).astype(np.float64), valid


def _text(table: pa.Table, column: str) -> npt.NDArray[np.object_]:
    values, valid = _raw(table, column)
    return np.where(valid, values, "").astype(object)


def _errors(table: pa.Table, column: str = "error") -> FloatArray:
    text = _text(table, column)
    return np.asarray([1.0 if str(t).strip() else 0.0 for t in text], dtype=np.float64)


def _sorted(table: pa.Table, keys: Sequence[str]) -> tuple[pa.Table, IntArray]:
    order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys])
    return table.take(order), np.asarray(order.to_numpy(), dtype=np.int64)


def _check_unique(keys: Sequence[npt.NDArray[Any]], what: str) -> None:
    if keys[0].size < 2:
        return
    same = np.ones(keys[0].size - 1, dtype=bool)
    for k in keys:
        same &= k[1:] == k[:-1]
    if same.any():
        raise ValueError(f"{what} has duplicate rows for one key")


@dataclass(frozen=True)
class _Units:
    """One arm's data as arrays, units sorted by replicate (then checkpoint / session / probe)."""

    replicates: tuple[int, ...]
    checkpoints: tuple[int, ...]
    probe_keys: tuple[IntArray, IntArray, npt.NDArray[np.object_]]
    session_keys: tuple[IntArray, IntArray]
    retrieval_keys: tuple[IntArray, IntArray, npt.NDArray[np.object_]]
    probe_groups: Groups  # by (replicate, checkpoint)
    session_groups: Groups  # by replicate
    retrieval_groups: Groups  # by replicate
    p: Mapping[str, FloatArray]
    s: Mapping[str, FloatArray]
    q: Mapping[str, FloatArray]
    c_mem: FloatArray  # (R,) final storage tokens / sessions
    tc: FloatArray  # (R,) token cost per session: what the system makes a model read
    computed: Mapping[str, ComputedRate] = field(default_factory=dict)  # registered metrics
    storage_known: bool = True  # the backend reported its memory (snapshot())
    cost_known: bool = True  # no model spend the meter could not see is left unreported
    # The agent's reads before each session: per read, its values and its session's unit.
    r: Mapping[str, FloatArray] = field(default_factory=dict)
    read_rows: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reads_recorded: bool = False  # the tables hold the agent's reads (the loop records them)
    # Stretches of the agent's reads, each priced by the probes that close it (see
    # ._read_cost), by (replicate, checkpoint): the reads' groups and the probes'.
    read_stretches: Groups | None = None
    probe_stretches: Groups | None = None
    # Multi-peer: the hand-over figure (outside the bootstrap: it may be infinite) and the
    # canaries the arm leaked.
    handoff: MetricRow | None = None
    leaks: tuple[Leak, ...] = ()

    @property
    def layouts(self) -> tuple[IntArray, IntArray, IntArray]:
        return self.probe_keys[0], self.session_keys[0], self.retrieval_keys[0]

    def same_units(self, other: _Units) -> bool:
        if self.replicates != other.replicates or self.checkpoints != other.checkpoints:
            return False
        pairs = [
            *zip(self.probe_keys, other.probe_keys, strict=True),
            *zip(self.session_keys, other.session_keys, strict=True),
            *zip(self.retrieval_keys, other.retrieval_keys, strict=True),
        ]
        return all(a.shape == b.shape and bool(np.all(a == b)) for a, b in pairs)


def _load(arm: ArmData, amnesiac_answers: pa.Table, cfg: MetricConfig) -> _Units:
    _require(arm.answers, "answers", _ANSWER_COLUMNS)
    _require(amnesiac_answers, "amnesiac answers", _ANSWER_COLUMNS)
    _require(arm.snapshots, "snapshots", _SNAPSHOT_COLUMNS)
    _require(arm.retrievals, "retrievals", _RETRIEVAL_COLUMNS)
    if arm.answers.num_rows == 0 or arm.snapshots.num_rows == 0:
        raise ValueError("a cell needs at least one answer and one session")

    keys = ("replicate", "checkpoint", "probe_id")
    answers, _ = _sorted(arm.answers, keys)
    amnesiac, _ = _sorted(amnesiac_answers, keys)
    a_rep = _num(answers, "replicate", "answers").astype(np.int64)
    a_cp = _num(answers, "checkpoint", "answers").astype(np.int64)
    a_id = _text(answers, "probe_id")
    _check_unique([a_rep, a_cp, a_id], "answers")
    m_keys = (
        _num(amnesiac, "replicate", "amnesiac answers").astype(np.int64),
        _num(amnesiac, "checkpoint", "amnesiac answers").astype(np.int64),
        _text(amnesiac, "probe_id"),
    )
    if m_keys[0].size != a_rep.size or not all(
        bool(np.all(x == y)) for x, y in zip(m_keys, (a_rep, a_cp, a_id), strict=True)
    ):
        raise ValueError("amnesiac answers do not cover exactly the probes of the arm's answers")

    replicates = tuple(int(r) for r in np.unique(a_rep))
    checkpoints = tuple(int(c) for c in np.unique(a_cp))
    n_rep, n_cp = len(replicates), len(checkpoints)
    rep_ids = np.asarray(replicates, dtype=np.int64)
    p_rep = np.searchsorted(rep_ids, a_rep).astype(np.int64)
    p_cp = np.searchsorted(np.asarray(checkpoints, dtype=np.int64), a_cp).astype(np.int64)

    # Which rows enter which metric is each probe family's declaration (its ``feeds``).
    feeding = metric_masks(_text(answers, "probe_type"), _text(answers, "subtype"))
    canary = feeding("privacy")
    # A failed reader or judge call scores nothing (never a stand-in verdict).
    judged = _errors(answers, "judge_error") == 0
    correct, correct_ok = _opt_num(answers, "correct")
    correct_ok &= judged
    amn_correct, amn_ok = _opt_num(amnesiac, "correct")
    amn_ok &= _errors(amnesiac, "judge_error") == 0
    score, score_ok = _opt_num(answers, "action_score")
    action = feeding("action_alignment") & score_ok & judged
    if bool(np.any(np.abs(score[action]) > 1)):
        raise ValueError("answers.action_score must be in [-1, 1]")
    upd, upd_ok = _opt_num(answers, "update_correct")
    dep, dep_ok = _opt_num(answers, "deprecation_correct")
    upd_ok &= judged
    dep_ok &= judged
    amn_score, amn_score_ok = _opt_num(amnesiac, "action_score")
    amn_upd, amn_upd_ok = _opt_num(amnesiac, "update_correct")
    amn_dep, amn_dep_ok = _opt_num(amnesiac, "deprecation_correct")
    amn_judged = _errors(amnesiac, "judge_error") == 0
    fresh = feeding("revision_accuracy")
    persist = feeding("revision_persistence")

    def f(mask: npt.NDArray[np.bool_], value: FloatArray | None = None) -> FloatArray:
        base = mask.astype(np.float64)
        return base if value is None else base * value

    in_error_rate = feeding("error_rate")
    scored, amn_scored = in_error_rate & correct_ok, in_error_rate & amn_ok
    canary_scored = canary & correct_ok
    p = {
        "scored": f(scored),
        "correct": f(scored, correct),
        "amn_scored": f(amn_scored),
        "amn_correct": f(amn_scored, amn_correct),
        "action": f(action),
        "action_value": f(action, (score + 1.0) / 2.0),
        "upd": f(fresh & upd_ok),
        "upd_ok": f(fresh & upd_ok, upd),
        "dep": f(fresh & dep_ok),
        "dep_ok": f(fresh & dep_ok, dep),
        "p_upd": f(persist & upd_ok),
        "p_upd_ok": f(persist & upd_ok, upd),
        "p_dep": f(persist & dep_ok),
        "p_dep_ok": f(persist & dep_ok, dep),
        "canary": f(canary_scored),
        "canary_ok": f(canary_scored, correct),
        "judge_error": f(~judged),
        # The probes a DRIFT-C component counts towards its minimum: a failed reader or judge
        # call among them still counts, so it never drops the component from the composite.
        "upd_units": f(fresh & (upd_ok | ~judged)),
        "action_units": f(feeding("action_alignment") & (score_ok | ~judged)),
        **peer_parts(answers, feeding, correct, correct_ok),
        # The amnesiac's parts of DRIFT-C, for the lift over it.
        "amn_action": f(feeding("action_alignment") & amn_score_ok & amn_judged),
        "amn_action_value": f(
            feeding("action_alignment") & amn_score_ok & amn_judged, (amn_score + 1.0) / 2.0
        ),
        "amn_upd": f(fresh & amn_upd_ok & amn_judged),
        "amn_upd_ok": f(fresh & amn_upd_ok & amn_judged, amn_upd),
        "amn_dep": f(fresh & amn_dep_ok & amn_judged),
        "amn_dep_ok": f(fresh & amn_dep_ok & amn_judged, amn_dep),
    }

    snaps, _ = _sorted(arm.snapshots, ("replicate", "session_index"))
    s_rep_raw = _num(snaps, "replicate", "snapshots").astype(np.int64)
    s_index = _num(snaps, "session_index", "snapshots").astype(np.int64)
    _check_unique([s_rep_raw, s_index], "snapshots")
    if tuple(int(r) for r in np.unique(s_rep_raw)) != replicates:
        raise ValueError("snapshots and answers cover different replicates")
    s_rep = np.searchsorted(rep_ids, s_rep_raw).astype(np.int64)
    tier = _text(snaps, "tier")
    # Without snapshot() nothing of the memory is measured: no session counts as kept or not,
    # so Selectivity is not measured. Leaving a snapshot out must never raise a score, so the
    # cost and the composite take what keeping every session verbatim gives: each session's
    # transcript as storage growth, and chance Selectivity (0.5) in DRIFT-C. A snapshot that
    # left out text the backend retrieved counts as none.
    storage_known = storage_trusted(snaps, arm.retrievals)
    zeros = np.zeros(snaps.num_rows, dtype=np.float64)
    if storage_known:
        delta = _num(snaps, "storage_delta_tokens", "snapshots")
    elif "transcript_tokens" in snaps.column_names:
        delta = _num(snaps, "transcript_tokens", "snapshots")
    else:
        raise ValueError("snapshots: without storage_tokens the cost needs transcript_tokens")
    if not storage_known:
        stored = marked = np.zeros(snaps.num_rows, dtype=bool)
        band = zeros
    elif CONTENT_KEPT in snaps.column_names:
        # From content: a session's values in the memory after it (null: not scored).
        kept, marked = _opt_num(snaps, CONTENT_KEPT)
        stored = kept > 0
        band = _age_bands(snaps, s_rep_raw, s_index)
    else:
        # Tables without the world's session marks: storage growth stands in.
        stored = delta > cfg.epsilon_tokens
        marked = np.ones(delta.shape, dtype=bool)
        band = np.zeros(delta.shape, dtype=np.float64)
    write_ms = _num(snaps, "write_ms", "snapshots")
    storage = _num(snaps, "storage_tokens", "snapshots") if storage_known else zeros
    n_sessions = np.bincount(s_rep, minlength=n_rep).astype(np.float64)
    last = np.concatenate((np.flatnonzero(np.diff(s_rep)), [s_rep.size - 1]))
    c_mem = storage[last] / n_sessions
    s = {
        "noise": f((tier == "noise") & marked),
        "noise_kept_out": f((tier == "noise") & marked & ~stored),
        "signal": f((tier == "signal") & marked),
        "signal_stored": f((tier == "signal") & marked & stored),
        "soft": f((tier == "soft") & marked),
        "soft_stored": f((tier == "soft") & marked & stored),
        "band": band,
        "write_tokens": _num(snaps, "write_tokens", "snapshots"),
        "delta": delta,
        "write_ms": write_ms,
        "error": _errors(snaps),
    }

    retr, order = _sorted(arm.retrievals, keys)
    q_rep_raw = _num(retr, "replicate", "retrievals").astype(np.int64)
    q_cp = _num(retr, "checkpoint", "retrievals").astype(np.int64)
    q_id = _text(retr, "probe_id")
    _check_unique([q_rep_raw, q_cp, q_id], "retrievals")
    if not set(np.unique(q_rep_raw).tolist()) <= set(replicates):
        raise ValueError("retrievals name replicates the answers do not have")
    q_rep = np.searchsorted(rep_ids, q_rep_raw).astype(np.int64)
    read_ms = _num(retr, "read_ms", "retrievals")
    read_tokens = _num(retr, "read_tokens", "retrievals")
    modelled = cfg.reader_base_ttft_ms + cfg.prefill_ms_per_token * read_tokens
    if arm.ttft_ms is not None:
        measured = np.asarray(arm.ttft_ms, dtype=np.float64)
        if measured.shape != (arm.retrievals.num_rows,):
            raise ValueError("ttft_ms must have one value per retrievals row")
        measured = measured[order]
        was_measured = ~np.isnan(measured)
        if np.isinf(measured).any() or bool(np.any(measured[was_measured] < 0)):
            raise ValueError("ttft_ms must be finite (or NaN: not measured) and >= 0")
        ttft = np.where(was_measured, measured, modelled)
    else:
        was_measured = np.zeros(read_tokens.shape, dtype=bool)
        ttft = modelled
    write_p50 = np.array(
        [
            weighted_percentiles(write_ms[s_rep == r], np.ones((1, int(n_sessions[r]))), [50.0])[
                0, 0
            ]
            for r in range(n_rep)
        ]
    )
    # What the memory itself handed over at a probe: the context less the soft gate's buffer,
    # which the harness appends at probes only (the agent's own reads never carry it).
    buffer = (
        _num(retr, "soft_buffer_tokens", "retrievals")
        if "soft_buffer_tokens" in retr.column_names
        else np.zeros(read_tokens.shape)
    )
    llm_read = _num(retr, "llm_read_tokens", "retrievals")
    q = {
        "read_ms": read_ms,
        "read_tokens": read_tokens,
        "handed": probe_handout(read_tokens, llm_read, buffer),
        "llm_read_tokens": llm_read,
        "ttfrt_ms": read_ms + ttft,
        "dialectic_ms": read_ms + ttft + write_p50[q_rep],
        "error": _errors(retr),
        "ttft_measured": was_measured.astype(np.float64),
    }
    audit = token_audit(snaps, retr)
    s["reads"], read_rows, r = _session_reads(
        snaps, cfg, self_reported=audit is not None and audit.source == SELF_REPORTED
    )
    if read_rows.size:
        # Measured at a session start where the run has a reader model, else modelled.
        r_measured = np.isfinite(r["ttft"])
        r_ttft = np.where(
            r_measured, r["ttft"], cfg.reader_base_ttft_ms + cfg.prefill_ms_per_token * r["tokens"]
        )
        r_ttfrt = r["read_ms"] + r_ttft
        r = {
            **r,
            "ttfrt_ms": r_ttfrt,
            "dialectic_ms": r_ttfrt + write_p50[s_rep[read_rows]],
            "ttft_measured": r_measured.astype(np.float64),
        }
    cps = np.asarray(checkpoints, dtype=np.int64)
    priced_by = read_checkpoints(s_rep[read_rows], s_index[read_rows], q_rep, q_cp)
    # A replicate without probes: its reads in one stretch that no probe prices.
    read_stretch = s_rep[read_rows] * n_cp + np.searchsorted(cps, np.maximum(priced_by, cps[0]))
    probe_stretch = q_rep * n_cp + np.minimum(np.searchsorted(cps, q_cp), n_cp - 1)
    handoff = feeding("handoff_sessions") & correct_ok
    units = _Units(
        handoff=handoff_row(answers, retr, handoff, correct, cfg.n_boot, cfg.seed, cfg.level)
        if handoff.any()
        else None,
        leaks=leaked(answers, retr, canary, correct_ok),
        replicates=replicates,
        checkpoints=checkpoints,
        probe_keys=(p_rep, a_cp, a_id),
        session_keys=(s_rep, s_index),
        retrieval_keys=(q_rep, q_cp, q_id),
        probe_groups=Groups.of(p_rep * n_cp + p_cp, n_rep * n_cp),
        session_groups=Groups.of(s_rep, n_rep),
        retrieval_groups=Groups.of(q_rep, n_rep),
        p=p,
        s=s,
        q=q,
        c_mem=c_mem,
        tc=np.zeros(n_rep),
        storage_known=storage_known,
        cost_known=audit is None or audit.cost_known,
        r=r,
        read_rows=read_rows,
        read_stretches=Groups.of(read_stretch, n_rep * n_cp),
        probe_stretches=Groups.of(probe_stretch, n_rep * n_cp),
        reads_recorded="session_read_ms" in snaps.column_names,
    )
    identity = identity_resample(n_rep, units.layouts)
    return replace(units, tc=_replicate_costs(units, identity)["tc"][0])


def _session_reads(
    snaps: pa.Table, cfg: MetricConfig, self_reported: bool = False
) -> tuple[FloatArray, IntArray, dict[str, FloatArray]]:
    """Reads per session, each read's session row, and each read's latency and tokens.

    Tables without the loop's session reads count ``cfg.q_rate`` reads per session, with no
    read of their own to time. ``tokens`` are those of the text a read returned, ``llm`` the
    LLM tokens charged inside it: metered, or the backend's report when the cell's figures
    are self-reported (see :mod:`._token_audit`). ``ttft`` is the reader model's measured
    time to first token after a session's first read (``session_start_ttft_ms``), NaN where
    none was measured.
    """
    if "session_read_ms" not in snaps.column_names:
        return np.full(snaps.num_rows, cfg.q_rate), np.zeros(0, dtype=np.int64), {}
    latency = snaps.column("session_read_ms").combine_chunks()
    counts = np.asarray(pc.list_value_length(latency).fill_null(0).to_numpy(), dtype=np.int64)
    rows = np.repeat(np.arange(snaps.num_rows, dtype=np.int64), counts)
    values = {}
    charged = "session_reported_read_tokens" if self_reported else "session_metered_read_tokens"
    columns = [("read_ms", latency), ("tokens", snaps.column("session_read_tokens"))]
    if charged in snaps.column_names:
        columns.append(("llm", snaps.column(charged)))
    for name, column in columns:
        flat = pc.list_flatten(column).to_numpy(zero_copy_only=False)
        values[name] = np.asarray(flat, dtype=np.float64)
        if values[name].shape != rows.shape or not np.isfinite(values[name]).all():
            raise ValueError(f"snapshots.session_{name} does not hold one finite value per read")
    ttft = np.full(rows.size, np.nan)
    if "session_start_ttft_ms" in snaps.column_names:
        measured, valid = _opt_num(snaps, "session_start_ttft_ms")
        first = np.concatenate(([0], np.cumsum(counts)[:-1]))[counts > 0]
        with_reads = counts > 0
        ttft[first] = np.where(valid[with_reads], measured[with_reads], np.nan)
        if bool(np.any(ttft[np.isfinite(ttft)] < 0)):
            raise ValueError("snapshots.session_start_ttft_ms must be >= 0")
    values["ttft"] = ttft
    values.setdefault("llm", np.zeros(rows.size))
    return counts.astype(np.float64), rows, values


def _with_computed(
    u: _Units, arm: ArmData, amnesiac_answers: pa.Table, cfg: MetricConfig, horizon: str
) -> _Units:
    """``u`` with the rates of every registered metric (``u`` itself when none is registered)."""
    specs = computed_metric_specs()
    if not specs:
        return u
    keys = ("replicate", "checkpoint", "probe_id")
    # The same sorts as _load, so the rates line up with the units row for row.
    inputs = CellInputs(
        answers=without_text(_sorted(arm.answers, keys)[0]),
        amnesiac=without_text(_sorted(amnesiac_answers, keys)[0]),
        snapshots=without_text(_sorted(arm.snapshots, ("replicate", "session_index"))[0]),
        retrievals=without_text(_sorted(arm.retrievals, keys)[0]),
        horizon=horizon,
        config=cfg,
    )
    return replace(u, computed=computed_rates(specs, inputs))


# --- per-replicate building blocks (shared by the arm and the reference) ----------------------


def _probe_rates(u: _Units, w: FloatArray, num: str, den: str) -> tuple[FloatArray, FloatArray]:
    """Rate per (draw, replicate, checkpoint) and per (draw, replicate)."""
    return _probe_rates_of(u, w, u.p[num], u.p[den])


def _probe_rates_of(
    u: _Units, w: FloatArray, num: FloatArray, den: FloatArray
) -> tuple[FloatArray, FloatArray]:
    shape = (w.shape[0], len(u.replicates), len(u.checkpoints))
    n = group_sums(w, num, u.probe_groups).reshape(shape)
    d = group_sums(w, den, u.probe_groups).reshape(shape)
    return ratio(n, d), ratio(n.sum(axis=2), d.sum(axis=2))


def _replicate_rate(w: FloatArray, values: FloatArray, groups: Groups) -> FloatArray:
    return ratio(group_sums(w, values, groups), group_sums(w, None, groups))


def _mean_over_checkpoints(x: FloatArray) -> FloatArray:
    defined = np.isfinite(x)
    return ratio(np.where(defined, x, 0.0).sum(axis=2), defined.sum(axis=2).astype(np.float64))


def _efficiency_factor(c_ref: FloatArray, c_mem: FloatArray) -> FloatArray:
    """min(1, TC_ref / TC_mem) per replicate; an arm costing nothing pays no penalty."""
    out = np.ones_like(c_mem)
    np.divide(c_ref, c_mem, out=out, where=c_mem > 0)
    return np.minimum(1.0, out)


@dataclass(frozen=True)
class _Mvot:
    e_mem: FloatArray  # (b, R, T)
    e_amn: FloatArray  # (b, R, T)
    terms: FloatArray  # (b, R, T), NaN where skipped or undefined
    per_replicate: FloatArray  # (b, R)


def _replicate_mvot(u: _Units, rs: Resample, c_ref: FloatArray) -> _Mvot:
    w = rs.units[0]
    acc, _ = _probe_rates(u, w, "correct", "scored")
    amn, _ = _probe_rates(u, w, "amn_correct", "amn_scored")
    e_mem, e_amn = 1.0 - acc, 1.0 - amn
    valid = np.isfinite(e_mem) & (e_amn > 0)
    rel = np.full(e_mem.shape, np.nan)
    np.divide(e_amn - e_mem, e_amn, out=rel, where=valid)
    terms = rel * _efficiency_factor(c_ref, u.tc)[None, :, None]
    return _Mvot(e_mem, e_amn, terms, _mean_over_checkpoints(terms))


def _replicate_costs(u: _Units, rs: Resample) -> dict[str, FloatArray]:
    _, ws, wq = rs.units
    # Q_rate as measured: the agent's retrieves per session (see _session_reads).
    q_rate = _replicate_rate(ws, u.s["reads"], u.session_groups)
    write = _replicate_rate(ws, u.s["write_tokens"], u.session_groups)
    delta = _replicate_rate(ws, u.s["delta"], u.session_groups)
    calls = group_sums(wq, None, u.retrieval_groups)
    reads = _replicate_rate(wq, u.q["llm_read_tokens"], u.retrieval_groups)
    context = _replicate_rate(wq, u.q["read_tokens"], u.retrieval_groups)
    if u.reads_recorded:
        # What each of the agent's own reads hands over: the LLM tokens spent inside it and
        # the text it returns. Its reads go with their sessions in a resample.
        wr = ws[:, u.read_rows]
        groups = Groups.of(u.session_keys[0][u.read_rows], len(u.replicates))
        made = group_sums(wr, None, groups)
        # The probes are reads too, and the only ones scored: each checkpoint's probes price
        # the agent's reads since the previous one at no less than what they were handed (see
        # ._read_cost). Against a stretch's mean, not the read next to the probes: a memory
        # that can tell which read follows the probes could be generous there only.
        assert u.read_stretches is not None and u.probe_stretches is not None
        made_in = group_sums(wr, None, u.read_stretches)
        own = ratio(group_sums(wr, u.r["llm"] + u.r["tokens"], u.read_stretches), made_in)
        closing = _replicate_rate(wq, u.q["handed"], u.probe_stretches)
        spent = made_in * np.nan_to_num(charged_per_read(own, closing))
        per_read = ratio(spent.reshape((*made.shape, -1)).sum(axis=2), made)
    else:
        # Tables without the agent's reads: the probes' retrieves stand in for them.
        made, per_read = calls, reads + context
    # A replicate without reads spends no read tokens (rather than being undefined).
    per_read = np.where(made > 0, np.nan_to_num(per_read), 0.0)
    return {
        "write": write,
        "delta": delta,
        "reads": reads,
        "context": context,
        "q_rate": q_rate,
        # Everything the system makes a model read: its own calls, what it stores, and what
        # it hands over on every query the agent makes.
        "tc": write + delta + q_rate * per_read,
    }


@dataclass(frozen=True)
class _Reference:
    """TC_ref per arm replicate, and MVOT_ref / TC_ref either fixed or recomputed per draw.

    ``storage`` holds TC_ref per replicate, the reference side of MVOT's efficiency term.
    """

    storage: FloatArray
    mvot: FloatArray | None = None
    cost: FloatArray | None = None
    units: _Units | None = None

    def per_replicate(self, rs: Resample, cfg: MetricConfig) -> tuple[FloatArray, FloatArray]:
        if self.units is not None:
            own = _replicate_mvot(self.units, rs, self.units.tc).per_replicate
            return own, _replicate_costs(self.units, rs)["tc"]
        assert self.mvot is not None and self.cost is not None
        shape = rs.replicates.shape
        return np.broadcast_to(self.mvot, shape), np.broadcast_to(self.cost, shape)


def _reference(
    reference: ReferenceFigures | ArmData,
    units: _Units,
    amnesiac_answers: pa.Table,
    cfg: MetricConfig,
) -> _Reference:
    if isinstance(reference, ArmData):
        ref_units = _load(reference, amnesiac_answers, cfg)
        if not ref_units.same_units(units):
            raise ValueError("the reference arm's probes, sessions or retrievals are not the arm's")
        return _Reference(ref_units.tc, units=ref_units)
    index = {r: i for i, r in enumerate(reference.replicates)}
    missing = [r for r in units.replicates if r not in index]
    if missing:
        raise ValueError(f"reference figures lack replicate(s) {missing}")
    pick = [index[r] for r in units.replicates]
    mvot = np.array([np.nan if reference.mvot[i] is None else reference.mvot[i] for i in pick])
    storage = np.array([reference.storage_per_session[i] for i in pick], dtype=np.float64)
    cost = np.array([reference.token_cost[i] for i in pick], dtype=np.float64)
    if not (np.isfinite(storage).all() and np.isfinite(cost).all()):
        raise ValueError("reference storage and token cost must be finite")
    return _Reference(cost, mvot=mvot, cost=cost)


# --- the figures of one draw block ----------------------------------------------------------


def _harmonic(a: FloatArray, b: FloatArray) -> FloatArray:
    total = a + b
    out = np.full(total.shape, np.nan)
    np.divide(2.0 * a * b, total, out=out, where=total > 0)
    return np.where(total == 0, 0.0, out)


def _revision(update: FloatArray, deprecation: FloatArray) -> FloatArray:
    """The harmonic mean; update correctness alone where no probe names an old value.

    Imported data (a dataset's knowledge-update questions) can ask for the new value without
    naming the old one, so deprecation cannot be scored there; the update is still measured.
    """
    return np.where(np.isnan(deprecation), update, _harmonic(update, deprecation))


def _age_bands(snaps: pa.Table, replicate: IntArray, session_index: IntArray) -> FloatArray:
    """Each session's age band at the checkpoint that scores it; -1 after the last checkpoint.

    The age is the number of sessions between it and the first checkpoint snapshot at or after
    it; band k holds ages 2^k - 2 to 2^(k+1) - 3 (0-1; 2-5; 6-13; 14-29; ...).
    """
    flags, valid = _raw(snaps, "checkpoint")
    at_checkpoint = np.asarray(valid, dtype=bool) & np.asarray(flags, dtype=bool)
    band = np.full(session_index.shape, -1.0)
    for rep in np.unique(replicate):
        rows = np.flatnonzero(replicate == rep)
        stops = np.sort(session_index[rows[at_checkpoint[rows]]])
        if stops.size == 0:
            continue  # no checkpoint snapshot: nothing of this replicate is scored
        position = np.searchsorted(stops, session_index[rows], side="left")
        scored = position < stops.size
        age = stops[np.minimum(position, stops.size - 1)] - session_index[rows]
        band[rows[scored]] = np.floor(np.log2(age[scored] + 2.0))
    return band


def _banded_selectivity(u: _Units, ws: FloatArray, m: FloatArray) -> FloatArray:
    """Selectivity computed within age bands, then averaged weighted by scored sessions.

    Scored signal sessions sit nearer their checkpoint than scored noise sessions (a signal
    superseded before the checkpoint, or said again, is not scored), so over all sessions a
    memory that keeps only what is recent keeps more signal than noise without telling them
    apart. Within a band of like ages it keeps both alike; a band needs both tiers to count.
    """
    groups = u.session_groups
    band = u.s["band"]
    num = np.zeros((ws.shape[0], groups.n_groups))
    den = np.zeros_like(num)
    for value in np.unique(band[band >= 0]):
        inside = (band == value).astype(np.float64)
        noise = group_sums(ws, u.s["noise"] * inside, groups)
        signal = group_sums(ws, u.s["signal"] * inside, groups)
        part = (
            ratio(group_sums(ws, u.s["noise_kept_out"] * inside, groups), noise)
            + ratio(group_sums(ws, u.s["signal_stored"] * inside, groups), signal)
        ) / 2.0
        weight = np.where(np.isfinite(part), noise + signal, 0.0)
        num += weight * np.where(np.isfinite(part), part, 0.0)
        den += weight
    return replicate_mean(ratio(num, den), m)


def _figures(u: _Units, rs: Resample, ref: _Reference, cfg: MetricConfig, horizon: str) -> _Figures:
    m = rs.replicates
    wp, ws, wq = rs.units
    out: _Figures = {}

    def put(name: str, overall: FloatArray, per_checkpoint: FloatArray | None = None) -> None:
        out[(name, None)] = overall
        if per_checkpoint is not None:
            for j, cp in enumerate(u.checkpoints):
                out[(name, cp)] = per_checkpoint[:, j]

    def probe_metric(num: str, den: str) -> tuple[FloatArray, FloatArray]:
        per_cp, per_rep = _probe_rates(u, wp, num, den)
        return replicate_mean(per_rep, m), replicate_mean(per_cp, m)

    mv = _replicate_mvot(u, rs, ref.storage)
    if u.cost_known:
        put("mvot", mvot := replicate_mean(mv.per_replicate, m), replicate_mean(mv.terms, m))
    else:
        # A model spend the harness cannot see: the cost factor on the known cost is at least
        # the true one, so the most MVOT can be is the figure on it where the memory beats the
        # amnesiac, and 0 where it does not (an unbounded spend shrinks the term to 0).
        mvot = replicate_mean(np.maximum(mv.per_replicate, 0.0), m)
        put("mvot", mvot, replicate_mean(np.maximum(mv.terms, 0.0), m))

    def session_metric(num: str, den: str) -> FloatArray:
        groups = u.session_groups
        return replicate_mean(
            ratio(group_sums(ws, u.s[num], groups), group_sums(ws, u.s[den], groups)), m
        )

    tnr = session_metric("noise_kept_out", "noise")
    tpr = session_metric("signal_stored", "signal")
    soft = session_metric("soft_stored", "soft")
    selectivity = _banded_selectivity(u, ws, m)
    put("selectivity", selectivity)

    upd, upd_t = probe_metric("upd_ok", "upd")
    dep, dep_t = probe_metric("dep_ok", "dep")
    revision = _revision(upd, dep)
    put("revision_accuracy", revision, _revision(upd_t, dep_t))
    action, action_t = probe_metric("action_value", "action")
    put("action_alignment", action, action_t)
    privacy, privacy_t = probe_metric("canary_ok", "canary")
    put("privacy", privacy, privacy_t)
    consistency, consistency_t = probe_metric("cons_ok", "cons")
    put("consistency", consistency, consistency_t)
    agreement, agreement_t = probe_metric("agree_ok", "cons")
    put("consistency_agreement", agreement, agreement_t)
    attribution, attribution_t = probe_metric("attr_ok", "attr")
    put("attribution", attribution, attribution_t)

    costs = _replicate_costs(u, rs)
    mvot_ref_r, cost_ref_r = ref.per_replicate(rs, cfg)
    # TES compares the two MVOTs over the same replicates.
    joint = np.isfinite(mv.per_replicate) & np.isfinite(mvot_ref_r)
    mvot_sys = replicate_mean(np.where(joint, mv.per_replicate, np.nan), m)
    mvot_ref = replicate_mean(np.where(joint, mvot_ref_r, np.nan), m)
    cost_sys = replicate_mean(costs["tc"], m)
    cost_ref = replicate_mean(np.where(np.isfinite(costs["tc"]), cost_ref_r, np.nan), m)
    tes = token_efficiency_score(mvot_sys, mvot_ref, cost_sys, cost_ref)
    put("tes", tes)

    # Read latency and TTFRT pool the probes' retrieves with the agent's reads before sessions.
    wr = ws[:, u.read_rows]
    pooled_w = np.concatenate((wq, wr), axis=1)

    def pooled(name: str) -> FloatArray:
        values = np.concatenate((u.q[name], u.r.get(name, np.zeros(0))))
        return weighted_percentiles(values, pooled_w, PERCENTILES)

    read_p = pooled("read_ms")
    write_p = weighted_percentiles(u.s["write_ms"], ws, PERCENTILES)
    ttfrt_p = pooled("ttfrt_ms")
    dialectic_p = pooled("dialectic_ms")
    lps = latency_profile_score(read_p[:, -1], ttfrt_p[:, -1])
    put("lps", lps)

    def enough(figure: FloatArray, units: FloatArray) -> FloatArray:
        """The figure for DRIFT-C, or undefined when it rests on too few units."""
        return figure if _enters_drift_c(units, cfg) else np.full_like(figure, np.nan)

    selectivity_c = (
        enough(selectivity, u.s["noise"] + u.s["signal"])
        if u.storage_known
        else np.full_like(selectivity, UNSEEN_SELECTIVITY)
    )
    revision_c = enough(revision, u.p["upd_units"])
    action_c = enough(action, u.p["action_units"])
    composite = drift_c(horizon, mvot, selectivity_c, revision_c, action_c)
    put("drift_c", composite)
    # The amnesiac on the same draw: MVOT 0 by definition, Selectivity 0.5 (it keeps no signal
    # session and stores no noise), its own Revision Accuracy and Action Alignment.
    amn_upd, _ = probe_metric("amn_upd_ok", "amn_upd")
    amn_dep, _ = probe_metric("amn_dep_ok", "amn_dep")
    amn_action, _ = probe_metric("amn_action_value", "amn_action")
    amn_revision = np.where(np.isfinite(revision_c), _revision(amn_upd, amn_dep), np.nan)
    amn_action = np.where(np.isfinite(action_c), amn_action, np.nan)
    # The same components are defined for both, so the weights renormalise alike.
    baseline = drift_c(
        horizon,
        np.where(np.isfinite(mvot), 0.0, np.nan),
        np.where(np.isfinite(selectivity_c), 0.5, np.nan),
        amn_revision,
        amn_action,
    )
    put("drift_c_lift", composite - baseline)
    put("drift_e", drift_e(tes, lps))

    put(
        "error_rate",
        replicate_mean(_mean_over_checkpoints(mv.e_mem), m),
        replicate_mean(mv.e_mem, m),
    )
    put(
        "error_rate_amnesiac",
        replicate_mean(_mean_over_checkpoints(mv.e_amn), m),
        replicate_mean(mv.e_amn, m),
    )
    put("update_correctness", upd, upd_t)
    put("deprecation_correctness", dep, dep_t)
    p_upd, p_upd_t = probe_metric("p_upd_ok", "p_upd")
    p_dep, p_dep_t = probe_metric("p_dep_ok", "p_dep")
    put("revision_persistence", _harmonic(p_upd, p_dep), _harmonic(p_upd_t, p_dep_t))
    put("noise_tnr", tnr)
    put("signal_fnr", 1.0 - tpr)
    put("soft_store_rate", soft)
    put("storage_per_session", replicate_mean(np.broadcast_to(u.c_mem, m.shape), m))
    put("write_tokens_per_session", replicate_mean(costs["write"], m))
    put("storage_delta_per_session", replicate_mean(costs["delta"], m))
    put("read_llm_tokens_per_retrieve", replicate_mean(costs["reads"], m))
    put("read_tokens_per_retrieve", replicate_mean(costs["context"], m))
    put("q_rate", replicate_mean(costs["q_rate"], m))
    if u.read_rows.size:
        read_groups = Groups.of(u.session_keys[0][u.read_rows], len(u.replicates))
        put(
            "session_read_tokens_per_read",
            replicate_mean(_replicate_rate(wr, u.r["tokens"], read_groups), m),
        )
    else:
        put("session_read_tokens_per_read", np.full(m.shape[0], np.nan))
    put("token_cost_per_session", cost_sys)
    for name, block in (
        ("read_ms", read_p),
        ("write_ms", write_p),
        ("ttfrt_ms", ttfrt_p),
        ("dialectic_ms", dialectic_p),
    ):
        for j, pct in enumerate(PERCENTILES):
            put(f"{name}_p{int(pct)}", block[:, j])
    put("read_error_rate", replicate_mean(_replicate_rate(wq, u.q["error"], u.retrieval_groups), m))
    put("write_error_rate", replicate_mean(_replicate_rate(ws, u.s["error"], u.session_groups), m))
    for name, rate in u.computed.items():
        if rate.unit == "probe":
            per_cp, per_rep = _probe_rates_of(u, wp, rate.numerator, rate.denominator)
            put(name, replicate_mean(per_rep, m), replicate_mean(per_cp, m))
            continue
        w, groups = (ws, u.session_groups) if rate.unit == "session" else (wq, u.retrieval_groups)
        per_rep = ratio(
            group_sums(w, rate.numerator, groups), group_sums(w, rate.denominator, groups)
        )
        put(name, replicate_mean(per_rep, m))
    return out


# --- counts, rows and the public entry points -------------------------------------------------

_PROBE_COUNTS: Final[Mapping[str, tuple[str, ...]]] = {
    "error_rate": ("scored",),
    "error_rate_amnesiac": ("amn_scored",),
    "revision_accuracy": ("upd", "dep"),
    "update_correctness": ("upd",),
    "deprecation_correctness": ("dep",),
    "revision_persistence": ("p_upd", "p_dep"),
    "action_alignment": ("action",),
    "privacy": ("canary",),
    "consistency": ("cons",),
    "consistency_agreement": ("cons",),
    "attribution": ("attr",),
    "drift_c": ("scored",),
    "drift_c_lift": ("scored",),
}
_SESSION_COUNTS: Final[Mapping[str, tuple[str, ...]]] = {
    "selectivity": ("noise", "signal"),
    "noise_tnr": ("noise",),
    "signal_fnr": ("signal",),
    "soft_store_rate": ("soft",),
}
_POOLED_METRICS: Final = frozenset(
    {"lps"}
    | {f"{k}_p{int(p)}" for k in ("read_ms", "ttfrt_ms", "dialectic_ms") for p in PERCENTILES}
)
"""Figures over every retrieve: the probes' and the agent's reads before sessions."""
_RETRIEVAL_METRICS: Final = frozenset(
    {"lps", "read_llm_tokens_per_retrieve", "read_tokens_per_retrieve", "read_error_rate"}
    | {f"{k}_p{int(p)}" for k in ("read_ms", "ttfrt_ms", "dialectic_ms") for p in PERCENTILES}
)


def _counts(u: _Units, mvot: _Mvot) -> dict[_Key, int]:
    p_cp = u.probe_keys[1]
    cps = np.asarray(u.checkpoints, dtype=np.int64)
    counts: dict[_Key, int] = {}

    def per_checkpoint(name: str, mask: npt.NDArray[np.bool_]) -> None:
        counts[(name, None)] = int(mask.sum())
        for cp in u.checkpoints:
            counts[(name, cp)] = int((mask & (p_cp == cp)).sum())

    for name, parts in _PROBE_COUNTS.items():
        per_checkpoint(name, np.logical_or.reduce([u.p[k] > 0 for k in parts]))
    kept = np.isfinite(mvot.terms[0])  # (R, T): the checkpoints MVOT did not skip
    p_index = np.searchsorted(cps, p_cp)
    per_checkpoint("mvot", (u.p["scored"] > 0) & kept[u.probe_keys[0], p_index])
    n_sessions, n_retrievals = u.session_keys[0].size, u.retrieval_keys[0].size
    n_reads = u.read_rows.size
    counts[("session_read_tokens_per_read", None)] = n_reads
    for name in _POOLED_METRICS:
        counts[(name, None)] = n_retrievals + n_reads
    for name, parts in _SESSION_COUNTS.items():
        counts[(name, None)] = int(sum((u.s[k] > 0).sum() for k in parts))
    for name in METRICS:
        if (name, None) not in counts:
            counts[(name, None)] = n_retrievals if name in _RETRIEVAL_METRICS else n_sessions
    for name, rate in u.computed.items():
        if rate.unit == "probe":
            per_checkpoint(name, rate.denominator > 0)
        else:
            counts[(name, None)] = int((rate.denominator > 0).sum())
    return counts


def _skipped_rows(u: _Units, mvot: _Mvot) -> list[MetricRow]:
    e_amn = mvot.e_amn[0]
    considered = np.isfinite(e_amn)
    skipped = considered & (e_amn == 0)
    rows = [
        MetricRow(
            "mvot_skipped",
            None,
            float(skipped.sum()),
            float(skipped.sum()),
            float(skipped.sum()),
            int(considered.sum()),
        )
    ]
    for j, cp in enumerate(u.checkpoints):
        k = float(skipped[:, j].sum())
        rows.append(MetricRow("mvot_skipped", cp, k, k, k, int(considered[:, j].sum())))
    return rows


_COUNTED: Final = frozenset({"mvot_skipped", "judge_errors", "ttft_measured", "handoff_sessions"})
"""Diagnostics reported as observed values (no interval), and not compared between arms."""


def _counted_rows(u: _Units, mvot: _Mvot) -> list[MetricRow]:
    """``mvot_skipped``, ``judge_errors`` and ``ttft_measured``: observed values, no draws."""
    rows = _skipped_rows(u, mvot)
    failed, p_cp = u.p["judge_error"], u.probe_keys[1]
    total = float(failed.sum())
    rows.append(MetricRow("judge_errors", None, total, total, total, int(failed.size)))
    if total:
        for cp in u.checkpoints:
            mask = p_cp == cp
            k = float(failed[mask].sum())
            rows.append(MetricRow("judge_errors", cp, k, k, k, int(mask.sum())))
    # The reads before sessions are TTFRT units too (measured at session starts with a reader).
    measured = np.concatenate((u.q["ttft_measured"], u.r.get("ttft_measured", np.zeros(0))))
    share = float(measured.mean()) if measured.size else None
    rows.append(MetricRow("ttft_measured", None, share, share, share, int(measured.size)))
    rows.append(u.handoff or MetricRow("handoff_sessions", None, None, None, None, 0))
    return rows


def _bootstrap(
    fn: Callable[[Resample], _Figures], u: _Units, cfg: MetricConfig, point: _Figures
) -> _Figures:
    blocks = [
        fn(rs) for rs in bootstrap_resamples(len(u.replicates), u.layouts, cfg.n_boot, cfg.seed)
    ]
    return {k: np.concatenate([b[k] for b in blocks]) if blocks else np.zeros(0) for k in point}


def _assemble(
    point: _Figures,
    draws: _Figures,
    counts: Mapping[_Key, int],
    cfg: MetricConfig,
    skipped: Iterable[MetricRow],
    names: Sequence[str],
) -> CellMetrics:
    by_metric: dict[str, list[_Key]] = {}
    for key in point:
        by_metric.setdefault(key[0], []).append(key)
    rows: list[MetricRow] = []
    samples: dict[str, Sample] = {}
    for name in names:
        if name in _COUNTED:
            rows.extend(r for r in skipped if r.metric == name)
            continue
        overall_n = counts[(name, None)]
        for key in by_metric[name]:
            if key[1] is not None and overall_n == 0:
                continue  # no per-checkpoint curve for a metric the cell cannot measure
            row = summarise(
                name, key[1], float(point[key][0]), draws[key], counts.get(key, 0), cfg.level
            )
            rows.append(row)
            if key[1] is None:
                samples[name] = Sample(row.value, draws[key], row.n)
    return CellMetrics(tuple(rows), samples)


def compute_cell(
    arm: ArmData,
    amnesiac_answers: pa.Table,
    reference: ReferenceFigures | ArmData,
    horizon: str,
    config: MetricConfig | None = None,
    not_applicable: Iterable[str] = (),
) -> CellMetrics:
    """Every metric of one cell, overall and per checkpoint, with bootstrap intervals.

    Args:
        arm: The arm's answers, snapshots and retrievals (and optional measured TTFT).
        amnesiac_answers: Answers to the same probes from an empty context.
        reference: The reference compressor on the same world: its per-replicate
            :class:`ReferenceFigures` (fixed per replicate), or its :class:`ArmData`, whose
            figures are then recomputed in every draw with the same resample indices.
        horizon: ``short``, ``medium`` or ``long`` (DRIFT-C weights).
        config: Constants and bootstrap settings; defaults to :class:`MetricConfig`.
        not_applicable: Metrics the world's data cannot support (see
            :func:`mark_not_applicable`).

    Returns:
        Rows in :data:`METRICS` order (then every registered metric's) and the whole-cell
        samples.

    Raises:
        ValueError: On missing columns, nulls in required columns, duplicate keys, amnesiac
            answers that do not match the arm's probes, reference data for another world, or an
            unknown horizon.

    """
    cfg = config or MetricConfig()
    _check_horizon(horizon)
    u = _with_computed(_load(arm, amnesiac_answers, cfg), arm, amnesiac_answers, cfg, horizon)
    ref = _reference(reference, u, amnesiac_answers, cfg)

    def fn(rs: Resample) -> _Figures:
        return _figures(u, rs, ref, cfg, horizon)

    identity = identity_resample(len(u.replicates), u.layouts)
    point = fn(identity)
    mvot = _replicate_mvot(u, identity, ref.storage)
    metrics = _assemble(
        point,
        _bootstrap(fn, u, cfg, point),
        _counts(u, mvot),
        cfg,
        _counted_rows(u, mvot),
        (*METRICS, *u.computed),
    )
    by_subtype = subtype_recall(arm.answers, n_boot=cfg.n_boot, seed=cfg.seed)
    scores = (
        subtype_recall(arm.answers, column="score", n_boot=cfg.n_boot, seed=cfg.seed)
        if "score" in arm.answers.column_names
        else {}
    )
    audit = token_audit(arm.snapshots, arm.retrievals)
    audited = replace(
        metrics,
        leaks=u.leaks,
        by_subtype=by_subtype,
        score_by_subtype=scores,
        llm_tokens=audit,
    )
    if not storage_measured(arm.snapshots):
        audited = mark_not_measured(audited, dict.fromkeys(SNAPSHOT_METRICS, NO_SNAPSHOT))
    elif (hidden := unreported_line(arm.retrievals)) is not None:
        reason = unreported_reason(hidden)
        audited = mark_not_measured(audited, dict.fromkeys(SNAPSHOT_METRICS, reason))
    if not u.cost_known:
        audited = replace(
            mark_not_measured(audited, dict.fromkeys(COST_NOT_MEASURED, UNKNOWN_MODEL_TOKENS)),
            bounds=dict(COST_BOUNDS),
        )
    return _mark_judge_failures(
        mark_not_applicable(audited, not_applicable),
        arm.answers,
        amnesiac_answers,
        # The reference compressor's own cell: its answers are the arm's, counted once.
        reference.answers if isinstance(reference, ArmData) and reference is not arm else None,
        [name for name, rate in u.computed.items() if rate.unit == "probe"],
        # The judged parts of DRIFT-C that entered it, by the units DRIFT-C itself counted.
        {
            part
            for part, units in (
                ("revision_accuracy", u.p["upd_units"]),
                ("action_alignment", u.p["action_units"]),
            )
            if _enters_drift_c(units, cfg)
        },
    )


def _enters_drift_c(units: FloatArray, cfg: MetricConfig) -> bool:
    """Whether a Revision or Action figure rests on enough units to enter DRIFT-C."""
    return float(units.sum()) >= cfg.min_component_units


def _mark_judge_failures(
    metrics: CellMetrics,
    answers: pa.Table,
    amnesiac: pa.Table,
    reference: pa.Table | None,
    probe_metrics: Sequence[str],
    entered: Collection[str],
) -> CellMetrics:
    """``metrics`` with what failed reader or judge calls leave of it (see :mod:`._judging`)."""
    values = {row.metric: row.value for row in metrics.rows if row.checkpoint is None}
    lost, failures = judge_failures(answers, amnesiac, reference, values, probe_metrics, entered)
    if failures is None:
        return metrics
    # A figure the data cannot support, or the backend gave no way to measure, keeps that reason.
    kept = metrics.not_applicable | frozenset(metrics.not_measured)
    lost = {name: why for name, why in lost.items() if name not in kept}
    partly = {name: why for name, why in failures.partly.items() if name not in kept}
    return replace(
        mark_not_measured(metrics, lost), judge_failures=replace(failures, partly=partly)
    )


def mark_not_measured(metrics: CellMetrics, reasons: Mapping[str, str]) -> CellMetrics:
    """``metrics`` with every row of ``reasons`` undefined, each metric with why it is not measured.

    A figure the backend gave the harness no way to measure (Selectivity without a snapshot of
    its memory) stays in the table without a value, an interval or units, so every view can say
    "not measured" and why, instead of showing a number that was never measured.
    """
    if not reasons:
        return metrics
    return replace(
        _without_values(metrics, frozenset(reasons)),
        not_measured={**metrics.not_measured, **reasons},
    )


def mark_not_applicable(metrics: CellMetrics, names: Iterable[str]) -> CellMetrics:
    """``metrics`` with every row of ``names`` undefined and counted over no units.

    A world imported from a question-answering dataset cannot support every figure (no action
    or canary questions, no labelled noise): those rows stay in the table, so every view can say
    "not applicable", but carry no value, no interval and ``n`` = 0. A composite would otherwise
    renormalise over whatever components remain and look like a comparable score.
    """
    dropped = frozenset(names)
    if not dropped:
        return metrics
    if "drift_c" in dropped:
        # The lift is DRIFT-C's difference from the amnesiac's: no DRIFT-C, no lift.
        dropped |= {"drift_c_lift"}
    return replace(
        _without_values(metrics, dropped), not_applicable=metrics.not_applicable | dropped
    )


def _without_values(metrics: CellMetrics, names: frozenset[str]) -> CellMetrics:
    """``metrics`` with the rows and samples of ``names`` undefined: no value, interval or units."""
    rows = tuple(
        MetricRow(r.metric, r.checkpoint, None, None, None, 0) if r.metric in names else r
        for r in metrics.rows
    )
    samples = {
        name: Sample(None, np.full_like(s.draws, np.nan), 0) if name in names else s
        for name, s in metrics.samples.items()
    }
    return replace(metrics, rows=rows, samples=samples)


def compare_arms(
    a: ArmData,
    b: ArmData,
    amnesiac_answers: pa.Table,
    reference: ReferenceFigures | ArmData,
    horizon: str,
    config: MetricConfig | None = None,
) -> CellMetrics:
    """Paired differences A − B of every metric, resampling both arms with the same indices.

    Both arms must have answered the same probes over the same sessions of the same world, so
    every bootstrap draw picks the same replicates, probes, sessions and retrievals for both; the
    interval is the percentile interval of the per-draw differences (widened to contain the point
    difference). An arm compared with itself gets exactly 0 with a zero-width interval. A
    difference is undefined where either arm's figure is. ``mvot_skipped``, ``judge_errors`` and
    ``ttft_measured`` are not compared (diagnostics, not figures); ``n`` is arm A's.

    Args:
        a: First arm.
        b: Second arm.
        amnesiac_answers: Answers to the same probes from an empty context.
        reference: As for :func:`compute_cell`.
        horizon: ``short``, ``medium`` or ``long``.
        config: Constants and bootstrap settings.

    Returns:
        Rows of differences in :data:`METRICS` order (then every registered metric's), and
        their samples.

    Raises:
        ValueError: When the arms' units differ, or as :func:`compute_cell`.

    """
    cfg = config or MetricConfig()
    _check_horizon(horizon)
    ua = _with_computed(_load(a, amnesiac_answers, cfg), a, amnesiac_answers, cfg, horizon)
    ub = _with_computed(_load(b, amnesiac_answers, cfg), b, amnesiac_answers, cfg, horizon)
    if not ua.same_units(ub):
        raise ValueError("paired comparison needs both arms on the same probes and sessions")
    ref = _reference(reference, ua, amnesiac_answers, cfg)

    def fn(rs: Resample) -> _Figures:
        fa = _figures(ua, rs, ref, cfg, horizon)
        fb = _figures(ub, rs, ref, cfg, horizon)
        return {k: fa[k] - fb[k] for k in fa}

    identity = identity_resample(len(ua.replicates), ua.layouts)
    point = fn(identity)
    mvot = _replicate_mvot(ua, identity, ref.storage)
    names = (*METRICS, *ua.computed)
    compared = _assemble(point, _bootstrap(fn, ua, cfg, point), _counts(ua, mvot), cfg, [], names)
    unknown = [side for side, units in (("A", ua), ("B", ub)) if not units.cost_known]
    if not unknown:
        return compared
    # Two bounds, or a bound and a value, make no difference anyone can read.
    reason = f"arm {' and '.join(unknown)}: {UNKNOWN_MODEL_TOKENS}"
    return mark_not_measured(compared, dict.fromkeys((*COST_BOUNDS, *COST_NOT_MEASURED), reason))


def reference_figures(
    reference: ArmData, amnesiac_answers: pa.Table, config: MetricConfig | None = None
) -> ReferenceFigures:
    """The reference compressor's per-replicate C_ref, TC_ref and MVOT_ref on one world.

    Computed with the same code as every arm's figures, the reference being its own reference
    (its efficiency factor is 1), so :func:`compute_cell` of the reference compressor against
    these figures gives TES exactly 1.

    Args:
        reference: The reference compressor's answers, snapshots and retrievals.
        amnesiac_answers: Answers to the same probes from an empty context.
        config: Constants (``epsilon_tokens`` and ``q_rate`` matter here).

    Returns:
        The figures, one entry per replicate.

    """
    cfg = config or MetricConfig()
    u = _load(reference, amnesiac_answers, cfg)
    identity = identity_resample(len(u.replicates), u.layouts)
    mvot = _replicate_mvot(u, identity, u.tc).per_replicate[0]
    cost = _replicate_costs(u, identity)["tc"][0]
    return ReferenceFigures(
        replicates=u.replicates,
        storage_per_session=tuple(float(c) for c in u.c_mem),
        token_cost=tuple(float(c) for c in cost),
        mvot=tuple(float(v) if np.isfinite(v) else None for v in mvot),
    )
