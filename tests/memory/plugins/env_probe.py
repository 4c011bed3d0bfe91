"""A backend that reports what its worker process can see: environment, folder, user.

``retrieve`` answers with JSON; the isolation tests read it back from ``retrievals``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

from drift_pipeline.memory import Message, TokenCounts


def _readable(path: str) -> bool:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            Path(path).read_bytes()
        return True
    except OSError:
        return False


def _descriptors() -> dict[int, str]:
    """What each open descriptor of this process refers to."""
    found: dict[int, str] = {}
    for name in os.listdir("/proc/self/fd"):
        # The listing's own descriptor is closed by now: not reported.
        with contextlib.suppress(OSError):
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return found


def _status() -> dict[str, str]:
    """Privilege fields of ``/proc/self/status`` (capabilities, no_new_privs)."""
    wanted = ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Uid", "Gid", "Groups")
    fields: dict[str, str] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in wanted:
            fields[key] = value.strip()
    return fields


class EnvProbe:
    """Stores nothing; reports its process's view of the world.

    Args:
        peek: Paths to try to read (files) or list (folders); reported as readable or not.
    """

    name = "env_probe"
    version = "1"
    # Declared: it remembers nothing on purpose (the conformance check verifies it returns
    # nothing it was told).
    keeps_nothing = True

    def __init__(self, peek: list[str] | None = None) -> None:
        self.peek = list(peek or [])

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        cwd = os.getcwd()
        try:
            probe = Path(cwd, "probe-write.txt")
            probe.write_text("ok")
            writable = probe.read_text() == "ok"
        except OSError:
            writable = False
        report: dict[str, Any] = {
            "env": dict(os.environ),
            "cwd": cwd,
            "uid": os.getuid(),
            "euid": os.geteuid(),
            "gid": os.getgid(),
            "cwd_writable": writable,
            "readable": {path: _readable(path) for path in self.peek},
            "status": _status(),
            "fds": _descriptors(),
            "pid": os.getpid(),
            "session": os.getsid(0),
            "path": list(sys.path),
            "gc": {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()},
        }
        return json.dumps(report)

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""
