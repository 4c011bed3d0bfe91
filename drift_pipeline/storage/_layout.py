"""Where tables live: hive-partitioned Parquet, one file per partition, written atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ._root import (
    PART_FILE,
    Location,
    PartitionKeys,
    RootLike,
    StorageRoot,
    partition_file,
    partition_parts,
)
from ._schemas import TableDef

__all__ = ["PART_FILE", "StagedWrite", "glob", "partition_dir", "staged", "write_table"]

_STAGING = ".staging"


def partition_dir(root: Path, table: TableDef, keys: PartitionKeys) -> Path:
    """``<root>/<table>/<key>=<value>/…`` for the table's partition keys, in order.

    Raises:
        ValueError: If a key is missing or a value would escape its folder.

    """
    return root.joinpath(*partition_parts(table, keys))


def glob(root: RootLike, table: TableDef) -> str:
    """The DuckDB glob reading every partition of a table."""
    if isinstance(root, StorageRoot):
        return root.glob(table)
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
    untouched.

    Under a local root the staging folder is ``<root>/.staging/<id>`` and a commit moves each
    file into place with one atomic rename (a rerun replaces a partition's file the same way).
    Under an S3 root every file is finished in a local temporary folder first; the commit then
    uploads each as a single object (a reader sees the whole object or none of it), and a
    commit that fails part-way deletes the objects it had newly created.
    """

    def __init__(self, root: RootLike) -> None:
        self.storage = StorageRoot.from_url(root)
        self._files: list[tuple[Path, str]] = []
        local = self.storage.local_path
        if local is not None:
            self.root: Path | None = local
            self.stage = local / _STAGING / uuid.uuid4().hex
            # Folders this write creates (deepest first): a discarded write takes them away.
            self._new_dirs = [path for path in (local, *local.parents) if not path.exists()]
        else:
            self.root = None
            self.stage = Path(tempfile.mkdtemp(prefix="drift-stage-"))
            self._new_dirs = []

    def put(self, table: TableDef, keys: PartitionKeys, data: pa.Table) -> Location:
        """Stage one partition file; returns its final location (a Path under a local root)."""
        return self.put_many([(table, keys, data)])[0]

    def put_many(self, items: Sequence[tuple[TableDef, PartitionKeys, pa.Table]]) -> list[Location]:
        """Stage several partition files at once; returns their final locations, in order.

        The files are encoded side by side in threads (Parquet encoding and compression run
        outside the GIL), so a world's five tables cost about as long as its transcripts alone.
        The bytes of each file are the same as :meth:`put` writes.
        """
        cast = [
            (table, keys, data if data.schema == table.schema else data.cast(table.schema))
            for table, keys, data in items
        ]
        # Names and final paths are assigned here, in order, so nothing depends on the threads.
        files = []
        for table, keys, _ in cast:
            files.append((self._next_file(), partition_file(table, keys)))
            self._files.append(files[-1])
        jobs = [(staged, data) for (staged, _), (_, _, data) in zip(files, cast, strict=True)]
        if len(jobs) == 1:
            write_table(*jobs[0])
        else:
            with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
                list(pool.map(lambda job: write_table(*job), jobs))
        return [self.storage.location(relative) for _, relative in files]

    def _make_stage(self) -> None:
        # Writers in other processes (``drift run --jobs``) may remove the shared, empty
        # ``.staging`` folder between its creation and this writer's folder inside it, or
        # between pathlib finding it exists and checking that it is a folder: try again.
        for _ in range(20):
            try:
                self.stage.mkdir(parents=True, exist_ok=True)
                return
            except (FileNotFoundError, FileExistsError):
                continue
        self.stage.mkdir(parents=True, exist_ok=True)

    def _next_file(self) -> Path:
        # Staged files sit flat in the staging folder (their final path is kept beside them):
        # a nested copy of the hive layout cost one rmdir per level on discard, ~5 ms each on
        # this kind of disk, for every cell written.
        if not self._files:
            self._make_stage()
        return self.stage / f"{len(self._files):05d}.part"

    def put_text(self, relative: str, text: str) -> Location:
        """Stage a small text file (a manifest) at ``relative`` under the root."""
        final = self.storage.location(relative)
        staged = self._next_file()
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_text(text, encoding="utf-8")
        self._files.append((staged, relative))
        return final

    def commit(self) -> list[Location]:
        """Move every staged file into place (each move is an atomic rename or one PUT)."""
        if self.root is None:
            return self._upload()
        moved: list[Location] = []
        for staged, relative in self._files:
            final = self.root / relative
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, final)
            moved.append(final)
        self.discard()
        return moved

    def _upload(self) -> list[Location]:
        created: list[str] = []
        uploaded: list[Location] = []
        try:
            for staged, relative in self._files:
                existed = self.storage.exists(relative)
                self.storage.put_file(staged, relative)
                if not existed:
                    created.append(relative)
                uploaded.append(self.storage.location(relative))
        except BaseException:
            # Objects replaced before the failure cannot be restored; new ones are taken away.
            for relative in created:
                self.storage.remove(relative)
            raise
        finally:
            self.discard()
        return uploaded

    def discard(self) -> None:
        """Drop everything staged."""
        shutil.rmtree(self.stage, ignore_errors=True)
        if self.root is None:
            return
        for folder in (self.stage.parent, *self._new_dirs):
            # Other processes (``--jobs``) stage beside this one: a folder may vanish or fill
            # between looking and removing, and either way it is no longer this writer's.
            try:
                folder.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                break  # not empty: someone else's files are in it


@contextmanager
def staged(root: RootLike) -> Iterator[StagedWrite]:
    """Stage writes under ``root``; commit on success, discard on any exception."""
    writer = StagedWrite(root)
    try:
        yield writer
    except BaseException:
        writer.discard()
        raise
    writer.commit()
