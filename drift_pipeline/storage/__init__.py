"""Table schemas (one source of column truth), the Parquet layout, and the storage root.

The root is a local folder or an ``s3://bucket/prefix`` URL (:class:`StorageRoot`).
"""

from ._fingerprint import table_fingerprint
from ._layout import PART_FILE, StagedWrite, glob, partition_dir, staged, write_table
from ._lock import (
    LOCK_FILE,
    RootBusy,
    RootUnusable,
    exclusive_root,
    folder_problem,
    prepare_root,
)
from ._root import (
    S3_ENDPOINT_ENV,
    Location,
    PartitionKeys,
    RootLike,
    StorageRoot,
    partition_file,
    partition_values,
)
from ._schemas import (
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
    SYNTHESIS_FALLBACKS,
    TRANSCRIPTS,
    WORLD_TABLES,
    TableDef,
)
from ._views import DERIVED_VIEWS

__all__ = [
    "CELL_METRICS",
    "CELL_TABLES",
    "COST_CURVES",
    "DERIVED_VIEWS",
    "EVENT_SCHEDULES",
    "GROUND_TRUTH",
    "LATENT_PROFILES",
    "LOCK_FILE",
    "MEMORY_SNAPSHOTS",
    "PART_FILE",
    "PROBES",
    "PROBE_ANSWERS",
    "RETRIEVALS",
    "S3_ENDPOINT_ENV",
    "SYNTHESIS_FALLBACKS",
    "TRANSCRIPTS",
    "WORLD_TABLES",
    "Location",
    "PartitionKeys",
    "RootBusy",
    "RootLike",
    "RootUnusable",
    "StagedWrite",
    "StorageRoot",
    "TableDef",
    "exclusive_root",
    "folder_problem",
    "glob",
    "partition_dir",
    "partition_file",
    "partition_values",
    "prepare_root",
    "staged",
    "table_fingerprint",
    "write_table",
]
