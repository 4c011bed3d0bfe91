"""Cells as stored between assets: what a memory run leaves besides its two tables, read back.

Plain Python (no Dagster). The memory assets and the evaluation assets run in different runs
(often different processes), so a cell's :class:`~drift_pipeline.memory.CellRun` is rebuilt
from its Parquet tables plus a small manifest with what the tables do not hold: the isolation
level, the backend's version and the faults (a backend that never started leaves no row).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    ArmData,
    CellMetrics,
    compute_cell,
    judge_all,
)
from drift_pipeline.memory import Arm, CellRun
from drift_pipeline.pipeline import (
    REFERENCE_ARM,
    TEXT_COLUMNS,
    CellResult,
    amnesiac_answers,
    evaluate_cell,
    load_arm,
    stored_content_kept,
    world_session_marks,
)
from drift_pipeline.scenario import LoadedScenario
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
)

EVALUATION_TABLES: tuple[TableDef, ...] = (PROBE_ANSWERS, CELL_METRICS, COST_CURVES)
"""The tables a cell's evaluation writes (its memory run writes the other two)."""

_CellId = tuple[str, str, str, str]
"""Storage root URL, scenario, horizon, arm key."""

_evaluated: dict[_CellId, CellMetrics] | None = None


@contextmanager
def reuse_evaluations() -> Iterator[None]:
    """Within this block, figures computed by :func:`evaluate_stored` are reused, not recomputed.

    :func:`stored_result` and :func:`stored_cells` recompute a cell's metrics from its stored
    answers (the bootstrap draws are not stored). For one in-process execution of a plan of
    runs (``run_via_dagster``) that is work done twice: the plan's runs are the only writers of
    its cells, and each cell is evaluated after everything it reads is final, so its stored
    inputs cannot change between its evaluation and the reads that follow. The bootstrap is
    deterministic, so a reused figure equals its recomputation. Outside such a block (runs
    launched from the UI, sensors, schedules) nothing is kept and everything is recomputed.
    """
    global _evaluated
    previous, _evaluated = _evaluated, {}
    try:
        yield
    finally:
        _evaluated = previous


def _cell_id(root: StorageRoot, scenario: str, horizon: str, arm: str) -> _CellId:
    return (root.url, scenario, horizon, arm)


def _reused(root: StorageRoot | None, scenario: str, horizon: str, arm: str) -> CellMetrics | None:
    if _evaluated is None or root is None:
        return None
    return _evaluated.get(_cell_id(root, scenario, horizon, arm))


def _manifest_relative(scenario: str, horizon: str, arm: Arm) -> str:
    # partition_dir validates every value (no '/', '=', '..'): reuse it for the manifest path.
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}
    folder = partition_dir(Path(), MEMORY_SNAPSHOTS, keys).relative_to(MEMORY_SNAPSHOTS.name)
    return f"_manifests/cells/{folder.as_posix()}.json"


def stage_cell_run(writer: StagedWrite, scenario: str, horizon: str, run: CellRun) -> None:
    """Stage a memory run's two tables and its manifest."""
    keys = {"scenario": scenario, "horizon": horizon, "arm": run.arm.key}
    writer.put(MEMORY_SNAPSHOTS, keys, run.snapshots)
    writer.put(RETRIEVALS, keys, run.retrievals)
    manifest = {
        "arm": run.arm.key,
        "isolation": run.isolation,
        "backend_version": run.backend_version,
        "faults": run.faults,
    }
    writer.put_text(
        _manifest_relative(scenario, horizon, run.arm),
        json.dumps(manifest, indent=2, sort_keys=True) + "\n",
    )


def load_cell_run(root: StorageRoot, scenario: str, horizon: str, arm: Arm) -> CellRun:
    """A memory run as stored by :func:`stage_cell_run`.

    Raises:
        FileNotFoundError: Naming the missing cell and what materializes it.
    """
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}
    manifest_path = _manifest_relative(scenario, horizon, arm)
    missing = [
        str(root.partition_path(table, keys))
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS)
        if not root.partition_exists(table, keys)
    ] + ([] if root.exists(manifest_path) else [str(root.location(manifest_path))])
    if missing:
        raise FileNotFoundError(
            f"cell {scenario}/{horizon} {arm.key} has no memory run under {root} "
            f"(missing {missing[0]}); materialize memory_snapshots for it first"
        )
    manifest: dict[str, Any] = json.loads(root.read_text(manifest_path))
    return CellRun(
        arm=arm,
        snapshots=root.read_table(MEMORY_SNAPSHOTS, keys),
        retrievals=root.read_table(RETRIEVALS, keys),
        isolation=str(manifest["isolation"]),
        backend_version=str(manifest["backend_version"]),
        faults=[str(f) for f in manifest["faults"]],
    )


def stage_evaluation(writer: StagedWrite, result: CellResult) -> dict[TableDef, pa.Table]:
    """Stage a cell's evaluation tables; returns them as written."""
    keys = {"scenario": result.scenario, "horizon": result.horizon, "arm": result.arm.key}
    tables = {t: data for t, data in result.tables().items() if t in EVALUATION_TABLES}
    for table, data in tables.items():
        writer.put(table, keys, data)
    return tables


def read_evaluation(
    root: StorageRoot, scenario: str, horizon: str, arm: Arm
) -> dict[TableDef, pa.Table]:
    """A cell's stored evaluation tables."""
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}
    return {t: root.read_table(t, keys) for t in EVALUATION_TABLES}


