"""Table schemas (one source of column truth), the Parquet layout, and DuckDB access."""

from ._layout import PART_FILE, StagedWrite, glob, partition_dir, staged, write_table
from ._schemas import (
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    PROBES,
    TRANSCRIPTS,
    WORLD_TABLES,
    TableDef,
)

__all__ = [
    "EVENT_SCHEDULES",
    "GROUND_TRUTH",
    "LATENT_PROFILES",
    "PART_FILE",
    "PROBES",
    "TRANSCRIPTS",
    "WORLD_TABLES",
    "StagedWrite",
    "TableDef",
    "glob",
    "partition_dir",
    "staged",
    "write_table",
]
