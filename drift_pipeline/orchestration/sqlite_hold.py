"""Holding a Dagster instance's SQLite databases open while the launcher runs.

Dagster's SQLite storages open a new connection for every read and write and close it after.
When the last connection to a database in WAL mode closes, SQLite checkpoints the log into the
database, syncs both and deletes the log and its shared-memory file; the next connection
creates them again. A run in process opens and closes its databases about two hundred times,
so most of its storage time went to checkpoints and file churn rather than to its events.

While :func:`hold_open` is active, one idle connection of the launcher's own stays open on the
instance's event index and run database, and on each run's event database from the run's first
event, so the logs stay in place between Dagster's connections. Nothing else changes: each
commit is synced as before, SQLite still checkpoints whenever a log reaches its size limit, and
closing the held connections checkpoints and removes the logs as usual. Other storages
(PostgreSQL) are left alone.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path

import dagster as dg
from dagster._core.storage.event_log import SqliteEventLogStorage


def _hold(stack: ExitStack, path: Path) -> None:
    """Keep an idle connection open on the database at ``path`` until ``stack`` closes."""
    if not path.is_file():
        return
    connection = stack.enter_context(closing(sqlite3.connect(path, isolation_level=None)))
    # One read opens the log's shared index; no transaction stays open after it, so the
    # connection never blocks a writer or a checkpoint.
    connection.execute("select count(*) from sqlite_master").fetchone()


def _run_database(instance: dg.DagsterInstance) -> Path | None:
    """The SQLite file of the instance's run storage, if it is one."""
    url = getattr(instance.run_storage, "_conn_string", None)
    if not isinstance(url, str) or not url.startswith("sqlite:///"):
        return None
    return Path(url.removeprefix("sqlite:///"))


class HeldDatabases:
    """What :func:`hold_open` yields: run ids whose event databases are held open too."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self._instance = instance
        events = instance.event_log_storage
        self._events = events if isinstance(events, SqliteEventLogStorage) else None

    @contextmanager
    def run(self) -> Iterator[str]:
        """A new run id, for ``execute_in_process(run_id=...)``.

        Dagster creates the run's event database at its first event; from then until the block
        ends that database is held open as well.
        """
        run_id = str(uuid.uuid4())
        events = self._events
        if events is None:
            yield run_id
            return
        with ExitStack() as stack:
            held: list[bool] = []

            def on_event(_event: object) -> None:
                if not held:
                    held.append(True)
                    _hold(stack, Path(events.path_for_shard(run_id)))

            self._instance.add_event_listener(run_id, on_event)
            yield run_id


@contextmanager
def hold_open(instance: dg.DagsterInstance) -> Iterator[HeldDatabases]:
    """Hold the instance's SQLite databases open until the block ends (other storages: nothing)."""
    held = HeldDatabases(instance)
    with ExitStack() as stack:
        if isinstance(instance.event_log_storage, SqliteEventLogStorage):
            _hold(stack, Path(instance.event_log_storage.path_for_shard("index")))
            runs = _run_database(instance)
            if runs is not None:
                _hold(stack, runs)
        yield held