def evaluate_stored(
    root: StorageRoot, loaded: LoadedScenario, horizon: str, arm: Arm, reference: ArmData | None
) -> CellResult:
    """Evaluate a stored memory run exactly as ``drift run`` evaluates the in-memory one.

    Args:
        root: Storage root.
        loaded: The scenario.
        horizon: The world's horizon.
        arm: The arm.
        reference: The reference compressor's stored data, or ``None`` for the reference itself.
    """
    run = load_cell_run(root, loaded.spec.id, horizon, arm)
    probes, amnesiac = amnesiac_answers(root, loaded.spec.id, horizon)
    marks = world_session_marks(root, loaded.spec.id, horizon)
    result = evaluate_cell(loaded, horizon, run, probes, amnesiac, reference, marks=marks)
    if _evaluated is not None:
        _evaluated[_cell_id(root, loaded.spec.id, horizon, arm.key)] = result.metrics
    return result


def stored_result(
    root: StorageRoot,
    loaded: LoadedScenario,
    horizon: str,
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
        loaded: The scenario.
        horizon: The world's horizon.
        arm: The arm.
        amnesiac: Gives the amnesiac's answers on this world (:func:`amnesiac_answers`);
            called only when the metrics are recomputed.
        reference: Gives the reference compressor's stored data (:func:`load_arm`), or
            ``None`` for the reference itself; called only when the metrics are recomputed.
    """
    scenario = loaded.spec.id
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}
    manifest_path = _manifest_relative(scenario, horizon, arm)
    if not root.exists(manifest_path):
        raise FileNotFoundError(
            f"cell {scenario}/{horizon} {arm.key} has no memory run under {root} "
            f"(missing {root.location(manifest_path)}); materialize memory_snapshots for it first"
        )
    manifest: dict[str, Any] = json.loads(root.read_text(manifest_path))
    data = load_arm(root, scenario, horizon, arm)
    metrics = _reused(root, scenario, horizon, arm.key)
    if metrics is None:
        paired = reference() if reference is not None else data
        metrics = compute_cell(data, amnesiac(), paired, horizon)
    run = CellRun(
        arm=arm,
        snapshots=data.snapshots.slice(0, 0),
        retrievals=data.retrievals.slice(0, 0),
        isolation=str(manifest["isolation"]),
        backend_version=str(manifest["backend_version"]),
        faults=[str(f) for f in manifest["faults"]],
    )
    return CellResult(
        scenario=scenario,
        horizon=horizon,
        replicates=loaded.spec.replicates,
        arm=arm,
        run=run,
        answers=data.answers.slice(0, 0),
        metrics=metrics,
        cost_curve=root.read_table(COST_CURVES, keys),
    )


# --- every stored cell, through DuckDB (leaderboard) -------------------------------------------


@dataclass
class StoredCell:
    """A cell read back for the leaderboard (the fields :func:`report.standings` needs)."""

    scenario: str
    horizon: str
    replicates: int
    arm: Arm
    metrics: CellMetrics
    faults: list[str]


def _fetch(con: duckdb.DuckDBPyConnection, table: TableDef, where: Mapping[str, str]) -> pa.Table:
    # Never the context / snapshot texts: metrics do not read them, and DuckDB would hand
    # them over as one plain string per row (gigabytes for a long full-context cell).
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
    worlds: dict[tuple[str, str], tuple[pa.Table, ArmData | None]] = {}
    for scenario, horizon, arm_key in keys:
        world = {"scenario": scenario, "horizon": horizon}
        if (scenario, horizon) not in worlds:
            probes = _fetch(con, PROBES, world)
            amnesiac = pa.Table.from_pydict(judge_all(probes, {}))
            reference_keys = {**world, "arm": REFERENCE_ARM.key}
            reference = _arm_data(con, reference_keys, root)
            worlds[(scenario, horizon)] = (amnesiac, reference)
        amnesiac, reference = worlds[(scenario, horizon)]
        data = _arm_data(con, {**world, "arm": arm_key}, root)
        if reference is None or data is None:
            skipped.append(f"{scenario}/{horizon} {arm_key}: no reference or no answers stored")
            continue
        stale = _stale_judge(data)
        if stale is not None:
            skipped.append(f"{scenario}/{horizon} {arm_key}: judged by {stale}, not {JUDGE_ID}")
            continue
        metrics = _reused(root, scenario, horizon, arm_key)
        if metrics is None:
            metrics = compute_cell(data, amnesiac, reference, horizon)
        errors = [
            str(e)
            for column in (data.snapshots.column("error"), data.retrievals.column("error"))
            for e in column.to_pylist()
            if e
        ]
        replicates = len(set(data.snapshots.column("replicate").to_pylist()))
        cells.append(StoredCell(scenario, horizon, replicates, Arm.parse(arm_key), metrics, errors))
    return cells, skipped


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


def _arm_data(
    con: duckdb.DuckDBPyConnection, keys: Mapping[str, str], root: StorageRoot | None = None
) -> ArmData | None:
    answers = _fetch(con, PROBE_ANSWERS, keys)
    if answers.num_rows == 0:
        return None
    snapshots = _fetch(con, MEMORY_SNAPSHOTS, keys)
    if root is not None:  # Selectivity from content, as the run measured it
        snapshots = stored_content_kept(
            root, keys["scenario"], keys["horizon"], keys["arm"], snapshots
        )
    return ArmData(answers, snapshots, _fetch(con, RETRIEVALS, keys))


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
