"""A digest of an Arrow table's content, for results kept in memory and keyed by their inputs."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pyarrow as pa

__all__ = ["table_fingerprint"]


def table_fingerprint(table: pa.Table, columns: Sequence[str] | None = None) -> str:
    """A digest of the columns' types and bytes (hashing is far cheaper than recomputing).

    Args:
        table: The table.
        columns: The columns the kept result depends on (default: every column).
    """
    digest = hashlib.blake2b(digest_size=20)
    for name in table.column_names if columns is None else columns:
        for chunk in table[name].chunks:
            digest.update(f"{name}:{chunk.type}:{chunk.offset}:{len(chunk)};".encode())
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(buffer)
    return digest.hexdigest()
