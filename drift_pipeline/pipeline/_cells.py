"""Evaluating the cells of one world: judge every arm's retrievals, then compute metrics."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from drift_pipeline._bounded import release_caches
from drift_pipeline.evaluation import (
    OFFLINE_SCORING,
    ArmData,
    CellMetrics,
    ContextEvaluator,
    Evaluator,
    LLMEvaluator,
    Scoring,
    compute_cell,
    content_kept,
    cumulative_read_tokens,
    graded_scores,
    latent_profiles,
    measured_ttft,
    scoring_of,
    session_marks,
    with_reader_columns,
)
from drift_pipeline.keys import WorldKey
from drift_pipeline.memory import Arm, CellRun
from drift_pipeline.scenario import HorizonName
from drift_pipeline.sources import WorldSource
from drift_pipeline.storage import (
    CELL_METRICS,
    COST_CURVES,
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    RootLike,
    StorageRoot,
    TableDef,
)


@dataclass
class CellResult:
    """One evaluated cell: an arm on one world, with its tables and headline figures."""

    scenario: str
    horizon: str
    replicates: int
    arm: Arm
    run: CellRun
    answers: pa.Table
    metrics: CellMetrics
    cost_curve: pa.Table
    reported: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    scoring: Scoring = OFFLINE_SCORING
    """The reader and judge behind :attr:`answers` (every leaderboard names them)."""

    @property
    def faults(self) -> list[str]:
        """Faults recorded against this cell's backend calls."""
        return self.run.faults

    @property
    def fault_rate(self) -> float:
        """The share of this cell's backend calls that faulted or were skipped."""
        return self.run.fault_rate

    @property
    def valid(self) -> bool:
        """Whether this cell may be ranked (its fault rate is within the run's limit)."""
        return self.run.valid

    @property
    def isolation(self) -> str:
        """Isolation level that held for this cell's workers."""
        return self.run.isolation

    @property
    def backend_version(self) -> str:
        """The backend's declared version."""
        return self.run.backend_version

    @property
    def deployment(self) -> str:
        """Where the backend runs, as it declares (``local`` or ``cloud``)."""
        return self.run.deployment

    def release(self) -> None:
        """Drop the row-level tables once written; metrics, faults and identity stay."""
        self.run = replace(
            self.run,
            snapshots=self.run.snapshots.slice(0, 0),
            retrievals=self.run.retrievals.slice(0, 0),
        )
        self.answers = self.answers.slice(0, 0)

    def _constants(self, n: int) -> dict[str, list[str]]:
        return {
            "scenario": [self.scenario] * n,
            "horizon": [self.horizon] * n,
            "arm": [self.arm.key] * n,
            "backend": [self.arm.backend] * n,
            "gate": [str(self.arm.gate)] * n,
        }

    def tables(self) -> dict[TableDef, pa.Table]:
        """The cell's five tables, conformed to their schemas."""
        metrics = self.metrics.table()
        metric_columns = {
            **self._constants(metrics.num_rows),
            **{name: metrics.column(name) for name in metrics.column_names},
        }
        return {
            MEMORY_SNAPSHOTS: self.run.snapshots,
            RETRIEVALS: self.run.retrievals,
            PROBE_ANSWERS: self.answers,
            CELL_METRICS: pa.Table.from_pydict(
                {f.name: metric_columns[f.name] for f in CELL_METRICS.schema},
                schema=CELL_METRICS.schema,
            ),
            COST_CURVES: self.cost_curve,
        }


Profiles = Mapping[tuple[int, int, str], tuple[str, ...]]


def _contexts(retrievals: pa.Table) -> list[str]:
    """The context column as Python strings, one object per distinct text.

    ``to_pylist()`` on a dictionary column makes a new string for every row: with a
    full-context memory that is one copy of a 200k-token tail per probe (gigabytes at the long
    horizon). Decoding the dictionary once and indexing it keeps one copy per distinct text.
    """
    column = retrievals.column("context").combine_chunks()
    if not pa.types.is_dictionary(column.type):
        return [value or "" for value in column.to_pylist()]
    values = [value or "" for value in column.dictionary.to_pylist()]
    return [values[index] if index is not None else "" for index in column.indices.to_pylist()]


