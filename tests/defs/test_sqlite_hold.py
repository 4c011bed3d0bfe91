"""The launcher holds a stock SQLite instance's databases open: logs stay between connections."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from drift_pipeline.orchestration.sqlite_hold import hold_open

from .conftest import sqlite_home


@dg.asset
def one() -> int:
    return 1


JOB = dg.define_asset_job("one_job", selection=[one])
DEFS = dg.Definitions(assets=[one], jobs=[JOB])


def _wal(database: Path) -> Path:
    return database.with_name(database.name + "-wal")


@pytest.fixture
def instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dg.DagsterInstance:
    sqlite_home(tmp_path / "home", monkeypatch)
    return dg.DagsterInstance.get()


def test_the_event_index_keeps_its_log_while_held_and_checkpoints_after(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    index = tmp_path / "home" / "history" / "runs" / "index.db"
    # Unheld, each of Dagster's connections is the last one: closing it removes the log.
    instance.add_dynamic_partitions("world", ["before"])
    assert index.is_file() and not _wal(index).exists()
    with hold_open(instance):
        instance.add_dynamic_partitions("world", ["during"])
        assert _wal(index).exists()
    assert not _wal(index).exists()
    with dg.DagsterInstance.get() as fresh:
        assert fresh.get_dynamic_partitions("world") == ["before", "during"]


def test_a_run_s_own_database_is_held_from_its_first_event(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    runs = tmp_path / "home" / "history" / "runs"
    with hold_open(instance) as held:
        with held.run() as run_id:
            result = DEFS.resolve_job_def("one_job").execute_in_process(
                instance=instance, run_id=run_id
            )
            assert result.success and result.run_id == run_id
            assert _wal(runs / f"{run_id}.db").exists()
        assert not _wal(runs / f"{run_id}.db").exists()
        with held.run() as second:
            assert second != run_id
    assert not _wal(runs / "index.db").exists()
    materialized = instance.get_latest_materialization_event(dg.AssetKey("one"))
    assert materialized is not None and materialized.run_id == run_id


def test_other_storages_are_left_alone() -> None:
    with dg.DagsterInstance.ephemeral() as instance, hold_open(instance) as held:
        with held.run() as run_id:
            result = DEFS.resolve_job_def("one_job").execute_in_process(
                instance=instance, run_id=run_id
            )
        assert result.success and result.run_id == run_id
