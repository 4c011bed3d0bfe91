"""Dagster's SQLite run and event-log storage, keeping connections open instead of one per query.

Dagster's SQLite storages build a new SQLAlchemy engine and open a new SQLite connection for
every statement, and the event log parses every alembic migration script again for each new
run's shard. A benchmark run stores a few hundred events and checks a few hundred partition
keys, so on the medium canonical world that bookkeeping was the largest part of what
``drift run --via dagster`` cost over ``drift run`` (measured: about 1,100 event-log connections
at 2.8 ms each, 340 table-existence checks each with its own engine, 55 ms per new run shard).

The classes here change only how connections are made:

* one engine per database file, keeping one connection open, for the few event-log shards
  used last (the current run's and the cross-run ``index``); older ones are closed;
* a new run shard is created as Dagster creates it (tables, WAL journal, alembic stamp at head),
  but the migration scripts are read once per process;
* a table found to exist is remembered (Dagster never drops one outside a migration);
* optionally (``synchronous: NORMAL``, which the project's ``dagster.yaml`` sets), SQLite's
  ``synchronous`` pragma is relaxed from FULL: with Dagster's WAL journal a commit then no
  longer waits for the disk. A crash of the process loses nothing and never corrupts a file;
  a power cut or kernel crash may lose the last commits (SQLite's documented trade-off). That
  was another 0.6–0.8 s of a medium world's Dagster run here. The nightly deployment on
  PostgreSQL (``dagster.postgres.yaml``) is not affected.

Files, schema, journal mode, busy timeouts and locking are Dagster's own, so anything reading the
instance (``dagster dev`` included, with either storage) sees exactly what Dagster would have
written. The project's ``dagster.yaml`` selects them. They override private methods of Dagster's
classes, so they hold for the Dagster version ``uv.lock`` pins; ``tests/defs`` checks them.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from functools import cache
from typing import Any

import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from dagster._config import Field, StringSource
from dagster._config.config_schema import UserConfigSchema
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.sql import get_alembic_config
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import QueuePool

OPEN_SHARDS = 4
"""Event-log shards whose connection stays open: the current run's, the index, some slack."""

SYNCHRONOUS_LEVELS = ("OFF", "NORMAL", "FULL", "EXTRA")
"""SQLite's ``synchronous`` settings; Dagster leaves SQLite's default, FULL."""


def _synchronous(level: str) -> str:
    """``level`` upper-cased, if it is one of SQLite's; otherwise a one-line error."""
    upper = level.upper()
    if upper not in SYNCHRONOUS_LEVELS:
        raise ValueError(
            f"dagster.yaml: synchronous {level!r} is not one of {', '.join(SYNCHRONOUS_LEVELS)}"
        )
    return upper


@cache
def _event_log_scripts() -> ScriptDirectory:
    """Dagster's event-log migration scripts, parsed once per process (they never change)."""
    return ScriptDirectory.from_config(get_alembic_config(sqlite_event_log.__file__))


