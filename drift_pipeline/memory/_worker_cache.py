"""A backend's LLM cache across runs, although its worker cannot see the data root.

A backend that calls a model (the reference compressor with ``summariser="llm"``) caches its
completions in its worker's own state folder (``$DRIFT_STATE_DIR/llm_cache``). The harness
copies a persisted cache folder (``<data root>/llm_cache/<backend>``, hidden from every worker
like the rest of the data root) into that state folder after the worker starts, and copies new
entries back before it is removed, so reruns send no request. Only the worker of that arm gets
the copy, in a folder no other worker can read.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ._client import BackendWorker

__all__ = ["WORKER_CACHE", "collect_worker_cache", "seed_worker_cache"]

WORKER_CACHE = "llm_cache"
"""The cache folder inside a worker's state folder."""

_NOBODY_GROUP = 65534


def seed_worker_cache(source: Path, worker: BackendWorker) -> None:
    """Copy ``source``'s entries into ``worker``'s state folder, owned by the worker's uid."""
    target = worker.state_dir / WORKER_CACHE
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0 and worker.isolate:
        # The worker runs as its own unprivileged uid: it must be able to add entries.
        for folder, _, files in os.walk(target):
            os.chown(folder, worker.uid, _NOBODY_GROUP)
            for name in files:
                os.chown(os.path.join(folder, name), worker.uid, _NOBODY_GROUP)


def collect_worker_cache(worker: BackendWorker, destination: Path) -> int:
    """Copy the entries ``worker`` added back to ``destination``; returns how many.

    Entries are content-addressed (the same name always holds the same reply), so existing
    files are kept and concurrent replicates can merge into one folder; each file lands by
    rename, never half-written. Only ``*.json`` entries are taken: nothing else a backend might
    leave there reaches the data root.
    """
    source = worker.state_dir / WORKER_CACHE
    if not source.is_dir():
        return 0
    added = 0
    inside = source.resolve()
    for entry in sorted(source.rglob("*.json")):
        if entry.is_symlink() or not entry.is_file() or entry.name.startswith("."):
            continue
        if not entry.resolve().is_relative_to(inside):
            continue  # a linked folder leading out of the state folder
        relative = entry.relative_to(source)
        target = destination / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".partial-{os.getpid()}-{target.name}")
        shutil.copyfile(entry, partial)
        os.replace(partial, target)
        added += 1
    return added
