"""Table schemas (one source of column truth), the Parquet layout, and DuckDB access."""

from ._layout import PART_FILE, StagedWrite, glob, partition_dir, staged, write_table
from ._schemas import (
    CELL_MEMORY_TABLES,
    CELL_METRICS,
    CELL_TABLES,
    COST_CURVES,
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    WORLD_TABLES,
    TableDef,
)

__all__ = [
    "CELL_MEMORY_TABLES",
    "CELL_METRICS",
    "CELL_TABLES",
    "COST_CURVES",
    "EVENT_SCHEDULES",
    "GROUND_TRUTH",
    "LATENT_PROFILES",
    "MEMORY_SNAPSHOTS",
    "PART_FILE",
    "PROBES",
    "PROBE_ANSWERS",
    "RETRIEVALS",
    "TRANSCRIPTS",
    "WORLD_TABLES",
    "StagedWrite",
    "TableDef",
    "glob",
    "partition_dir",
    "staged",
    "write_table",
]
