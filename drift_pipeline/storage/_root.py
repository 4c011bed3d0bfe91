"""The storage root: a local folder (the default) or an ``s3://bucket/prefix`` URL through s3fs.

Every table lives at ``<root>/<table>/<key>=<value>/…/part-0.parquet``, whatever the
root is. :class:`StorageRoot` is the one place that knows how to reach such a root: it reads
partitions and small text files, tells whether they exist, writes a small file atomically and
hands out a DuckDB connection that can read ``read_parquet('<root>/<table>/**/*.parquet')``.
Staged writes of many files (:mod:`._layout`) are built on it.

A local root keeps working exactly as a plain folder did: the same paths, the same bytes, the
same temp-file-and-rename commits. An S3 root takes its endpoint and credentials from the
environment: the standard AWS variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``, profiles, …, read by
botocore) plus ``DRIFT_S3_ENDPOINT_URL`` for an S3-compatible server (MinIO, moto, …).
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from drift_pipeline.keys import CellKey, WorldKey

from ._schemas import TableDef

if TYPE_CHECKING:
    import duckdb

PART_FILE = "part-0.parquet"
S3_ENDPOINT_ENV = "DRIFT_S3_ENDPOINT_URL"
"""Environment variable naming an S3-compatible endpoint (e.g. ``http://127.0.0.1:9000``)."""

_S3_SCHEMES = ("s3://",)

Location = Path | str
"""Where a stored file is: a :class:`~pathlib.Path` under a local root, a URL under S3."""


PartitionKeys = WorldKey | CellKey | Mapping[str, str]
"""What names a partition: a world or cell key, or the hive values themselves."""


def partition_values(keys: PartitionKeys) -> Mapping[str, str]:
    """The hive partition values (``scenario``, ``horizon``[, ``arm``]) of a key."""
    if isinstance(keys, WorldKey | CellKey):
        return keys.partition_values
    return keys


def partition_parts(table: TableDef, keys: PartitionKeys) -> list[str]:
    """``[<table>, <key>=<value>, …]`` for the table's partition keys, in order.

    Raises:
        ValueError: If a value would escape its folder.
        KeyError: If a partition key is missing.

    """
    values = partition_values(keys)
    parts = [table.name]
    for key in table.partition_by:
        value = values[key]
        if not value or "/" in value or value in (".", "..") or "=" in value:
            raise ValueError(f"partition value {key}={value!r} cannot be a folder name")
        parts.append(f"{key}={value}")
    return parts


def partition_file(table: TableDef, keys: PartitionKeys) -> str:
    """``<table>/<key>=<value>/…/part-0.parquet``: a partition's file, relative to the root."""
    return "/".join([*partition_parts(table, keys), PART_FILE])


def _relative(relative: str) -> str:
    """A root-relative path, refused when it could leave the root."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{relative!r} is not a path relative to the storage root")
    return relative


@dataclass(frozen=True)
class StorageRoot:
    """Where every table lives: a local folder or an S3 prefix, behind one set of methods.

    Build one with :meth:`from_url`; functions taking a root accept a ``str``, a ``Path`` or a
    ``StorageRoot`` and go through :meth:`from_url` themselves.

    Attributes:
        url: The root as given, normalised: the folder (``data``, ``/srv/drift``) or
            ``s3://bucket/prefix`` without a trailing slash.
        local_path: The folder of a local root; ``None`` for S3.
        storage_options: Extra keyword arguments of the S3 filesystem (empty for local).
    """

    url: str
    local_path: Path | None
    storage_options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    _fs: Any = field(default=None, compare=False, repr=False)

    # --- construction -------------------------------------------------------------------

    @classmethod
    def from_url(
        cls,
        root: str | os.PathLike[str] | StorageRoot,
        storage_options: Mapping[str, Any] | None = None,
    ) -> StorageRoot:
        """The root named by ``root``: ``s3://bucket[/prefix]`` or a local folder.

        Args:
            root: A folder (``str`` or ``Path``), an ``s3://`` URL, a ``file://`` URL, or a
                ``StorageRoot`` (returned as is).
            storage_options: For S3, keyword arguments of ``s3fs.S3FileSystem`` that override
                what the environment gives (``key``, ``secret``, ``endpoint_url``, …).

        Raises:
            ValueError: For another URL scheme, or an S3 URL without a valid bucket.
        """
        if isinstance(root, StorageRoot):
            return root
        if isinstance(root, os.PathLike):
            return cls(str(Path(root)), Path(root))
        text = str(root)
        if text.startswith("file://"):
            text = text[len("file://") :] or "/"
        if text.startswith(_S3_SCHEMES):
            return cls._s3(text, dict(storage_options or {}))
        if "://" in text:
            scheme = text.split("://", 1)[0]
            raise ValueError(
                f"storage root {root!r}: unsupported scheme {scheme!r} "
                "(use a local folder or s3://bucket/prefix)"
            )
        return cls(str(Path(text)), Path(text))

    @classmethod
    def _s3(cls, url: str, options: dict[str, Any]) -> StorageRoot:
        path = url.split("://", 1)[1].strip("/")
        bucket = path.split("/", 1)[0]
        if len(bucket) < 3 or any(part in ("", ".", "..") for part in path.split("/")):
            raise ValueError(f"storage root {url!r}: expected s3://bucket[/prefix]")
        return cls(f"s3://{path}", None, options)

    # --- what kind of root ----------------------------------------------------------------

    @property
    def is_local(self) -> bool:
        """Whether the root is a folder on this machine."""
        return self.local_path is not None

    @property
    def fs(self) -> Any:
        """The fsspec filesystem of the root (``LocalFileSystem`` or ``s3fs.S3FileSystem``)."""
        if self._fs is None:
            object.__setattr__(self, "_fs", self._make_fs())
        return self._fs

    def _make_fs(self) -> Any:
        if self.local_path is not None:
            from fsspec.implementations.local import LocalFileSystem

            return LocalFileSystem()
        import s3fs

        options: dict[str, Any] = {
            # Other processes (Dagster runs, a second ``drift run``) write under the same
            # prefix: never answer ``exists`` from a stale listing.
            "use_listings_cache": False,
        }
        endpoint = os.environ.get(S3_ENDPOINT_ENV)
        if endpoint:
            options["endpoint_url"] = endpoint
        options.update(self.storage_options)
        return s3fs.S3FileSystem(**options)

    def protect_paths(self) -> tuple[Path, ...]:
        """Local folders a sandboxed backend must not see: the root itself, or none for S3."""
        return (self.local_path.resolve(),) if self.local_path is not None else ()

    def __str__(self) -> str:
        return self.url

    # --- paths ------------------------------------------------------------------------------

    def _fs_path(self, relative: str) -> str:
        """Path of ``relative`` as the filesystem names it (``bucket/prefix/…`` for S3)."""
        return f"{self.url.split('://', 1)[1]}/{_relative(relative)}"

    def location(self, relative: str) -> Location:
        """``relative`` under the root: a ``Path`` for a local root, an ``s3://`` URL else."""
        if self.local_path is not None:
            return self.local_path / _relative(relative)
        return f"{self.url}/{_relative(relative)}"

    def partition_path(self, table: TableDef, keys: PartitionKeys) -> Location:
        """The Parquet file of one partition (see :meth:`location`).

        Raises:
            ValueError: If a value would escape its folder.
            KeyError: If a partition key is missing.
        """
        return self.location(partition_file(table, keys))

    def glob(self, table: TableDef) -> str:
        """The DuckDB glob of every partition of a table (read through :meth:`duckdb_connect`)."""
        return f"{self.url.rstrip('/')}/{table.name}/**/*.parquet"

    # --- reading ----------------------------------------------------------------------------

    def exists(self, relative: str) -> bool:
        """Whether a file exists at ``relative`` under the root."""
        if self.local_path is not None:
            return (self.local_path / _relative(relative)).exists()
        return bool(self.fs.exists(self._fs_path(relative)))

    def partition_exists(self, table: TableDef, keys: PartitionKeys) -> bool:
        """Whether one partition's Parquet file exists."""
        return self.exists(partition_file(table, keys))

    def has_table(self, table: TableDef) -> bool:
        """Whether any partition of ``table`` is stored."""
        if self.local_path is not None:
            folder = self.local_path / table.name
            return folder.is_dir() and any(folder.rglob("*.parquet"))
        return any(str(p).endswith(".parquet") for p in self.fs.find(self._fs_path(table.name)))

    def read_table(
        self, table: TableDef, keys: PartitionKeys, columns: Sequence[str] | None = None
    ) -> pa.Table:
        """One partition's rows, as written (only ``columns``, when given).

        Raises:
            FileNotFoundError: If the partition is not stored.
        """
        return self.read_parquet(partition_file(table, keys), columns)

    def read_parquet(self, relative: str, columns: Sequence[str] | None = None) -> pa.Table:
        """The Parquet file at ``relative`` (one GET on S3), or only its ``columns``.

        Raises:
            FileNotFoundError: If there is none.
        """
        wanted = list(columns) if columns is not None else None
        if self.local_path is not None:
            return pq.read_table(self.local_path / _relative(relative), columns=wanted)
        return pq.read_table(io.BytesIO(self.read_bytes(relative)), columns=wanted)

    def read_bytes(self, relative: str) -> bytes:
        """The bytes of the file at ``relative``.

        Raises:
            FileNotFoundError: If there is none.
        """
        if self.local_path is not None:
            return (self.local_path / _relative(relative)).read_bytes()
        return bytes(self.fs.cat_file(self._fs_path(relative)))

    def read_text(self, relative: str) -> str:
        """A small UTF-8 file (a manifest).

        Raises:
            FileNotFoundError: If there is none.
        """
        return self.read_bytes(relative).decode("utf-8")

    # --- writing ----------------------------------------------------------------------------

    def write_text(self, relative: str, text: str) -> Location:
        """Write one small UTF-8 file at once: temp file and rename locally, one PUT on S3."""
        data = text.encode("utf-8")
        if self.local_path is None:
            self.fs.pipe_file(self._fs_path(relative), data)
            return self.location(relative)
        final = self.local_path / _relative(relative)
        final.parent.mkdir(parents=True, exist_ok=True)
        # Beside its destination, so that the rename is atomic (one filesystem); the name ends
        # in .tmp, which no reader's glob matches.
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed before the rename
            dir=final.parent, prefix=f".{final.name}.", suffix=".tmp", delete=False
        )
        try:
            with handle:
                handle.write(data)
            os.replace(handle.name, final)
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise
        return final

    def put_file(self, source: Path, relative: str) -> None:
        """Upload a finished local file as one object (S3 only; objects appear atomically)."""
        self.fs.put_file(str(source), self._fs_path(relative))

    def remove(self, relative: str) -> None:
        """Delete the file at ``relative`` (missing is fine)."""
        if self.local_path is not None:
            (self.local_path / _relative(relative)).unlink(missing_ok=True)
            return
        with suppress(FileNotFoundError):
            self.fs.rm_file(self._fs_path(relative))

    # --- DuckDB -----------------------------------------------------------------------------

    def duckdb_connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB that can read this root's globs.

        For S3 the root's filesystem is registered with DuckDB (no httpfs extension needed),
        so ``read_parquet('s3://…/<table>/**/*.parquet', hive_partitioning=true)`` works.
        """
        import duckdb

        con = duckdb.connect()
        if self.local_path is None:
            con.register_filesystem(self.fs)
        return con


RootLike = str | os.PathLike[str] | StorageRoot
"""What functions taking a storage root accept."""
