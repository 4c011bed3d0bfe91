"""Reading a finished run back: cell data for comparisons, and DuckDB views over every table."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from drift_pipeline.evaluation import ArmData, CellMetrics, compare_arms, judge_all
from drift_pipeline.memory import Arm
from drift_pipeline.storage import (
    CELL_TABLES,
    MEMORY_SNAPSHOTS,
    PART_FILE,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    WORLD_TABLES,
    glob,
    partition_dir,
)

from ._run import REFERENCE_ARM


def cell_exists(root: Path, scenario: str, horizon: str, arm: Arm) -> bool:
    """Whether a finished run left this cell's tables under ``root``."""
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}
    return all(
        (partition_dir(root, table, keys) / PART_FILE).exists()
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS, PROBE_ANSWERS)
    )


def load_arm(root: Path, scenario: str, horizon: str, arm: Arm) -> ArmData:
    """An arm's answers, snapshots and retrievals on one world, as stored by a run."""
    keys = {"scenario": scenario, "horizon": horizon, "arm": arm.key}

    def read(table: object) -> pa.Table:
        return pq.read_table(partition_dir(root, table, keys) / PART_FILE)  # type: ignore[arg-type]

    return ArmData(read(PROBE_ANSWERS), read(MEMORY_SNAPSHOTS), read(RETRIEVALS))


def compare_stored(root: Path, scenario: str, horizon: str, a: Arm, b: Arm) -> CellMetrics:
    """Paired differences A − B on the same probes of one world of a finished run."""
    probes = pq.read_table(
        partition_dir(root, PROBES, {"scenario": scenario, "horizon": horizon}) / PART_FILE
    )
    amnesiac = pa.Table.from_pydict(judge_all(probes, {}))
    reference = load_arm(root, scenario, horizon, REFERENCE_ARM)
    return compare_arms(
        load_arm(root, scenario, horizon, a),
        load_arm(root, scenario, horizon, b),
        amnesiac,
        reference,
        horizon,
    )


def connect(root: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with one view per table found under ``root``."""
    con = duckdb.connect()
    for table in (*WORLD_TABLES, *CELL_TABLES):
        if (root / table.name).is_dir() and any((root / table.name).rglob("*.parquet")):
            path = glob(root, table).replace("'", "''")
            con.execute(
                f"create view {table.name} as select * from "
                f"read_parquet('{path}', hive_partitioning=true, union_by_name=true)"
            )
    return con
