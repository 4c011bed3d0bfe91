"""Reading a finished run back: cell data for comparisons, and DuckDB views over every table."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from drift_pipeline.evaluation import (
    JUDGE_ID,
    JUDGE_NAME,
    ArmData,
    CellMetrics,
    compare_arms,
    content_kept,
    judge_all,
    mark_not_applicable,
    measured_ttft,
)
from drift_pipeline.keys import CellKey, WorldKey
from drift_pipeline.memory import Arm
from drift_pipeline.storage import (
    CELL_TABLES,
    DERIVED_VIEWS,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    WORLD_TABLES,
    RootLike,
    StorageRoot,
    TableDef,
)
from drift_pipeline.world import world_manifest_path

from ._cells import world_session_marks
from ._run import REFERENCE_ARM


def cell_exists(root: RootLike, cell: CellKey) -> bool:
    """Whether a finished run left this cell's tables under ``root``."""
    storage = StorageRoot.from_url(root)
    return all(
        storage.partition_exists(table, cell)
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS, PROBE_ANSWERS)
    )


TEXT_COLUMNS = frozenset({"context", "snapshot"})
"""Columns no metric reads directly and that can be huge (a full-context memory's tail per
probe); Selectivity reads the checkpoint snapshots once, through :func:`stored_content_kept`."""


def stored_content_kept(root: RootLike, cell: CellKey, snapshots: pa.Table) -> pa.Table:
    """``snapshots`` (read without their texts) with Selectivity's ``content_kept`` column.

    Reads the stored checkpoint snapshot texts and the world's session marks, exactly as the
    run's evaluation used them.

    Args:
        root: Storage root holding the run.
        cell: The cell whose snapshots these are.
        snapshots: The cell's stored snapshot rows, texts left out.
    """
    storage = StorageRoot.from_url(root)
    texts = storage.read_table(
        MEMORY_SNAPSHOTS, cell, ["replicate", "session_index", "checkpoint", "snapshot"]
    )
    kept = content_kept(texts, world_session_marks(storage, cell.world))
    by_key = dict(
        zip(
            zip(kept["replicate"].to_pylist(), kept["session_index"].to_pylist(), strict=True),
            kept["content_kept"].to_pylist(),
            strict=True,
        )
    )
    column = [
        by_key.get((r, i))
        for r, i in zip(
            snapshots["replicate"].to_pylist(), snapshots["session_index"].to_pylist(), strict=True
        )
    ]
    return snapshots.append_column("content_kept", pa.array(column, pa.bool_()))


def load_arm(root: RootLike, cell: CellKey) -> ArmData:
    """An arm's answers, snapshots and retrievals on one world, as stored by a run.

    The retrieved contexts and snapshot texts (:data:`TEXT_COLUMNS`) are left on disk: metrics
    and comparisons never read them, and at long horizons they dwarf everything else.
    """
    storage = StorageRoot.from_url(root)

    def read(table: TableDef) -> pa.Table:
        columns = [f.name for f in table.schema if f.name not in TEXT_COLUMNS]
        return storage.read_table(table, cell, columns)

    answers, retrievals = read(PROBE_ANSWERS), read(RETRIEVALS)
    snapshots = stored_content_kept(storage, cell, read(MEMORY_SNAPSHOTS))
    return ArmData(answers, snapshots, retrievals, measured_ttft(answers, retrievals))


def world_not_applicable(root: StorageRoot | None, world: WorldKey) -> frozenset[str]:
    """The metrics the world's source cannot support, as its world manifest records them."""
    if root is None:
        return frozenset()
    storage = StorageRoot.from_url(root)
    path = world_manifest_path(world.source_id, world.horizon)
    try:
        manifest = json.loads(storage.read_text(path))
    except (FileNotFoundError, ValueError):
        return frozenset()
    return frozenset(str(name) for name in manifest.get("not_applicable", ()))


def compare_stored(root: RootLike, world: WorldKey, a: Arm, b: Arm) -> CellMetrics:
    """Paired differences A − B on the same probes of one world of a finished run."""
    root = StorageRoot.from_url(root)
    probes = root.read_table(PROBES, world)
    arm_a, arm_b = (load_arm(root, CellKey(world, arm.key)) for arm in (a, b))
    for arm, data in ((a, arm_a), (b, arm_b)):
        if "reader" in data.answers.column_names:
            readers = {r for r in data.answers["reader"].to_pylist() if r is not None}
            if any(not r.startswith(f"{JUDGE_NAME}@") for r in readers):
                # The amnesiac baseline is recomputed here with the context judge only.
                raise ValueError(
                    f"{arm.key} on {world} was read by an LLM reader; "
                    "compare supports context-judge runs only"
                )
            stale = sorted(r for r in readers if r != JUDGE_ID)
            if stale:
                # Answers of another judge version must not meet this version's amnesiac.
                raise ValueError(
                    f"{arm.key} on {world} was judged by {stale[0]}, not "
                    f"{JUDGE_ID}; run it again to compare"
                )
    amnesiac = pa.Table.from_pydict(judge_all(probes, {}))
    reference = load_arm(root, CellKey(world, REFERENCE_ARM.key))
    return mark_not_applicable(
        compare_arms(arm_a, arm_b, amnesiac, reference, world.horizon),
        world_not_applicable(root, world),
    )


def connect(root: RootLike) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with one view per table found under ``root`` (a folder or S3)."""
    storage = StorageRoot.from_url(root)
    con = storage.duckdb_connect()
    for table in (*WORLD_TABLES, *CELL_TABLES):
        if storage.has_table(table):
            path = storage.glob(table).replace("'", "''")
            con.execute(
                f"create view {table.name} as select * from "
                f"read_parquet('{path}', hive_partitioning=true, union_by_name=true)"
            )
    for name, source, query in DERIVED_VIEWS:
        if storage.has_table(source):
            con.execute(f"create view {name} as {query}")
    return con