def _pooled_engine(url: str, connect_args: dict[str, Any], synchronous: str) -> Engine:
    # One connection kept open and reused; a second one at the same time (another thread, or a
    # nested use) is opened and closed as Dagster's NullPool would. Reuse across threads is
    # safe: a connection is only ever checked out by one of them at a time.
    engine = sa.create_engine(
        url,
        poolclass=QueuePool,
        pool_size=1,
        max_overflow=-1,
        connect_args={**connect_args, "check_same_thread": False},
    )
    if synchronous != "FULL":

        @sa.event.listens_for(engine, "connect")
        def _set_synchronous(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute(f"PRAGMA synchronous={synchronous}")

    return engine


class _Engines:
    """Engines by database file, most recently used last, forgotten across ``fork``.

    A forked child must not use its parent's SQLite connections (SQLite forbids carrying one
    across ``fork``): it drops them without closing them and opens its own.
    """

    def __init__(
        self, limit: int | None, connect_args: dict[str, Any], synchronous: str = "FULL"
    ) -> None:
        self._limit = limit
        self._connect_args = connect_args
        self._synchronous = _synchronous(synchronous)
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def get(self, url: str) -> Engine:
        """The engine for ``url``, opened if needed (closing the least recently used one)."""
        with self._lock:
            return self._get(url)

    def _get(self, url: str) -> Engine:
        if self._pid != os.getpid():
            self._engines, self._pid = OrderedDict(), os.getpid()
        engine = self._engines.get(url)
        if engine is not None:
            self._engines.move_to_end(url)
            return engine
        engine = self._engines[url] = _pooled_engine(url, self._connect_args, self._synchronous)
        while self._limit is not None and len(self._engines) > self._limit:
            _, oldest = self._engines.popitem(last=False)
            oldest.dispose()
        return engine

    def close(self) -> None:
        """Close every connection this process opened."""
        with self._lock:
            engines, self._engines = self._engines, OrderedDict()
        if self._pid == os.getpid():
            for engine in engines.values():
                engine.dispose()


class _SynchronousOption:
    """The ``dagster.yaml`` schema of both storages: Dagster's ``base_dir``, and ``synchronous``."""

    @classmethod
    def config_type(cls) -> UserConfigSchema:
        """``base_dir`` as Dagster's, and an optional ``synchronous`` level."""
        return {
            "base_dir": StringSource,
            "synchronous": Field(
                str,
                is_required=False,
                default_value="FULL",
                description="SQLite's synchronous pragma: " + ", ".join(SYNCHRONOUS_LEVELS),
            ),
        }


class PooledSqliteEventLogStorage(_SynchronousOption, SqliteEventLogStorage):
    """Dagster's :class:`SqliteEventLogStorage` with open connections to recently used shards.

    Configured in ``dagster.yaml`` like Dagster's own::

        event_log_storage:
          module: drift_pipeline.defs.instance_storage
          class: PooledSqliteEventLogStorage
          config:
            base_dir: .dagster_home/storage/history/runs
            synchronous: NORMAL  # optional; default FULL, as Dagster's

    Raises:
        ValueError: ``synchronous`` is not one of SQLite's levels.
    """

    def __init__(
        self,
        base_dir: str,
        inst_data: ConfigurableClassData | None = None,
        synchronous: str = "FULL",
    ):
        # Before the parent's constructor: it may already connect (to build the index shard).
        timeout = {"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}
        self._engines = _Engines(OPEN_SHARDS, timeout, synchronous)
        self._tables: set[str] = set()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, str]
    ) -> PooledSqliteEventLogStorage:
        """Build from ``dagster.yaml``."""
        return cls(inst_data=inst_data, **config_value)

    @contextlib.contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        # Dagster's _connect, with the engine kept instead of created and disposed each time.
        with self._db_lock:
            engine = self._engines.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine, for_index_shard=shard == INDEX_SHARD_NAME)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        try:
            with engine.connect() as conn:
                if MigrationContext.configure(conn).get_current_revision() is not None:
                    return  # an existing shard (old ones migrate only when the user says so)
                if not for_index_shard:
                    # As Dagster creates a shard: tables, WAL journal, alembic stamp at head;
                    # WAL first, so that each table's DDL is not a rollback-journal commit.
                    conn.execute(sa.text("PRAGMA journal_mode=WAL;"))
                    SqlEventLogStorageMetadata.create_all(conn)
                    MigrationContext.configure(conn).stamp(_event_log_scripts(), "head")
                    conn.commit()
                    return
        except sa.exc.OperationalError:
            pass  # another process is creating the same shard: Dagster's own path waits for it
        # A new or unstamped index (Dagster handles a legacy case there), or that race.
        super()._initdb(engine, for_index_shard)

    def has_table(self, table_name: str) -> bool:
        """Whether the index has ``table_name``; a table once found is remembered.

        Dagster asks before most partition queries and opens a new engine each time. It is also
        asked while the index connection is held, so it must not take that connection.
        """
        if table_name in self._tables:
            return True
        found = super().has_table(table_name)
        if found:
            self._tables.add(table_name)
        return found

    def upgrade(self) -> None:
        """Dagster's migration, then forget what the old schema had."""
        super().upgrade()
        self._tables = set()

    def wipe(self) -> None:
        """Close every shard's connection before Dagster deletes the run shards' files."""
        with self._db_lock:
            self._engines.close()
        super().wipe()

    def dispose(self) -> None:
        """Close every open connection, then what Dagster's storage holds (its file watcher)."""
        with self._db_lock:
            self._engines.close()
        super().dispose()


class PooledSqliteRunStorage(_SynchronousOption, SqliteRunStorage):
    """Dagster's :class:`SqliteRunStorage` keeping its connection to ``runs.db`` open.

    Configured in ``dagster.yaml`` like Dagster's own::

        run_storage:
          module: drift_pipeline.defs.instance_storage
          class: PooledSqliteRunStorage
          config:
            base_dir: .dagster_home/storage/history
            synchronous: NORMAL  # optional; default FULL, as Dagster's

    Raises:
        ValueError: ``synchronous`` is not one of SQLite's levels.
    """

    def __init__(
        self,
        conn_string: str,
        inst_data: ConfigurableClassData | None = None,
        synchronous: str = "FULL",
    ):
        self._engines = _Engines(None, {}, synchronous)
        super().__init__(conn_string, inst_data)

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, str]
    ) -> PooledSqliteRunStorage:
        """Build from ``dagster.yaml``; Dagster's own code creates and stamps ``runs.db``."""
        config = dict(config_value)
        synchronous = config.pop("synchronous", "FULL")
        storage = cls.from_local(inst_data=inst_data, **config)
        # from_local takes no options (and may already have connected to build a new runs.db).
        default, storage._engines = storage._engines, _Engines(None, {}, synchronous)
        default.close()
        return storage

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection in a transaction, as Dagster's, from the one kept open."""
        with self._engines.get(self._conn_string).connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        """Close the open connection."""
        self._engines.close()
        super().dispose()
