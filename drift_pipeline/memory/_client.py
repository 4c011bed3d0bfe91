"""Harness side of the worker boundary: start, call with a timeout, contain faults, restart."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _wire, _worker_template
from ._instance import INSTANCE_OPTION
from ._uids import UID_BASE, UID_SPAN, UidLease, lease_uid

# A worker forked from the template, or one started by the launcher.
_Process = asyncio.subprocess.Process | _worker_template.ForkedWorker

# Only these variables reach a backend; everything else (API keys of the harness, paths to the
# data root, cloud credentials) is scrubbed.
_PASSTHROUGH_ENV = ("LANG", "LC_ALL", "TZ")
_MAX_LINE = 256 * 1024 * 1024
# Bytes taken from the worker's output at a time: every reply line already there is then split
# off without waiting (see BackendWorker._read_line).
_READ_CHUNK = 1 << 20
# Sessions per store_many message: a small first one gets the worker going (see _send_and_read).
_FIRST_MESSAGE_SESSIONS = 8
_MESSAGE_SESSIONS = 64
# Starting a worker (interpreter, sandbox, imports, the backend's constructor) is not a
# store/retrieve call: it gets at least this long, whatever the per-call timeout.
START_TIMEOUT = 60.0
_next_uid = itertools.count()
_START_OPS = ("init", "ping")
ISOLATION_FIX = (
    "run the harness as root or where user namespaces are allowed, or let other users enter "
    "the folders holding the interpreter, .venv and checkout (chmod o+x on each)"
)


def worker_deadline(call_timeout: float) -> float:
    """How long the worker lets a backend coroutine run: a little less than the harness waits.

    The worker cancels a hung coroutine itself and answers with a fault, so the harness does
    not have to kill it (which would cost a restart and the backend's in-memory state).
    """
    return call_timeout - min(1.0, call_timeout * 0.1)


class IsolationError(RuntimeError):
    """A sandboxed worker cannot start here; the message is one line with the cause and the fix."""


async def check_isolation(protect: list[Path], isolate: bool = True) -> str:
    """Start one sandboxed worker with no backend and return the isolation level it reached.

    Run before any cell, so that a machine where workers cannot start (an interpreter under a
    folder the sandbox cannot expose, say) stops the run instead of recording every call as a
    fault.

    Raises:
        IsolationError: The worker did not start; one line naming the cause and the fix.
    """
    worker = BackendWorker("", {}, protect, START_TIMEOUT, isolate)
    try:
        await worker._launch()
        result = await worker.call({"op": "ping"})
    finally:
        await worker.close()
    if not result.ok:
        raise IsolationError(
            f"isolation could not start: {result.error or 'unknown error'}; {ISOLATION_FIX}"
        )
    return str(result.data.get("isolation", "process"))


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _worker_parent() -> str | None:
    """Where worker folders go: the temp folder, else ``/tmp``.

    ``/tmp`` when a worker of another uid could not enter the temp folder (a private
    ``TMPDIR`` under a 0700 folder).
    """
    if os.geteuid() != 0:
        return None
    temp = Path(tempfile.gettempdir()).resolve()
    for folder in (temp, *temp.parents):
        if folder != Path("/") and not folder.stat().st_mode & stat.S_IXOTH:
            return "/tmp"
    return None


def _worker_uid() -> UidLease:
    """An unprivileged uid for one worker, leased so no other worker on the machine has it.

    Only a root harness drops workers to another uid; elsewhere the number is only a label.
    """
    first = UID_BASE + (os.getpid() * 7 + next(_next_uid)) % UID_SPAN
    if os.geteuid() != 0:
        return UidLease(first, None)
    return lease_uid(first)


@dataclass(frozen=True)
class CallResult:
    """One call across the boundary.

    Attributes:
        ok: The backend answered without a fault.
        backend_ms: Time inside the backend call (measured in the worker).
        round_trip_ms: Wall time at the harness, including the boundary crossing.
        data: The worker's response fields.
        error: One line describing the fault, if any.
    """

    ok: bool
    backend_ms: float
    round_trip_ms: float
    data: dict[str, Any]
    error: str | None


class BackendWorker:
    """One isolated worker process running one backend instance.

    A timeout or crash kills the worker and starts a fresh one (its in-memory state is lost, as
    it would be in production; anything it persisted in its state folder survives).

    ``backend`` is a registered name or ``package.module:ClassName``, constructed in the worker
    from ``options``; or, when ``options`` holds a packed instance (see
    :meth:`~._instance.BackendInstance.worker_options`), the arm name of an object the worker
    rebuilds from those bytes, afresh at every (re)start.
    """

    def __init__(
        self,
        backend: str,
        options: dict[str, Any],
        protect: list[Path],
        call_timeout: float,
        isolate: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.backend = backend
        self.options = {k: v for k, v in options.items() if k != INSTANCE_OPTION}
        self._instance: str | None = options.get(INSTANCE_OPTION)
        self.protect = [str(p.resolve()) for p in protect]
        self.call_timeout = call_timeout
        self.isolate = isolate
        self.extra_env = extra_env or {}
        self.isolation = "not-started"
        self.version = ""
        self.deployment = "local"
        # Whether the backend declares model calls its meter cannot see (see _deployment).
        self.models_outside_meter = False
        self.service: dict[str, str] = {}
        self.restarts = 0
        # After a fault the worker is killed at once but started again only when the next call
        # needs it: a cell cut off at that fault never pays for a restart it would not use.
        self._start_pending = False
        # More fields of every (re)start's init, as they stand then: the replicate's skip rule
        # (see _skips), whether the clock is simulated (see _clock).
        self.init_extra: Callable[[], dict[str, Any]] | None = None
        # The last retrieve text the worker sent: it sends "same as last time", or what changed
        # (see _take_context).
        self._last_context: str | None = None
        # What the worker wrote that is not handed out yet: whole reply lines, and the start of
        # the next one (see _read_line).
        self._inbox = bytearray()
        self._process: _Process | None = None
        # "template" or "launcher": how the current worker was started (see _launch).
        self.started_by = ""
        self._base = Path(tempfile.mkdtemp(prefix="drift-worker-", dir=_worker_parent()))
        self.state_dir = self._base / "state"
        self._uid_lease = _worker_uid()
        self.uid = self._uid_lease.uid

    def _env(self) -> dict[str, str]:
        env = {key: os.environ[key] for key in _PASSTHROUGH_ENV if key in os.environ}
        env.update(_worker_template.folder_env(self.state_dir))
        env.update(
            {
                "PYTHONDONTWRITEBYTECODE": "1",
                "DRIFT_STATE_DIR": str(self.state_dir),
                # The worker imports the harness package and the backend from the same places the
                # harness does; PYTHONPATH carries plugin modules given as module:Class.
                "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)),
            }
        )
        return env

    async def start(self) -> CallResult:
        """Start (or restart) the worker and construct the backend in it."""
        await self._launch()
        init: dict[str, Any] = {
            "op": "init",
            "backend": self.backend,
            "options": self.options,
            "deadline": worker_deadline(self.call_timeout),
        }
        if self.init_extra is not None:
            init.update(self.init_extra())
        if self._instance is not None:
            # The packed object goes over the protocol pipe: the worker, another user in its
            # own mount namespace, needs no file of the harness's to read it from.
            init["instance"] = self._instance
        result = await self.call(init)
        if result.ok:
            self.isolation = str(result.data.get("isolation", "process"))
            self.version = str(result.data.get("version", ""))
            self.deployment = str(result.data.get("deployment", "local"))
            self.models_outside_meter = result.data.get("models_outside_meter") is True
            service = result.data.get("service")
            self.service = dict(service) if isinstance(service, dict) else {}
        return result

    async def _launch(self) -> None:
        """Start the worker: forked from the worker template, else by the sandbox launcher.

        Either way the same isolation steps run before any backend code (see
        :mod:`._worker_template`); the launcher is the fallback where no template can serve.
        """
        self._last_context = None  # a fresh worker has sent nothing yet
        self._inbox.clear()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0 and self.isolate:
            os.chmod(self._base, 0o755)
            os.chown(self.state_dir, self.uid, 65534)
            os.chmod(self.state_dir, 0o700)
        config = {
            "state_dir": str(self.state_dir),
            "protect": self.protect,
            "env": self._env(),
            # Extra variables (a key) travel in the launcher's environment, never in its
            # command line, which every process on the machine can read.
            "env_from_parent": sorted(self.extra_env),
            "isolate": self.isolate,
            "uid": self.uid,
            "parent": os.getpid(),
        }
        forked = await _worker_template.launch(config, dict(self.extra_env), _MAX_LINE)
        if forked is not None:
            self._process, self.started_by = forked, "template"
            return
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "drift_pipeline.memory._sandbox",
            json.dumps(config),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            limit=_MAX_LINE,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": os.pathsep.join(sys.path),
                **self.extra_env,
            },
        )
        self.started_by = "launcher"

    async def call(self, request: dict[str, Any]) -> CallResult:
        """Send one request; a timeout, crash or garbled reply becomes a fault and a restart.

        The timeout covers the whole exchange (sending the request too: a worker that stops
        reading its input must not block the harness). A fault's ``backend_ms`` is the time the
        call took before it failed (at least the timeout for a hang), so faults do not flatter
        a backend's latency percentiles.
        """
        if request["op"] not in _START_OPS:
            await self._ensure_running()
        started = time.perf_counter()
        process = self._process
        if process is None or process.returncode is not None:
            return CallResult(False, 0.0, 0.0, {}, "worker is not running")
        try:
            timeout = self._timeout(request)
            line = await asyncio.wait_for(self._exchange(process, request), timeout)
        except TimeoutError:
            waited = _ms_since(started)
            if request["op"] in _START_OPS:  # never restart from inside a start: no restart loops
                await self._kill()
                return self._fault(
                    started, waited, f"backend construction timed out after {timeout:g}s"
                )
            await self._restart()
            return self._fault(
                started, waited, f"timeout after {self.call_timeout:g}s; worker restarted"
            )
        except (BrokenPipeError, ConnectionResetError):
            line = b""
        except ValueError:  # a reply line longer than the stream limit
            waited = _ms_since(started)
            await self._restart()
            return self._fault(started, waited, "oversized reply from worker; worker restarted")
        if not line and request["op"] in _START_OPS:
            waited = _ms_since(started)
            code = await self._exit_code()
            await self._kill()
            return self._fault(started, waited, f"worker exited during start (exit {code})")
        return await self._reply(started, line)

    async def describe(self) -> None:
        """Ask the backend what it runs against again (a lazily connected service knows more)."""
        if self._process is None or self._process.returncode is not None:
            return
        result = await self.call({"op": "service"})
        service = result.data.get("service") if result.ok else None
        if isinstance(service, dict) and service:
            self.service = {str(k): str(v) for k, v in service.items()}

    def _take_context(self, data: dict[str, Any]) -> None:
        """A retrieve's text, from what the worker sent in its place when it repeats itself.

        The worker sends "same as last time", or a splice of the last text it sent (see
        :func:`~drift_pipeline.tokens.splice_of`): a memory that answers with its newest lines
        then costs the pipe what changed, not its whole answer, at every read.

        Raises:
            ValueError: A splice that does not fit the last text (a garbled reply).
        """
        if data.pop("same_context", False):
            data["context"] = self._last_context or ""
            return
        splice = data.pop("context_splice", None)
        if splice is not None:
            last = self._last_context or ""
            match splice:
                case [int(length), str(head), int(keep_from), str(tail)] if (
                    length == len(last) and 0 <= keep_from <= length
                ):
                    data["context"] = head + last[keep_from:] + tail
                case _:
                    raise ValueError("a context splice that does not fit the last context")
        if isinstance(data.get("context"), str):
            self._last_context = data["context"]

    async def store_many(self, sessions: list[dict[str, Any]]) -> AsyncGenerator[CallResult, None]:
        """Store a run of sessions with one request; yield one result per session, in order.

        Each item is ``{"session_id", "messages", "snapshot"}``, as in a single ``store``, or a
        ``retrieve`` request (a read before a session), answered as a single call is. The
        caller must end the run at the next checkpoint (the budget gate: no session past it may
        reach the backend before its probes). The worker stores them one at a time and answers
        each as soon as it is stored; the per-call timeout applies to each store on its own.
        A timeout, crash or garbled reply is that session's fault: the worker restarts and the
        rest of the run goes to the fresh instance, so fault containment is per session as
        before. ``round_trip_ms`` is the time the harness waited for that session's reply.
        """
        position = 0
        while position < len(sessions):
            await self._ensure_running()
            process = self._process
            if process is None or process.returncode is not None:
                for _ in sessions[position:]:
                    yield CallResult(False, 0.0, 0.0, {}, "worker is not running")
                return
            payload: list[dict[str, Any]] | None = sessions[position:]
            while position < len(sessions):
                started = time.perf_counter()
                try:
                    # A reply already received needs no waiting, so no timeout either: the
                    # worker usually runs ahead of the harness by several replies.
                    line = self._buffered_line() if payload is None else None
                    if line is None:
                        # asyncio.timeout, not wait_for: no extra task per store.
                        async with asyncio.timeout(self.call_timeout):
                            line = await self._send_and_read(process, payload)
                except TimeoutError:
                    waited = _ms_since(started)
                    await self._restart()
                    yield self._fault(
                        started, waited, f"timeout after {self.call_timeout:g}s; worker restarted"
                    )
                    position += 1
                    break
                except (BrokenPipeError, ConnectionResetError):
                    line = b""
                except ValueError:
                    waited = _ms_since(started)
                    await self._restart()
                    yield self._fault(
                        started, waited, "oversized reply from worker; worker restarted"
                    )
                    position += 1
                    break
                payload = None  # sent: later replies of this run only need reading
                result = await self._reply(started, line)
                position += 1
                yield result
                if not result.ok and self._process is not process:
                    break  # the worker was restarted: the rest goes to the new one

    async def _send_and_read(
        self, process: _Process, sessions: list[dict[str, Any]] | None
    ) -> bytes:
        """Send a run (if not sent yet), then read the next reply line.

        The run goes as a few ``store_many`` messages, a small one first: the worker starts
        storing while the harness is still encoding the rest, instead of both waiting in turn
        for a whole run to be encoded and then parsed.
        """
        assert process.stdin is not None and process.stdout is not None
        if sessions is not None:
            start, size = 0, _FIRST_MESSAGE_SESSIONS
            while start < len(sessions):
                part = sessions[start : start + size]
                process.stdin.write(_wire.dumps({"op": "store_many", "sessions": part}))
                process.stdin.write(b"\n")
                await process.stdin.drain()
                start, size = start + size, _MESSAGE_SESSIONS
        return await self._read_line(process)

    def _buffered_line(self) -> bytes | None:
        """The next reply line if it has arrived whole (with its line break), else ``None``."""
        inbox = self._inbox
        end = inbox.find(b"\n")
        if end < 0:
            return None
        line = bytes(inbox[: end + 1])
        del inbox[: end + 1]
        return line

    async def _read_line(self, process: _Process) -> bytes:
        """The next reply line, waiting for it as long as it takes (the caller times out).

        The worker's output is read in large chunks, so replies that arrive together are split
        here without a wait each. At the end of the output: what is left (maybe a partial line,
        which does not parse), or ``b""``.

        Raises:
            ValueError: The line is longer than the harness accepts.
        """
        assert process.stdout is not None
        while True:
            line = self._buffered_line()
            if line is not None:
                return line
            if len(self._inbox) > _MAX_LINE:
                raise ValueError("reply line over the harness's limit")
            chunk = await process.stdout.read(_READ_CHUNK)
            if not chunk:
                rest = bytes(self._inbox)
                self._inbox.clear()
                return rest
            self._inbox += chunk

    async def _reply(self, started: float, line: bytes) -> CallResult:
        """Turn one reply line into a result; a dead or garbled worker restarts."""
        if not line:
            waited = _ms_since(started)
            code = await self._exit_code()
            await self._restart()
            return self._fault(started, waited, f"worker crashed (exit {code}); worker restarted")
        try:
            data = _wire.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            self._take_context(data)
        except ValueError:
            waited = _ms_since(started)
            await self._restart()
            return self._fault(started, waited, "garbled reply from worker; worker restarted")
        error = None if data.get("ok") else str(data.get("error") or "unknown error")
        return CallResult(
            error is None, float(data.get("ms") or 0.0), _ms_since(started), data, error
        )

    def _timeout(self, request: dict[str, Any]) -> float:
        if request["op"] in _START_OPS:
            return max(self.call_timeout, START_TIMEOUT)
        return self.call_timeout

    async def _exchange(self, process: _Process, request: dict[str, Any]) -> bytes:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        return await self._read_line(process)

    def _fault(self, started: float, waited_ms: float, error: str) -> CallResult:
        return CallResult(False, waited_ms, _ms_since(started), {}, error)

    async def _exit_code(self) -> int | None:
        if self._process is None:
            return None
        try:
            return await asyncio.wait_for(self._process.wait(), 2.0)
        except TimeoutError:
            return None

    async def _kill(self) -> None:
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            _kill_group(process)
            await process.wait()
        if isinstance(process, _worker_template.ForkedWorker):
            process.release()
        self._process = None

    async def _restart(self) -> None:
        """Kill the worker; a fresh instance starts when the next call needs one.

        ``restarts`` counts the new incarnation at once, so the loop resets its token totals
        for the call after the fault, whichever instance answers it.
        """
        await self._kill()
        self.restarts += 1
        self._start_pending = True

    async def _ensure_running(self) -> None:
        """Start the instance a fault left pending, if any."""
        if not self._start_pending:
            return
        self._start_pending = False
        result = await self.start()
        if not result.ok:
            # Could not even come back: leave it stopped; every later call is a recorded fault.
            await self._kill()

    async def close(self) -> None:
        """Stop the worker and remove its folders, also when the close itself is cancelled."""
        process = self._process
        try:
            if process is not None and process.returncode is None and process.stdin is not None:
                try:
                    process.stdin.write(b'{"op": "close"}\n')
                    await process.stdin.drain()
                    await asyncio.wait_for(process.wait(), 5.0)
                except (TimeoutError, BrokenPipeError, ConnectionResetError):
                    pass
            await self._kill()
        finally:
            # A replicate cancelled while it closes (a sibling's failure stops the cell) must
            # still leave no worker and no folder behind.
            if process is not None and process.returncode is None:
                _kill_group(process)
            if isinstance(process, _worker_template.ForkedWorker):
                process.release()
            shutil.rmtree(self._base, ignore_errors=True)
            self._uid_lease.release()


def _kill_group(process: _Process) -> None:
    """Kill a worker and every process of its group (a backend's own subprocesses)."""
    if isinstance(process, _worker_template.ForkedWorker):
        process.kill()  # by its template, which alone knows whether the id is still its
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
