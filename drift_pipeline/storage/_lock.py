"""One writer per storage root: a second ``drift run`` on the same folder refuses to start.

Two runs writing one root at once would each stage and commit whole cells (no file is ever
half-written), but their manifests and reruns would interleave. A local root is therefore
locked with an exclusive ``flock`` on ``<root>/.drift-run.lock`` for the whole run; the kernel
releases it when the process ends, however it ends (kill -9 included), so a stale lock never
blocks a rerun. The file is left in place: removing it would let a third run lock a new file
while a second still holds the old one.

S3 has no lock primitive: on an ``s3://`` root this is a no-op, and keeping to one run per
prefix is the user's responsibility (each object is still written whole).

A local root that cannot be a folder to write in (a file is in the way, its parent cannot be
created, it is not writable) is refused before anything is written, with one line naming the
folder and why (:class:`RootUnusable`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._root import RootLike, StorageRoot

LOCK_FILE = ".drift-run.lock"


class RootBusy(RuntimeError):
    """Another process holds the root's lock; the message is one line naming it."""


class RootUnusable(ValueError):
    """A local root that cannot be a folder to write in; nothing was written under it.

    Attributes:
        folder: The root's folder.
        reason: What is wrong, e.g. ``data is a file, not a folder`` (the message is
            ``folder: reason``).
    """

    def __init__(self, folder: Path, reason: str) -> None:
        super().__init__(f"{folder}: {reason}")
        self.folder = folder
        self.reason = reason


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be a folder to write in, found without writing; ``None``: it can.

    Spots a file standing at the folder or at one of its parents, and a nearest existing
    parent that this process may not write in. A folder the system refuses to create for
    another reason (a read-only or virtual file system) is only found by trying, as
    :func:`prepare_root` does.
    """
    for place in (folder, *folder.parents):
        if not place.exists():
            continue
        if not place.is_dir():
            return f"{place} is a file, not a folder"
        return None if os.access(place, os.W_OK | os.X_OK) else f"{place} is not writable"
    return None


def prepare_root(root: RootLike) -> None:
    """Create a local root's folder if it is missing (an ``s3://`` root needs nothing).

    Raises:
        RootUnusable: It cannot be a folder to write in (one line: the folder and why).
    """
    folder = StorageRoot.from_url(root).local_path
    if folder is None:
        return
    problem = folder_problem(folder)
    if problem is not None:
        raise RootUnusable(folder, problem)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RootUnusable(folder, f"cannot create it ({error.strerror or error})") from None


@contextmanager
def exclusive_root(root: RootLike, holder: str = "drift run") -> Iterator[None]:
    """Hold the root's writer lock for the duration of the block.

    Args:
        root: The storage root (a folder is created if missing; S3: no lock is taken).
        holder: How the holder is described to a process that finds the root busy.

    Raises:
        RootUnusable: The folder cannot be created or written in (nothing was written).
        RootBusy: Another process holds the lock (one line: the folder, who holds it, what
            to do).
    """
    storage = StorageRoot.from_url(root)
    folder = storage.local_path
    if folder is None:
        yield
        return
    prepare_root(storage)
    try:
        handle = open(folder / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115 - held below
    except OSError as error:
        raise RootUnusable(folder, f"cannot write in it ({error.strerror or error})") from None
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