def _answers_table(
    cell: CellRun,
    probes: pa.Table,
    evaluator: Evaluator,
    amnesiac: pa.Table,
    profiles: Profiles | None,
) -> pa.Table:
    contexts = dict(
        zip(
            zip(
                cell.retrievals.column("replicate").to_pylist(),
                cell.retrievals.column("probe_id").to_pylist(),
                strict=True,
            ),
            _contexts(cell.retrievals),
            strict=True,
        )
    )
    columns = evaluator.answer(probes, contexts, amnesiac, profiles)
    n = len(columns["probe_id"])
    columns["score"] = [
        (score + 1) / 2 if score is not None else None if correct is None else float(correct)
        for score, correct in zip(columns["action_score"], columns["correct"], strict=True)
    ]
    if not isinstance(evaluator, ContextEvaluator):
        # A reader's free text to a dataset's question also gets the dataset's own score.
        columns["score"] = graded_scores(probes, columns["answer"], columns["score"])
    constants = {
        "scenario": probes.column("scenario").to_pylist(),
        "horizon": probes.column("horizon").to_pylist(),
        "arm": [cell.arm.key] * n,
        "backend": [cell.arm.backend] * n,
        "gate": [str(cell.arm.gate)] * n,
    }
    columns.update(constants)
    return pa.Table.from_pydict(
        {f.name: columns[f.name] for f in PROBE_ANSWERS.schema}, schema=PROBE_ANSWERS.schema
    )


def _cost_curve(cell: CellRun, metrics: CellMetrics, scenario: str, horizon: str) -> pa.Table:
    """Cumulative tokens (mean over replicates) and MVOT so far at each checkpoint (spec §7.7).

    The read tokens are the agent's reads so far, each costing what it does in TC (at least
    what the probes were handed: see :func:`~drift_pipeline.evaluation.cumulative_read_tokens`).
    """
    # Only the count columns: the snapshot and context texts can be huge.
    snapshots = cell.snapshots.select(
        ["replicate", "session_index", "write_tokens", "storage_tokens"]
    ).to_pydict()
    retrievals = cell.retrievals.select(["replicate", "checkpoint"]).to_pydict()
    checkpoints = sorted({c for c in retrievals["checkpoint"]})
    replicates = sorted(set(snapshots["replicate"]))
    # An unknown model spend: the tokens are the known part, MVOT so far its upper bound.
    source = metrics.llm_tokens.source if metrics.llm_tokens is not None else "metered"
    reads = cumulative_read_tokens(
        cell.snapshots.select(
            [
                "replicate",
                "session_index",
                "session_read_tokens",
                "session_metered_read_tokens",
                "session_reported_read_tokens",
            ]
        ),
        cell.retrievals.select(
            ["replicate", "checkpoint", "read_tokens", "llm_read_tokens", "soft_buffer_tokens"]
        ),
        checkpoints,
        self_reported=source == "self-reported",
    )
    rows: dict[str, list[Any]] = {f.name: [] for f in COST_CURVES.schema}
    mvots: list[float] = []
    for checkpoint in checkpoints:
        write = storage = read = 0.0
        for replicate in replicates:
            sessions = [
                i
                for i, (r, s) in enumerate(
                    zip(snapshots["replicate"], snapshots["session_index"], strict=True)
                )
                if r == replicate and s < checkpoint
            ]
            write += sum(snapshots["write_tokens"][i] for i in sessions)
            last = snapshots["storage_tokens"][sessions[-1]] if sessions else 0
            # No snapshot(): storage not measured (NaN, never 0), and left out of the total.
            storage += math.nan if last is None else last
            read += reads[(replicate, checkpoint)]
        count = max(1, len(replicates))
        try:
            value = metrics.get("mvot", checkpoint).value
        except KeyError:
            # No per-checkpoint MVOT when the amnesiac is right everywhere (a world of one
            # abstention question, say): every checkpoint is skipped, none has a row.
            value = None
        if value is not None:
            mvots.append(value)
        for key, item in (
            ("scenario", scenario),
            ("horizon", horizon),
            ("arm", cell.arm.key),
            ("backend", cell.arm.backend),
            ("gate", str(cell.arm.gate)),
            ("checkpoint", checkpoint),
            ("cumulative_write_tokens", write / count),
            ("storage_tokens", storage / count),
            ("cumulative_read_tokens", read / count),
            ("cumulative_tokens", (write + (0 if math.isnan(storage) else storage) + read) / count),
            ("mvot_so_far", sum(mvots) / len(mvots) if mvots else None),
            ("model_tokens", source),
        ):
            rows[key].append(item)
    return pa.Table.from_pydict(rows, schema=COST_CURVES.schema)


