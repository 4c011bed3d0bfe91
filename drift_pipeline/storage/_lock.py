"""One writer per storage root: a second ``drift run`` on the same folder refuses to start.

Two runs writing one root at once would each stage and commit whole cells (no file is ever
half-written), but their manifests and reruns would interleave. A local root is therefore
locked with an exclusive ``flock`` on ``<root>/.drift-run.lock`` for the whole run; the kernel
releases it when the process ends, however it ends (kill -9 included), so a stale lock never
blocks a rerun. The file is left in place: removing it would let a third run lock a new file
while a second still holds the old one.

S3 has no lock primitive: on an ``s3://`` root this is a no-op, and keeping to one run per
prefix is the user's responsibility (each object is still written whole).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from ._root import RootLike, StorageRoot

LOCK_FILE = ".drift-run.lock"


class RootBusy(RuntimeError):
    """Another process holds the root's lock; the message is one line naming it."""


@contextmanager
def exclusive_root(root: RootLike, holder: str = "drift run") -> Iterator[None]:
    """Hold the root's writer lock for the duration of the block.

    Args:
        root: The storage root (a folder is created if missing; S3: no lock is taken).
        holder: How the holder is described to a process that finds the root busy.

    Raises:
        RootBusy: Another process holds the lock (one line: the folder, who holds it, what
            to do).
    """
    storage = StorageRoot.from_url(root)
    folder = storage.local_path
    if folder is None:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held below
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            other = handle.read().strip() or "another process"
            raise RootBusy(
                f"{folder} is in use by {other}; wait for it to finish or give another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{holder} (pid {os.getpid()})\n")
        handle.flush()
        yield
    finally:
        handle.close()
