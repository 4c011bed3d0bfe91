"""Cells as stored between separate steps: a memory run's tables and manifest, read back.

When a cell's memory run and its evaluation happen in different processes (the Dagster assets,
each in its own run), the evaluation cannot take the memory run from memory, so a cell's
:class:`~drift_pipeline.memory.CellRun` is rebuilt
from its Parquet tables plus a small manifest with what the tables do not hold: the isolation
level, the backend's version, the faults (a backend that never started leaves no row) and the
fault-rate limit the run was given (a cell's fault rate is read off its tables' ``error``
columns, so a cell read back is invalid exactly when the run that wrote it found it so).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from drift_pipeline.evaluation import (
    JUDGE_ID,
    JUDGE_NAME,
    JUDGE_VERSION,
    OFFLINE_SCORING,
    ArmData,
    CellMetrics,
    Scoring,
    compute_cell,
    judge_all,
    scoring_from_answers,
)
from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.memory import (
    MAX_FAULT_RATE,
    Arm,
    CellRun,
    FaultShare,
    FaultSummary,
    call_counts,
)
from drift_pipeline.scenario import HorizonName
from drift_pipeline.sources import WorldSource
from drift_pipeline.storage import (
    CELL_METRICS,
    COST_CURVES,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    StagedWrite,
    StorageRoot,
    TableDef,
    partition_dir,
    partition_values,
)

from ._cells import CellResult, amnesiac_answers, evaluate_cell, world_session_marks
from ._run import REFERENCE_ARM
from ._stored import TEXT_COLUMNS, load_arm, stored_content_kept, world_not_applicable

EVALUATION_TABLES: tuple[TableDef, ...] = (PROBE_ANSWERS, CELL_METRICS, COST_CURVES)
"""The tables a cell's evaluation writes (its memory run writes the other two)."""

_CellId = tuple[str, CellKey]
"""Storage root URL and cell."""

_evaluated: dict[_CellId, CellMetrics] | None = None
_world_reads: dict[tuple[str, WorldKey, str], Any] | None = None


@contextmanager
def reuse_evaluations() -> Iterator[None]:
    """Within this block, figures computed by :func:`evaluate_stored` are reused, not recomputed.

    :func:`stored_result` and :func:`stored_cells` recompute a cell's metrics from its stored
    answers (the bootstrap draws are not stored). For one in-process execution of a plan of
    runs (``drift run --via dagster``) that is work done twice: the plan's runs are the only
    writers of its cells, and each cell is evaluated after everything it reads is final, so its
    stored inputs cannot change between its evaluation and the reads that follow. The bootstrap
    is deterministic, so a reused figure equals its recomputation. Outside such a block (runs
    launched from the UI, sensors, schedules) nothing is kept and everything is recomputed.

    For the same reason what every cell of a world reads of its world is read once in the
    block: the amnesiac's answers, the session marks and the reference compressor's stored data
    (:func:`stored_reference`), all final once the world's run is done.
    """
    global _evaluated, _world_reads
    previous, _evaluated = _evaluated, {}
    previous_reads, _world_reads = _world_reads, {}
    try:
        yield
    finally:
        _evaluated, _world_reads = previous, previous_reads


def _read_once(root: StorageRoot, world: WorldKey, what: str, read: Callable[[], Any]) -> Any:
    """``read()``, kept for the rest of a :func:`reuse_evaluations` block (else not kept)."""
    if _world_reads is None:
        return read()
    key = (root.url, world, what)
    if key not in _world_reads:
        _world_reads[key] = read()
    return _world_reads[key]


def stored_reference(root: StorageRoot, world: WorldKey) -> ArmData:
    """The reference compressor's stored data on ``world`` (:func:`load_arm`).

    Read once per world within :func:`reuse_evaluations`; every cell's evaluation pairs with it.
    """
    data: ArmData = _read_once(
        root, world, "reference", lambda: load_arm(root, CellKey(world, REFERENCE_ARM.key))
    )
    return data


def _cell_id(root: StorageRoot, cell: CellKey) -> _CellId:
    return (root.url, cell)


def _reused(root: StorageRoot | None, cell: CellKey) -> CellMetrics | None:
    if _evaluated is None or root is None:
        return None
    return _evaluated.get(_cell_id(root, cell))


def _manifest_relative(cell: CellKey) -> str:
    # partition_dir validates every value (no '/', '=', '..'): reuse it for the manifest path.
    folder = partition_dir(Path(), MEMORY_SNAPSHOTS, cell).relative_to(MEMORY_SNAPSHOTS.name)
    return f"_manifests/cells/{folder.as_posix()}.json"