def world_profiles(root: RootLike, world: WorldKey, evaluator: Evaluator) -> Profiles | None:
    """Latent profiles for the LLM judge's action probes (``None`` when no LLM evaluates)."""
    if not isinstance(evaluator, LLMEvaluator):
        return None
    return latent_profiles(StorageRoot.from_url(root).read_table(GROUND_TRUTH, world))


def amnesiac_answers(
    root: RootLike,
    world: WorldKey,
    evaluator: Evaluator | None = None,
    profiles: Profiles | None = None,
) -> tuple[pa.Table, pa.Table]:
    """The world's probes and the amnesiac's answers to them (the same reader, empty contexts).

    The probes carry the careful reader's columns
    (:func:`~drift_pipeline.evaluation.with_reader_columns`).

    Args:
        root: Storage root holding the world.
        world: The world.
        evaluator: Reader and judge (default: the context judge).
        profiles: Latent profiles for the LLM judge (see :func:`world_profiles`).
    """
    storage = StorageRoot.from_url(root)
    # The careful reader also needs what the world knows beyond each probe row: the slot's
    # other values, the subject's names, the slot's kind.
    probes = with_reader_columns(
        storage.read_table(PROBES, world),
        storage.read_table(LATENT_PROFILES, world),
        storage.read_table(GROUND_TRUTH, world),
    )
    answers = (evaluator or ContextEvaluator()).answer(probes, {}, None, profiles)
    return probes, pa.Table.from_pydict(answers)


def world_session_marks(root: RootLike, world: WorldKey) -> pa.Table:
    """What each session of the world carries, for Selectivity from content.

    See :func:`~drift_pipeline.evaluation.session_marks`; computed once per world.
    """
    storage = StorageRoot.from_url(root)
    return session_marks(
        storage.read_table(EVENT_SCHEDULES, world),
        storage.read_table(TRANSCRIPTS, world),
        storage.read_table(GROUND_TRUTH, world),
        storage.read_table(LATENT_PROFILES, world),
    )


def evaluate_cell(
    source: WorldSource,
    horizon: HorizonName,
    run: CellRun,
    probes: pa.Table,
    amnesiac: pa.Table,
    reference: ArmData | None,
    evaluator: Evaluator | None = None,
    profiles: Profiles | None = None,
    marks: pa.Table | None = None,
) -> CellResult:
    """Judge one arm's retrievals and compute its metrics against the world's baselines.

    Args:
        source: The world's source.
        horizon: The world's horizon.
        run: The arm's memory-loop output.
        probes: The world's probes.
        amnesiac: The amnesiac's answers to them.
        reference: The reference compressor's data on this world; ``None`` when ``run`` is the
            reference itself.
        evaluator: Reader and judge (default: the context judge); ``amnesiac`` must come from
            the same one.
        profiles: Latent profiles for the LLM judge (see :func:`world_profiles`).
        marks: The world's session marks (:func:`world_session_marks`): Selectivity is then
            measured on the memory's content; without them, on its storage growth.
    """
    answers = _answers_table(run, probes, evaluator or ContextEvaluator(), amnesiac, profiles)
    # The reader's caches of this cell's texts (whole contexts, their lines and mentions) serve
    # no other cell; without them the metrics' bootstrap does not pile on top of a long
    # full-context cell's readings. What a probe or the rules give is kept: the world's next
    # arm asks the same probes again.
    release_caches("drift_pipeline.evaluation.reader")
    snapshots = run.snapshots if marks is None else content_kept(run.snapshots, marks)
    # With an LLM reader TTFRT uses its measured time to first token (spec §7.8).
    data = ArmData(answers, snapshots, run.retrievals, measured_ttft(answers, run.retrievals))
    # Passing the reference arm's own data (not fixed figures) pairs every arm's TES interval
    # with the reference's resamples; the reference's own TES is then exactly [1, 1].
    metrics = compute_cell(
        data,
        amnesiac,
        reference if reference is not None else data,
        horizon,
        not_applicable=source.not_applicable,
    )
    return CellResult(
        scenario=source.id,
        horizon=horizon,
        replicates=source.replicates,
        arm=run.arm,
        run=run,
        answers=answers,
        metrics=metrics,
        cost_curve=_cost_curve(run, metrics, source.id, horizon),
        scoring=scoring_of(evaluator),
    )
