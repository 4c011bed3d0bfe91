"""What an adapter keeps beyond one worker process, in the worker's state folder.

A worker that is restarted (after a timeout or a crash) builds its adapter again; what the
service or server holds survives, so the adapter keeps the names it created and what its
reads depend on in a small JSON file there, and finds them again.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["KeptNames", "state_folder"]


@functools.cache
def _scratch() -> str:
    # Names kept here serve only this process (the next one makes a folder of its own), so the
    # folder goes when the process exits rather than piling up in the temp folder.
    folder = tempfile.mkdtemp(prefix="drift-adapter-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def state_folder() -> str:
    """The worker's own state folder (``DRIFT_STATE_DIR``), else a new temporary folder.

    Never the current folder: an adapter built outside a worker (in a script, before it is sent
    to one) must not leave files in whatever folder it happens to be built in.
    """
    return os.environ.get("DRIFT_STATE_DIR") or _scratch()


class KeptNames:
    """Names an adapter created at its service, kept in the worker's state folder.

    A restarted worker builds the adapter afresh; the service still holds what the first
    instance stored, so the new one must address the same workspace, users and agents, and
    know what its reads depend on (whom each agent has met). Outside a worker the folder is a
    temporary one, never the current folder.
    """

    def __init__(self, adapter: str) -> None:
        self._path = Path(state_folder()) / f".{adapter}-names.json"
        try:
            self._names: dict[str, Any] = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._names = {}

    def get(self, key: str) -> str | None:
        """The name kept under ``key``, if any."""
        value = self._names.get(key)
        return value if isinstance(value, str) else None

    def put(self, key: str, name: str) -> None:
        """Keep ``name`` under ``key`` (written at once, atomically)."""
        self._names[key] = name
        self._write()

    def members(self, key: str) -> list[str]:
        """The names listed under ``key``, in the order added (empty if none)."""
        value = self._names.get(key)
        return [str(item) for item in value] if isinstance(value, list) else []

    def add_member(self, key: str, name: str) -> None:
        """Add ``name`` to the list under ``key`` (written at once, only when it is new)."""
        listed = self.members(key)
        if name not in listed:
            self._names[key] = [*listed, name]
            self._write()

    def _write(self) -> None:
        partial = self._path.with_suffix(".partial")
        partial.write_text(json.dumps(self._names, sort_keys=True), encoding="utf-8")
        partial.replace(self._path)

    def prefix(self, stem: str) -> str:
        """``stem`` plus a random suffix made once per worker's state (so runs never mix)."""
        kept = self.get("prefix")
        if kept is None:
            kept = f"{stem}-{secrets.token_hex(4)}"
            self.put("prefix", kept)
        return kept