def stage_cell_run(writer: StagedWrite, world: WorldKey, run: CellRun) -> None:
    """Stage a memory run's two tables and its manifest."""
    cell = CellKey(world, run.arm.key)
    writer.put(MEMORY_SNAPSHOTS, cell, run.snapshots)
    writer.put(RETRIEVALS, cell, run.retrievals)
    manifest = {
        "arm": run.arm.key,
        "isolation": run.isolation,
        "backend_version": run.backend_version,
        "deployment": run.deployment,
        "faults": run.faults,
        "fault_summary": run.fault_summary.to_json(),
        "service": run.service,
        "time_to_queryable_ms": run.time_to_queryable,
        "max_fault_rate": run.max_fault_rate,
    }
    writer.put_text(
        _manifest_relative(cell),
        json.dumps(manifest, indent=2, sort_keys=True) + "\n",
    )


def load_cell_run(root: StorageRoot, cell: CellKey) -> CellRun:
    """A memory run as stored by :func:`stage_cell_run`.

    Raises:
        FileNotFoundError: Naming the missing cell and what materializes it.
    """
    manifest_path = _manifest_relative(cell)
    missing = [
        str(root.partition_path(table, cell))
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS)
        if not root.partition_exists(table, cell)
    ] + ([] if root.exists(manifest_path) else [str(root.location(manifest_path))])
    if missing:
        raise FileNotFoundError(
            f"cell {cell.world} {cell.arm_key} has no memory run under {root} "
            f"(missing {missing[0]}); materialize memory_snapshots for it first"
        )
    manifest: dict[str, Any] = json.loads(root.read_text(manifest_path))
    snapshots = root.read_table(MEMORY_SNAPSHOTS, cell)
    retrievals = root.read_table(RETRIEVALS, cell)
    calls, faulted_calls = call_counts(snapshots, retrievals)
    return CellRun(
        arm=Arm.parse(cell.arm_key),
        snapshots=snapshots,
        retrievals=retrievals,
        isolation=str(manifest["isolation"]),
        backend_version=str(manifest["backend_version"]),
        deployment=str(manifest.get("deployment", "local")),
        faults=[str(f) for f in manifest["faults"]],
        calls=calls,
        faulted_calls=faulted_calls,
        max_fault_rate=_fault_limit(manifest),
        fault_summary=FaultSummary.from_json(manifest.get("fault_summary")),
        service={str(k): str(v) for k, v in (manifest.get("service") or {}).items()},
        time_to_queryable=manifest.get("time_to_queryable_ms"),
    )


def _fault_limit(manifest: dict[str, Any]) -> float:
    """The fault-rate limit a cell's run was given (the default for a manifest without one)."""
    return float(manifest.get("max_fault_rate", MAX_FAULT_RATE))


def stage_evaluation(
    writer: StagedWrite, cell: CellKey, result: CellResult
) -> dict[TableDef, pa.Table]:
    """Stage a cell's evaluation tables; returns them as written."""
    tables = {t: data for t, data in result.tables().items() if t in EVALUATION_TABLES}
    for table, data in tables.items():
        writer.put(table, cell, data)
    return tables


def read_evaluation(root: StorageRoot, cell: CellKey) -> dict[TableDef, pa.Table]:
    """A cell's stored evaluation tables."""
    return {t: root.read_table(t, cell) for t in EVALUATION_TABLES}


def evaluate_stored(
    root: StorageRoot,
    source: WorldSource,
    horizon: HorizonName,
    arm: Arm,
    reference: ArmData | None,
) -> CellResult:
    """Evaluate a stored memory run exactly as ``drift run`` evaluates the in-memory one.

    Args:
        root: Storage root.
        source: The world's source.
        horizon: The world's horizon.
        arm: The arm.
        reference: The reference compressor's stored data, or ``None`` for the reference itself.
    """
    world = source.world(horizon)
    cell = CellKey(world, arm.key)
    run = load_cell_run(root, cell)
    probes, amnesiac = _read_once(root, world, "amnesiac", lambda: amnesiac_answers(root, world))
    marks = _read_once(root, world, "marks", lambda: world_session_marks(root, world))
    result = evaluate_cell(source, horizon, run, probes, amnesiac, reference, marks=marks)
    if _evaluated is not None:
        _evaluated[_cell_id(root, cell)] = result.metrics
    return result


