"""Sandbox uids, each leased to one worker at a time across every harness on the machine.

A root harness runs each worker as an unprivileged uid of its own, so that workers cannot read
each other's folders. Picking a uid from the process id alone let two runs started at once hand
the same uid to two workers; a lease is an exclusive ``flock`` on a per-uid file in a folder
only root may write, held for the worker's life and released by the kernel if the harness dies.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

UID_BASE = 61000
UID_SPAN = 4000


@dataclass
class UidLease:
    """One uid held by this process until :meth:`release` (or until the process ends)."""

    uid: int
    handle: IO[bytes] | None

    def release(self) -> None:
        """Give the uid back."""
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def lease_folder() -> Path:
    """The folder of lease files: under ``/run`` when it can be written, else the temp folder.

    Raises:
        PermissionError: One line, when the folder exists but others could write to it (a
            lease taken there would prove nothing).
    """
    base = Path("/run") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    folder = base / f"drift-pipeline-uids-{os.geteuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.geteuid()
        or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        raise PermissionError(
            f"sandbox uid leases: {folder} is not a folder only this user can write; remove it"
        )
    return folder


def _is_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def lease_uid(first: int) -> UidLease:
    """Lease a free sandbox uid, trying ``first`` and then the following ones in turn.

    Args:
        first: Where to start looking (folded into the sandbox range).

    Raises:
        RuntimeError: One line, when every uid of the range is held.
    """
    folder = lease_folder()
    for step in range(UID_SPAN):
        uid = UID_BASE + (first - UID_BASE + step) % UID_SPAN
        if _is_account(uid):
            continue  # a real account's files must never become a worker's
        handle = open(folder / f"{uid}.lock", "ab")  # noqa: SIM115 - held for the lease's life
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return UidLease(uid, handle)
    raise RuntimeError(
        f"every sandbox uid {UID_BASE}..{UID_BASE + UID_SPAN - 1} is leased; too many workers"
    )
