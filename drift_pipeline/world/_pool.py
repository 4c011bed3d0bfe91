"""Forked processes that generate replicates, kept for the life of the process that forked them.

Forking a fresh worker for every horizon cost a quarter of a long-horizon generation: after each
``fork`` both processes share every page, so the first write to each (a reference count is a
write) copies it, thousands of page faults in each process every time, and a fresh worker's own
heap faults in page by page too. A kept worker pays that once; later horizons reuse its warm
heap (measured here: 4 long replicates on 2 cores in ~100 ms instead of ~128 ms).

A worker is a plain ``os.fork`` of this process, so it starts with every module, cache and
template already loaded. It is sent the scenario, horizon, replicate numbers and synthesizer of
each request (they pickle), and sends the replicates' Arrow tables back over its socket. Right
after the fork it points every other inherited descriptor at ``/dev/null``: a long-lived child
must not hold open the pipes, sockets and files its parent had at that moment (a reader waiting
for end-of-file on a pipe would wait for the worker's exit). It never runs the parent's exit
handlers (``os._exit``). The pool belongs to the process that created it: a forked child of that
process starts its own. Workers are stopped (and reaped) when this process exits, or by
:func:`close_workers`; one whose reply is lost or late (it died, or the request failed here
before reading it) is stopped and replaced.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection, Pipe
from typing import Any

import pyarrow as pa

Parts = dict[int, dict[str, pa.Table]]
"""Tables by replicate number, then by table name."""

Job = Callable[[Any, Sequence[int]], Parts]
"""What a worker runs for a request: (arguments, replicate numbers) → their tables."""


UNKNOWN_EXIT = -255
"""Exit code recorded for a worker that something else in this process reaped first."""


class WorkerDied(RuntimeError):
    """A worker exited without replying (killed by the system, or a crash)."""


class _Worker:
    """One forked worker and this process's end of its socket."""

    def __init__(self, name: str, job: Job) -> None:
        self.name = name
        mine, theirs = Pipe(duplex=True)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which never returns
            code = 0
            try:
                mine.close()
                _serve(theirs, job)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        theirs.close()
        self.pid = pid
        self.conn: Connection = mine
        self.exit_code: int | None = None

    def request(self, payload: Any, replicates: Sequence[int]) -> None:
        """Send one request (the reply is read by :meth:`reply`)."""
        self.conn.send((payload, list(replicates)))

    def reply(self) -> Parts:
        """The tables of the last request, or the error it raised there.

        Raises:
            WorkerDied: The worker exited without replying.
        """
        try:
            kind, value = self.conn.recv()
        except (EOFError, OSError):
            self.stop(dying=True)
            raise WorkerDied(
                f"world generation worker {self.name} died (exit code {self.exit_code})"
            ) from None
        if kind == "error":
            assert isinstance(value, BaseException)
            raise value
        assert isinstance(value, dict)
        return value

    def stop(self, dying: bool = False) -> None:
        """Stop the worker and reap it, keeping its exit code.

        ``dying``: its socket already reached end-of-file, so it is exiting by itself; wait for
        that rather than kill it (its own exit code is the diagnosis).
        """
        if self.exit_code is not None:
            return
        with contextlib.suppress(OSError):
            self.conn.close()
        if not dying:
            # Idle or busy with a request nobody will read: nothing to flush, nothing to save.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped elsewhere (a wait-for-any child watcher)
            self.exit_code = UNKNOWN_EXIT
            return
        self.exit_code = os.waitstatus_to_exitcode(status)


def _serve(conn: Connection, job: Job) -> None:
    """The worker's loop: one request at a time until this process closes the socket."""
    _detach_descriptors(keep={0, 1, 2, conn.fileno()})
    gc.enable()  # forked from inside a generation, which pauses the collector
    while True:
        try:
            payload, replicates = conn.recv()
        except EOFError:
            return
        gc.disable()  # as in the parent: the collector only rescans a growing heap here
        try:
            result: tuple[str, object] = ("parts", job(payload, replicates))
        except Exception as error:
            result = ("error", error)
        finally:
            gc.enable()
        try:
            conn.send(result)
        except Exception as error:  # an error that does not pickle: send its text
            conn.send(("error", RuntimeError(f"{type(error).__name__}: {error}")))


def _detach_descriptors(keep: set[int]) -> None:
    """Point every inherited descriptor except ``keep`` at ``/dev/null``.

    Closing them instead would leave Python objects in this process holding numbers that a new
    file could reuse (and close later); ``/dev/null`` keeps each number taken but harmless.
    """
    try:
        inherited = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: keep what was inherited (the pool then only costs a slower EOF)
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in inherited:
            if fd in keep or fd == null:
                continue
            with contextlib.suppress(OSError):  # listdir's own descriptor is already closed
                os.fstat(fd)
                os.dup2(null, fd, inheritable=False)
    finally:
        os.close(null)


class WorkerPool:
    """Workers for one job, started on first use and kept until this process exits.

    ``state`` names what the workers must have inherited (for world generation: the registered
    entity types); when it differs from its value when they were forked, they are replaced.
    """

    def __init__(self, job: Job, name: str, state: Callable[[], object] = lambda: None) -> None:
        self._job = job
        self._name = name
        self._state = state
        self._forked_state: object = None
        self._lock = threading.RLock()  # pids() is also asked from inside a lease
        self._owner = os.getpid()
        self._workers: list[_Worker] = []
        self._started = 0

    @contextmanager
    def lease(self, count: int) -> Iterator[list[_Worker]]:
        """``count`` idle workers for one generation (one caller at a time).

        A worker whose request did not complete normally (an error here, or its death) is
        stopped when the lease ends, so no late reply is ever read as the next one's.
        """
        with self._lock:
            self._adopt()
            state = self._state()
            if self._workers and state != self._forked_state:
                for worker in self._workers:
                    worker.stop()
            self._workers = [w for w in self._workers if w.exit_code is None]
            if not self._workers:
                self._forked_state = state
            while len(self._workers) < count:
                self._started += 1
                self._workers.append(_Worker(f"{self._name}-{self._started}", self._job))
            leased = self._workers[:count]
            done = False
            try:
                yield leased
                done = True
            finally:
                if not done:
                    for worker in leased:
                        worker.stop()

    def close(self) -> None:
        """Stop every worker this process started."""
        with self._lock:
            self._adopt()
            workers, self._workers, self._started = self._workers, [], 0
        for worker in workers:
            worker.stop()

    def pids(self) -> list[int]:
        """Process ids of the running workers (for tests and diagnostics)."""
        with self._lock:
            self._adopt()
            return [w.pid for w in self._workers if w.exit_code is None]

    def _adopt(self) -> None:
        # A forked child inherits this object: its workers are its parent's, not its own.
        if self._owner != os.getpid():
            self._owner, self._workers, self._started = os.getpid(), [], 0


_POOLS: list[WorkerPool] = []


def worker_pool(job: Job, name: str, state: Callable[[], object] = lambda: None) -> WorkerPool:
    """A pool for ``job`` (see :class:`WorkerPool`), stopped when this process exits."""
    pool = WorkerPool(job, name, state)
    _POOLS.append(pool)
    return pool


@atexit.register
def close_workers() -> None:
    """Stop every kept worker of this process (also run at exit)."""
    for pool in _POOLS:
        pool.close()