def stored_result(
    root: StorageRoot,
    source: WorldSource,
    horizon: HorizonName,
    arm: Arm,
    amnesiac: Callable[[], pa.Table],
    reference: Callable[[], ArmData] | None,
) -> CellResult:
    """A finished cell's figures, recomputed from its stored answers and costs.

    The stored answers are the judge's verdicts, so the cell is not judged again; only the
    metrics are recomputed, because their intervals need the bootstrap draws, which are not
    stored. The bootstrap is deterministic, so the figures equal what the evaluation wrote (and
    what ``drift run`` returns); within :func:`reuse_evaluations` the evaluation's own figures
    are taken. The result holds empty row-level tables, as a released :class:`CellResult` does.

    Args:
        root: Storage root.
        source: The world's source.
        horizon: The world's horizon.
        arm: The arm.
        amnesiac: Gives the amnesiac's answers on this world (:func:`amnesiac_answers`);
            called only when the metrics are recomputed.
        reference: Gives the reference compressor's stored data (:func:`load_arm`), or
            ``None`` for the reference itself; called only when the metrics are recomputed.
    """
    world = source.world(horizon)
    cell = CellKey(world, arm.key)
    manifest_path = _manifest_relative(cell)
    if not root.exists(manifest_path):
        raise FileNotFoundError(
            f"cell {world} {arm.key} has no memory run under {root} "
            f"(missing {root.location(manifest_path)}); materialize memory_snapshots for it first"
        )
    manifest: dict[str, Any] = json.loads(root.read_text(manifest_path))
    data = load_arm(root, cell)
    metrics = _reused(root, cell)
    if metrics is None:
        paired = reference() if reference is not None else data
        metrics = compute_cell(
            data, amnesiac(), paired, horizon, not_applicable=source.not_applicable
        )
    calls, faulted_calls = call_counts(data.snapshots, data.retrievals)
    run = CellRun(
        arm=arm,
        snapshots=data.snapshots.slice(0, 0),
        retrievals=data.retrievals.slice(0, 0),
        isolation=str(manifest["isolation"]),
        backend_version=str(manifest["backend_version"]),
        deployment=str(manifest.get("deployment", "local")),
        faults=[str(f) for f in manifest["faults"]],
        calls=calls,
        faulted_calls=faulted_calls,
        max_fault_rate=_fault_limit(manifest),
        fault_summary=FaultSummary.from_json(manifest.get("fault_summary")),
        service={str(k): str(v) for k, v in (manifest.get("service") or {}).items()},
        time_to_queryable=manifest.get("time_to_queryable_ms"),
    )
    return CellResult(
        scenario=source.id,
        horizon=horizon,
        replicates=source.replicates,
        arm=arm,
        run=run,
        answers=data.answers.slice(0, 0),
        metrics=metrics,
        cost_curve=root.read_table(COST_CURVES, cell),
    )


# --- every stored cell, through DuckDB (leaderboard) -------------------------------------------


@dataclass
class StoredCell(FaultShare):
    """A cell read back for the leaderboard (the fields :func:`report.standings` needs)."""

    scenario: str
    horizon: str
    replicates: int
    arm: Arm
    metrics: CellMetrics
    faults: list[str]
    calls: int = 0
    """Stores and retrieves recorded (rows of its two memory tables)."""
    faulted_calls: int = 0
    """Of those, the ones with an error (faulted or skipped)."""
    max_fault_rate: float = MAX_FAULT_RATE
    """The limit its run was given (from the cell's manifest)."""
    scoring: Scoring = OFFLINE_SCORING
    """The reader and judge its stored answers name."""
    deployment: str = "local"
    """Where its backend runs, as its stored sessions say."""


def _fetch(con: duckdb.DuckDBPyConnection, table: TableDef, key: WorldKey | CellKey) -> pa.Table:
    # Never the context / snapshot texts: metrics do not read them, and DuckDB would hand
    # them over as one plain string per row (gigabytes for a long full-context cell).
    where = partition_values(key)
    schema = pa.schema([f for f in table.schema if f.name not in TEXT_COLUMNS])
    columns = ", ".join(f'"{f.name}"' for f in schema)
    condition = " and ".join(f'"{key}" = ?' for key in where)
    data = con.sql(
        f"select {columns} from {table.name} where {condition}", params=list(where.values())
    ).to_arrow_table()
    return data.cast(schema)


