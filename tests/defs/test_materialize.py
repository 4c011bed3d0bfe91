"""One world partition and one cell partition materialized in process, on an ephemeral instance
and on a real PostgreSQL server: tables written, metadata in the fixed vocabulary, checks pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from drift_pipeline.memory import Arm
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.launch import build_definitions
from drift_pipeline.orchestration.partitions import CellKey, WorldKey, register_partitions
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog
from drift_pipeline.pipeline import REFERENCE_ARM
from drift_pipeline.storage import MEMORY_SNAPSHOTS, PART_FILE, WORLD_TABLES, partition_dir

from .conftest import TINY_ID, TINY_REPLICATES, TINY_SESSIONS, postgres_instance

WORLD = WorldKey(TINY_ID, "short")
BM25 = Arm.parse("bm25@hard")
VOCABULARY = {
    **md.WORLD_TABLE_KEYS,
    "memory_snapshots": md.MEMORY_SNAPSHOTS_KEYS,
    "retrievals": md.RETRIEVALS_KEYS,
    "reference_memory": md.REFERENCE_MEMORY_KEYS,
    "world_baselines": md.WORLD_BASELINES_KEYS,
    "probe_answers": md.PROBE_ANSWERS_KEYS,
    "cell_metrics": (*md.CELL_METRICS_KEYS, *md.CELL_METRICS_TEXT_KEYS),
    "cell_cost_curve": md.CELL_COST_CURVE_KEYS,
}


@pytest.fixture(params=["ephemeral", "postgres"])
def instance(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dg.DagsterInstance]:
    if request.param == "ephemeral":
        active = dg.DagsterInstance.ephemeral()
    else:
        env = request.getfixturevalue("postgres_env")
        active = postgres_instance(tmp_path / "pg-home", env, monkeypatch)
    try:
        yield active
    finally:
        active.dispose()


def _latest(instance: dg.DagsterInstance, asset: str, partition: str) -> dg.AssetMaterialization:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1
    ).records
    assert records, f"no materialization of {asset} {partition}"
    materialization = records[0].asset_materialization
    assert materialization is not None
    return materialization


@pytest.mark.slow
def test_world_and_cell_partitions(
    instance: dg.DagsterInstance, tiny: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    defs = build_definitions(
        DriftStorage(root=str(root)),
        ScenarioCatalog(paths=[str(tiny.parent)]),
        MemoryLoop(),
    )
    cell = CellKey(WORLD, BM25.key)
    register_partitions(instance, [WORLD], [BM25])
    checks: dict[tuple[str, str], bool] = {}
    # Two runs: the world (tables, reference compressor, baselines), then the cell.
    for job, partition in (("world_job", WORLD.partition_key), ("cell_job", cell.partition_key)):
        result = defs.resolve_job_def(job).execute_in_process(
            instance=instance, partition_key=partition
        )
        assert result.success, job
        checks.update(
            {
                (e.asset_key.to_user_string(), e.check_name): e.passed
                for e in result.get_asset_check_evaluations()
            }
        )
    assert checks == {
        ("probes", "answerability_audit"): True,
        ("reference_memory", "rows_per_session"): True,
        ("memory_snapshots", "rows_per_session"): True,
        ("memory_snapshots", "gate_lineage"): True,
    }
    # The memory loop's progress reaches the run's log; its last line says it is complete.
    total = TINY_SESSIONS * TINY_REPLICATES
    progress = [
        entry.user_message
        for entry in instance.all_logs(result.run_id)
        if entry.dagster_event is None and "sessions stored" in entry.user_message
    ]
    assert progress and progress[-1] == f"{cell.partition_key}: {total}/{total} sessions stored"

    # Every asset of the world and of the cell has a materialization with exactly its keys.
    for asset, keys in VOCABULARY.items():
        world_level = asset in {*md.WORLD_TABLE_KEYS, "reference_memory", "world_baselines"}
        partition = WORLD.partition_key if world_level else cell.partition_key
        materialization = _latest(instance, asset, partition)
        assert set(materialization.metadata) == set(keys), asset
    snapshots = _latest(instance, "memory_snapshots", cell.partition_key).metadata
    assert snapshots[md.ROWS].value == TINY_SESSIONS * TINY_REPLICATES
    assert snapshots[md.SESSIONS].value == TINY_SESSIONS
    metrics = _latest(instance, "cell_metrics", cell.partition_key).metadata
    assert 0.0 <= metrics[md.DRIFT_C].value <= 1.0  # type: ignore[operator]

    # The tables are where the storage layout says, one file per partition.
    for table in WORLD_TABLES:
        assert (partition_dir(root, table, WORLD) / PART_FILE).exists()
    stored = pq.read_table(partition_dir(root, MEMORY_SNAPSHOTS, cell) / PART_FILE)
    assert stored.num_rows == TINY_SESSIONS * TINY_REPLICATES
    assert set(stored.column("arm").to_pylist()) == {BM25.key}
    # The reference compressor's run sits beside it, under its own arm, as drift run writes it.
    reference = CellKey(WORLD, REFERENCE_ARM.key)
    stored = pq.read_table(partition_dir(root, MEMORY_SNAPSHOTS, reference) / PART_FILE)
    assert stored.num_rows == TINY_SESSIONS * TINY_REPLICATES
    figures = _latest(instance, "reference_memory", WORLD.partition_key).metadata
    assert figures[md.ROWS].value == stored.num_rows


def test_the_reference_compressor_is_not_a_cell(tmp_path: Path) -> None:
    defs = build_definitions(
        DriftStorage(root=str(tmp_path / "data")), ScenarioCatalog(paths=[]), MemoryLoop()
    )
    with dg.DagsterInstance.ephemeral() as instance:
        register_partitions(instance, [WORLD], [REFERENCE_ARM])
        with pytest.raises(ValueError, match="runs once per world as reference_memory"):
            defs.resolve_job_def("cell_job").execute_in_process(
                instance=instance, partition_key=CellKey(WORLD, REFERENCE_ARM.key).partition_key
            )
