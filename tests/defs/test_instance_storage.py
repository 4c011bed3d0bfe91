"""The pooled SQLite storages write exactly what Dagster's own would, and keep connections open.

Each test builds an instance from the project's ``dagster.yaml`` (the pooled classes), runs real
partitioned materializations on it, and then reads the same folder with Dagster's stock SQLite
storage (``storage: sqlite``), which must see every run, event and partition and no pending
migration.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.sql import check_alembic_revision, get_alembic_config

from drift_pipeline.defs.instance_storage import (
    OPEN_SHARDS,
    PooledSqliteEventLogStorage,
    PooledSqliteRunStorage,
)

from .conftest import sqlite_home

_parts = dg.DynamicPartitionsDefinition(name="demo")


@dg.asset(partitions_def=_parts)
def upstream() -> dg.MaterializeResult:  # type: ignore[type-arg]
    return dg.MaterializeResult(metadata={"rows": 3})


@dg.asset(partitions_def=_parts, deps=[upstream])
def downstream() -> dg.MaterializeResult:  # type: ignore[type-arg]
    return dg.MaterializeResult(metadata={"rows": 1})


_JOB = dg.Definitions(
    assets=[upstream, downstream],
    jobs=[dg.define_asset_job("demo_job", selection=[upstream, downstream])],
).resolve_job_def("demo_job")
_KEYS = ["a", "b", "c"]


def _materialize(instance: dg.DagsterInstance, keys: list[str]) -> list[str]:
    """Run the demo job once per key; return the run ids."""
    instance.add_dynamic_partitions("demo", keys)
    return [_JOB.execute_in_process(instance=instance, partition_key=key).run_id for key in keys]


def _stock(home: Path) -> dg.DagsterInstance:
    """Dagster's own SQLite storage on the folder the project's dagster.yaml writes to."""
    stock = home / "stock"
    stock.mkdir()
    config = {"storage": {"sqlite": {"base_dir": str(home / ".dagster_home" / "storage")}}}
    (stock / "dagster.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return dg.DagsterInstance.from_config(str(stock))


def _events(instance: dg.DagsterInstance, run_id: str) -> list[tuple[object, str | None]]:
    """A run's Dagster events, as (type, step) pairs in stored order."""
    logs = instance.all_logs(run_id)
    return [(e.dagster_event_type, e.step_key) for e in logs if e.is_dagster_event]


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()
    return [(name, sql or "") for name, sql in rows]


def test_the_project_instance_uses_the_pooled_classes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
        assert isinstance(instance.run_storage, PooledSqliteRunStorage)
        _materialize(instance, ["a"])
        with instance.event_log_storage.index_connection() as conn:
            # dagster.yaml asks for NORMAL (1); journal stays Dagster's WAL.
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        with instance.run_storage.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1


def test_stock_dagster_reads_everything_the_pooled_storage_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        run_ids = _materialize(instance, _KEYS)
        pooled_events = {run_id: _events(instance, run_id) for run_id in run_ids}
    with _stock(home) as stock:
        assert {r.run_id for r in stock.get_runs()} == set(run_ids)
        assert all(r.is_success for r in stock.get_runs())
        assert stock.get_dynamic_partitions("demo") == _KEYS
        for key in (upstream.key, downstream.key):
            assert stock.get_materialized_partitions(key) == set(_KEYS)
            record = stock.get_latest_materialization_event(key)
            assert record is not None and record.asset_materialization is not None
        for run_id in run_ids:
            events = _events(stock, run_id)
            assert events == pooled_events[run_id]
            assert any(t == dg.DagsterEventType.ASSET_MATERIALIZATION for t, _ in events)


def test_new_run_shards_match_dagsters_own_schema_and_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        (pooled_run,) = _materialize(instance, ["a"])
    with _stock(home) as stock:
        (stock_run,) = _materialize(stock, ["b"])
    shards = home / ".dagster_home" / "storage" / "history" / "runs"
    pooled, by_dagster = shards / f"{pooled_run}.db", shards / f"{stock_run}.db"
    assert _schema(pooled) == _schema(by_dagster)
    config = get_alembic_config(sqlite_event_log.__file__)
    # Stamped at Dagster's head: stock Dagster sees nothing to migrate.
    revisions = []
    for shard in (pooled, by_dagster):
        storage = SqliteEventLogStorage(str(shards))
        with storage.run_connection(shard.stem) as conn:
            revisions.append(check_alembic_revision(config, conn))
    assert revisions[0] == revisions[1]
    assert revisions[0][0] == revisions[0][1] is not None


def test_connections_stay_open_for_the_recent_shards_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        storage = instance.event_log_storage
        assert isinstance(storage, PooledSqliteEventLogStorage)
        run_ids = _materialize(instance, [f"k{i}" for i in range(OPEN_SHARDS + 2)])
        open_shards = list(storage._engines._engines)
        assert len(open_shards) == OPEN_SHARDS
        assert any(url.endswith(f"{run_ids[-1]}.db") for url in open_shards)
        assert not any(url.endswith(f"{run_ids[0]}.db") for url in open_shards)
        # The same engine (and its pooled connection) serves every query on a shard.
        with storage.index_connection() as first:
            first_connection = first.connection.driver_connection
        with storage.index_connection() as second:
            assert second.connection.driver_connection is first_connection


def test_a_forked_child_opens_its_own_connections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        _materialize(instance, ["parent"])
        with instance.event_log_storage.index_connection() as conn:
            parents = conn.connection.driver_connection
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit code
            code = 1
            try:
                # SQLite forbids using a connection opened before fork: the child opens its own.
                with instance.event_log_storage.index_connection() as conn:
                    code = 3 if conn.connection.driver_connection is parents else 0
                instance.add_dynamic_partitions("demo", ["child"])
                code = code or (0 if "child" in instance.get_dynamic_partitions("demo") else 2)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        # The parent's own connection still works after the child used the same files.
        with instance.event_log_storage.index_connection() as conn:
            assert conn.connection.driver_connection is parents
        _materialize(instance, ["after"])
        assert instance.get_dynamic_partitions("demo") == ["parent", "child", "after"]


def test_wipe_closes_connections_and_deletes_run_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.get() as instance:
        (run_id,) = _materialize(instance, ["a"])
        shard = home / ".dagster_home" / "storage" / "history" / "runs" / f"{run_id}.db"
        assert shard.exists()
        instance.wipe()
        assert not shard.exists()
        assert list(instance.get_runs()) == []
        _materialize(instance, ["b"])  # and it goes on working
        assert instance.get_materialized_partitions(upstream.key) == {"b"}


def test_a_bad_synchronous_level_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = sqlite_home(tmp_path, monkeypatch)
    config = yaml.safe_load((home / "dagster.yaml").read_text(encoding="utf-8"))
    config["event_log_storage"]["config"]["synchronous"] = "sometimes"
    (home / "dagster.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(ValueError, match=r"synchronous 'sometimes' is not one of OFF, NORMAL"):
        dg.DagsterInstance.get()
