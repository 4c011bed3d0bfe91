"""Where tables live: hive-partitioned Parquet, one file per partition, written atomically."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ._schemas import TableDef

PART_FILE = "part-0.parquet"
_STAGING = ".staging"


def partition_dir(root: Path, table: TableDef, keys: Mapping[str, str]) -> Path:
    """``<root>/<table>/<key>=<value>/…`` for the table's partition keys, in order.

    Raises:
        ValueError: If a key is missing or a value would escape its folder.

    """
    path = root / table.name
    for key in table.partition_by:
        value = keys[key]
        if not value or "/" in value or value in (".", "..") or "=" in value:
            raise ValueError(f"partition value {key}={value!r} cannot be a folder name")
        path = path / f"{key}={value}"
    return path


def glob(root: Path | str, table: TableDef) -> str:
    """The DuckDB glob reading every partition of a table."""
    return f"{str(root).rstrip('/')}/{table.name}/**/*.parquet"


def write_table(path: Path, data: pa.Table) -> None:
    """Write one Parquet file deterministically (no timestamps, fixed writer settings)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        data,
        path,
        compression="zstd",
        compression_level=3,
        use_dictionary=True,
        write_statistics=True,
        store_schema=True,
    )


class StagedWrite:
    """Files written to a staging folder and moved into place together on commit.

    A failed run leaves nothing behind: the staging folder is removed and the destination is
    untouched; a rerun replaces a partition's file with a single rename.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stage = root / _STAGING / uuid.uuid4().hex
        self._files: list[tuple[Path, Path]] = []
        # Folders this write creates (deepest first): a discarded write takes them away again.
        self._new_dirs = [path for path in (root, *root.parents) if not path.exists()]

    def put(self, table: TableDef, keys: Mapping[str, str], data: pa.Table) -> Path:
        """Stage one partition file; returns its final path."""
        if data.schema != table.schema:
            data = data.cast(table.schema)
        final = partition_dir(self.root, table, keys) / PART_FILE
        staged = self.stage / final.relative_to(self.root)
        write_table(staged, data)
        self._files.append((staged, final))
        return final

    def put_text(self, relative: str, text: str) -> Path:
        """Stage a small text file (a manifest) at ``relative`` under the root."""
        final = self.root / relative
        staged = self.stage / relative
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(text, encoding="utf-8")
        self._files.append((staged, final))
        return final

    def commit(self) -> list[Path]:
        """Move every staged file into place (each move is an atomic rename)."""
        moved = []
        for staged, final in self._files:
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, final)
            moved.append(final)
        self.discard()
        return moved

    def discard(self) -> None:
        """Drop everything staged."""
        shutil.rmtree(self.stage, ignore_errors=True)
        for folder in (self.stage.parent, *self._new_dirs):
            if not folder.exists():
                continue
            if any(folder.iterdir()):
                break
            folder.rmdir()


@contextmanager
def staged(root: Path) -> Iterator[StagedWrite]:
    """Stage writes under ``root``; commit on success, discard on any exception."""
    writer = StagedWrite(root)
    try:
        yield writer
    except BaseException:
        writer.discard()
        raise
    writer.commit()