def stored_cells(
    con: duckdb.DuckDBPyConnection, root: StorageRoot | None = None
) -> tuple[list[StoredCell], list[str]]:
    """Every evaluated cell in the views of ``con``, with its metrics recomputed.

    The metrics need the bootstrap draws (to combine intervals across horizons and scenarios),
    which are not stored; they are recomputed from the stored answers and costs, paired with
    the world's reference compressor exactly as in ``drift run`` (or, within
    :func:`reuse_evaluations`, taken from this process's evaluation of a cell of ``root``).

    Returns:
        The cells, and one line per cell that could not be used (and why).
    """
    tables = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
    needed = {CELL_METRICS.name, PROBE_ANSWERS.name, MEMORY_SNAPSHOTS.name, RETRIEVALS.name}
    if not needed <= tables or PROBES.name not in tables:
        return [], []
    keys = con.execute(
        "select distinct scenario, horizon, arm from cell_metrics order by all"
    ).fetchall()
    cells: list[StoredCell] = []
    skipped: list[str] = []
    worlds: dict[WorldKey, tuple[pa.Table, ArmData | None]] = {}
    for scenario, horizon, arm_key in keys:
        world = WorldKey.of(scenario, horizon)
        if world not in worlds:
            probes = _fetch(con, PROBES, world)
            amnesiac = pa.Table.from_pydict(judge_all(probes, {}))
            reference = _arm_data(con, CellKey(world, REFERENCE_ARM.key), root)
            worlds[world] = (amnesiac, reference)
        amnesiac, reference = worlds[world]
        cell = CellKey(world, arm_key)
        data = _arm_data(con, cell, root)
        if reference is None or data is None:
            skipped.append(f"{world} {arm_key}: no reference or no answers stored")
            continue
        stale = _stale_judge(data)
        if stale is not None:
            skipped.append(f"{world} {arm_key}: judged by {stale}, not {JUDGE_ID}")
            continue
        metrics = _reused(root, cell)
        if metrics is None:
            metrics = compute_cell(
                data, amnesiac, reference, horizon, not_applicable=world_not_applicable(root, world)
            )
        errors = [
            str(e)
            for column in (data.snapshots.column("error"), data.retrievals.column("error"))
            for e in column.to_pylist()
            if e
        ]
        replicates = len(set(data.snapshots.column("replicate").to_pylist()))
        calls, faulted_calls = call_counts(data.snapshots, data.retrievals)
        cells.append(
            StoredCell(
                scenario,
                horizon,
                replicates,
                Arm.parse(arm_key),
                metrics,
                errors,
                calls,
                faulted_calls,
                _stored_limit(root, cell),
                _stored_scoring(data),
                _stored_deployment(data),
            )
        )
    return cells, skipped


def _stored_deployment(data: ArmData) -> str:
    """Where the cell's backend runs, from its stored sessions (``local`` when none say)."""
    if "deployment" not in data.snapshots.column_names or data.snapshots.num_rows == 0:
        return "local"
    return str(data.snapshots.column("deployment")[0].as_py())


def _stored_scoring(data: ArmData) -> Scoring:
    """Who scored the stored answers, by their ``reader`` and ``judge`` columns."""
    columns = data.answers.column_names
    if "reader" not in columns or "judge" not in columns:
        return OFFLINE_SCORING
    readers = [str(r) for r in data.answers.column("reader").unique().to_pylist() if r]
    judges = [str(j) for j in data.answers.column("judge").unique().to_pylist() if j]
    return scoring_from_answers(readers, judges) or OFFLINE_SCORING


def _stale_judge(data: ArmData) -> str | None:
    """An older context judge's name when the cell's answers come from one (never mixed)."""
    if "judge" not in data.answers.column_names:
        return None
    judges = {str(j) for j in data.answers.column("judge").to_pylist() if j}
    current = f"{JUDGE_NAME}@{JUDGE_VERSION}"
    stale = sorted(
        j for j in judges if j.startswith(f"{JUDGE_NAME}@") and j.split("+")[0] != current
    )
    return stale[0] if stale else None


def _stored_limit(root: StorageRoot | None, cell: CellKey) -> float:
    """The fault-rate limit in the cell's manifest under ``root`` (else the default)."""
    if root is None:
        return MAX_FAULT_RATE
    path = _manifest_relative(cell)
    if not root.exists(path):
        return MAX_FAULT_RATE
    return _fault_limit(json.loads(root.read_text(path)))


def _arm_data(
    con: duckdb.DuckDBPyConnection, cell: CellKey, root: StorageRoot | None = None
) -> ArmData | None:
    answers = _fetch(con, PROBE_ANSWERS, cell)
    if answers.num_rows == 0:
        return None
    snapshots = _fetch(con, MEMORY_SNAPSHOTS, cell)
    if root is not None:  # Selectivity from content, as the run measured it
        snapshots = stored_content_kept(root, cell, snapshots)
    return ArmData(answers, snapshots, _fetch(con, RETRIEVALS, cell))


def metric_values(metrics: pa.Table, names: Sequence[str]) -> dict[str, float | None]:
    """Whole-cell values of ``names`` from a ``cell_metrics`` table (``None`` if undefined)."""
    rows = metrics.to_pydict()
    found: dict[str, float | None] = {name: None for name in names}
    for metric, checkpoint, value in zip(
        rows["metric"], rows["checkpoint"], rows["value"], strict=True
    ):
        if checkpoint == "all" and metric in found:
            found[metric] = value
    return found
