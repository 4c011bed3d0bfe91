"""The five world tables, read back from real Parquet files by DuckDB."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest
from helpers import Worlds, table_sql

import drift_pipeline.storage as storage
from drift_pipeline.storage import PART_FILE, WORLD_TABLES, TableDef, glob

REQUIRED = {
    "latent_profiles": ("scenario", "horizon", "replicate", "entity_id", "entity_type"),
    "event_schedules": ("scenario", "horizon", "replicate", "session_index", "sim_time", "tier"),
    "transcripts": (
        "scenario",
        "horizon",
        "replicate",
        "session_index",
        "turn_index",
        "speaker",
        "role",
        "content",
    ),
    "ground_truth": (
        "scenario",
        "horizon",
        "replicate",
        "checkpoint",
        "subject",
        "slot",
        "value",
        "valid_from",
        "valid_to",
        "current",
    ),
    "probes": (
        "scenario",
        "horizon",
        "replicate",
        "checkpoint",
        "probe_id",
        "probe_type",
        "subtype",
        "question",
        "answer",
    ),
}

# How DuckDB names the Arrow types the schemas use.
DUCKDB_TYPES = {
    "string": "VARCHAR",
    "int8": "TINYINT",
    "int32": "INTEGER",
    "int64": "BIGINT",
    "bool": "BOOLEAN",
    "double": "DOUBLE",
    "timestamp[ms]": "TIMESTAMP",
    "list<item: string>": "VARCHAR[]",
    "list<item: int32>": "INTEGER[]",
}


def _duckdb_type(arrow_type: object) -> str:
    text = str(arrow_type)
    if text.startswith("list<item: struct<"):
        return "STRUCT"
    return DUCKDB_TYPES[text]


def test_the_five_world_tables():
    assert [table.name for table in WORLD_TABLES] == list(REQUIRED)


@pytest.mark.parametrize("table", WORLD_TABLES, ids=lambda t: t.name)
def test_duckdb_reads_each_table_with_the_required_columns(worlds: Worlds, table: TableDef):
    with duckdb.connect() as con:
        source = table_sql(worlds.root, table.name)
        described = con.sql(f"describe select * from {source}").fetchall()
        count = con.sql(f"select count(*) from {source}").fetchall()[0]
    columns = {row[0]: row[1] for row in described}
    assert count is not None and count[0] > 0
    assert set(REQUIRED[table.name]) <= set(columns)
    # Exactly the schema's columns, in its order, with the matching DuckDB types.
    assert list(columns) == table.schema.names
    for field in table.schema:
        expected = _duckdb_type(field.type)
        if expected == "STRUCT":
            assert columns[field.name].startswith("STRUCT(") and columns[field.name].endswith("[]")
        else:
            assert columns[field.name] == expected, field.name


@pytest.mark.parametrize("table", WORLD_TABLES, ids=lambda t: t.name)
def test_every_file_has_exactly_the_storage_schema(worlds: Worlds, table: TableDef):
    files = sorted((worlds.root / table.name).rglob("*.parquet"))
    assert len(files) == 4  # one per (scenario, horizon)
    for path in files:
        assert path.name == PART_FILE
        assert pq.read_schema(path).remove_metadata() == table.schema
        folders = path.parent.relative_to(worlds.root / table.name).parts
        keys = dict(part.split("=", 1) for part in folders)
        assert tuple(keys) == table.partition_by
        # The hive folder agrees with the columns stored in the file.
        data = pq.read_table(path, columns=list(table.partition_by))
        for key, value in keys.items():
            assert set(data.column(key).to_pylist()) == {value}


def test_the_storage_glob_reads_the_same_rows(worlds: Worlds):
    for table in WORLD_TABLES:
        via_glob = duckdb.sql(
            f"select count(*) from "
            f"read_parquet('{glob(worlds.root, table)}', hive_partitioning=true)"
        ).fetchall()[0]
        source = table_sql(worlds.root, table.name)
        via_sql = duckdb.sql(f"select count(*) from {source}").fetchall()[0]
        assert via_glob == via_sql


def test_nullable_columns_are_the_optional_ones(worlds: Worlds):
    for table in WORLD_TABLES:
        for field in table.schema:
            if field.nullable:
                continue
            nulls = duckdb.sql(
                f"select count(*) from {table_sql(worlds.root, table.name)} "
                f"where {field.name} is null"
            ).fetchall()[0]
            assert nulls == (0,), (table.name, field.name)
    # Event columns are null exactly on noise sessions.
    mismatched = duckdb.sql(
        f"select count(*) from {table_sql(worlds.root, 'event_schedules')} "
        "where (tier = 'noise') <> (event_id is null) or (event_id is null) <> (mention is null)"
    ).fetchall()[0]
    assert mismatched == (0,)


def test_every_exported_table_partitions_on_its_own_columns():
    tables = [value for value in vars(storage).values() if isinstance(value, TableDef)]
    assert set(WORLD_TABLES) <= set(tables)
    assert len({table.name for table in tables}) == len(tables)
    for table in tables:
        assert set(table.partition_by) <= set(table.schema.names), table.name
        assert len(set(table.schema.names)) == len(table.schema.names), table.name
        assert table.description
