"""A pre-started worker template: backend workers forked from one warm, data-free process.

Starting a worker the plain way costs two interpreter starts (the :mod:`._sandbox` launcher,
then the worker it ``exec``s), every import of the worker and the tokenizer's encoding: a third
of a processor second, most of it the same in every worker. The template pays that once per
harness thread. It is started with the scrubbed environment a worker gets, imports the worker
module, the tokenizer (encoding loaded) and the built-in backends' modules, and then only
waits; it holds no world data and no secret, and it stays single-threaded so that forking it
is safe. For each worker the harness sends it the worker's two protocol pipe ends and a third
pipe holding the launch settings (the secrets passed to the worker travel only there, read by
the forked child alone). The child does exactly what the launcher does (the same isolation
levels, the same refusals on the pipe, see :func:`._sandbox.isolate_worker`), drops every other
descriptor, takes the worker's environment, import path and folder, and runs the worker's loop.

The template reports each worker's exit status to the harness and kills a worker only when
asked (while it has not reaped it, so a recycled process id is never hit). It dies with the
harness thread that started it (parent-death signal; and it stops at the end of its socket),
and every worker dies with it. Where the template cannot start, refuses, or dies, workers start
the plain way. ``DRIFT_WORKER_TEMPLATE=0`` in the harness's environment turns it off.

Run as ``python -m drift_pipeline.memory._worker_template`` by :func:`launch` only.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

# One request or report: a small JSON object (and, for a fork, three descriptors).
_MESSAGE_BYTES = 4096
# Launch settings larger than a pipe holds without a reader go the plain way instead.
_SETTINGS_BYTES = 60_000
_READY_SECONDS = 60.0
_REPLY_SECONDS = 10.0
_SWITCH = "DRIFT_WORKER_TEMPLATE"
# The harness's variables that shape how the interpreter starts: a worker whose value differs
# from the template's starts the plain way (a forked worker could not take it on).
_STARTUP_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "PYTHONDONTWRITEBYTECODE")


# ---------------------------------------------------------------------------------------------
# Harness side


class ForkedWorker:
    """A worker forked by the template, seen by the harness as a subprocess is.

    ``stdin``/``stdout`` are the protocol streams; ``returncode`` is set (as asyncio sets it:
    negative for a signal) once the template reports the exit.
    """

    def __init__(
        self,
        template: _Template,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        transports: tuple[asyncio.BaseTransport, ...],
    ) -> None:
        self._template = template
        self.pid = pid
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.returncode: int | None = None
        self._transports = transports
        self._exited: asyncio.Future[int] | None = None

    def _exit(self, code: int) -> None:
        self.returncode = code
        exited = self._exited
        if exited is not None and not exited.done():
            # The loop that waited may be gone already (a cancelled run): nothing to wake.
            with contextlib.suppress(RuntimeError):
                exited.set_result(code)

    async def wait(self) -> int:
        """Wait until the worker has exited; its exit code."""
        if self.returncode is not None:
            return self.returncode
        if self._exited is None or self._exited.get_loop() is not asyncio.get_running_loop():
            self._exited = asyncio.get_running_loop().create_future()
        self._template.listen()
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        """Kill the worker and its process group, unless it has exited already."""
        if self.returncode is None:
            self._template.kill(self.pid)

    def release(self) -> None:
        """Close the harness's ends of the protocol pipes."""
        for transport in self._transports:
            transport.close()


class _Template:
    """The harness's handle on one template process (one per harness thread)."""

    def __init__(
        self, process: subprocess.Popen[bytes], sock: socket.socket, env: dict[str, str], home: Path
    ) -> None:
        self.process = process
        self.home = home
        self.sock = sock
        self.env = env
        self.alive = True
        self.workers: dict[int, ForkedWorker] = {}
        # Forked, not yet handed to the harness as a ForkedWorker; and those of them that ended.
        self.forking: set[int] = set()
        self.exited_early: dict[int, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next_id = 0

    # Reports arrive whenever a worker exits; they are read on the loop that runs the workers.
    def listen(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop or not self.alive:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.sock)
        self._loop = loop
        loop.add_reader(self.sock, self._read_reports)

    def _read_reports(self) -> None:
        while self.alive:
            message = self._receive()
            if message is None:
                return
            self._report(message)

    def _receive(self) -> dict[str, Any] | None:
        """The next message, ``None`` if none is waiting (or the template is gone)."""
        try:
            data = self.sock.recv(_MESSAGE_BYTES)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self._lost()
            return None
        return dict(json.loads(data))

    def _report(self, message: dict[str, Any]) -> None:
        if "exited" in message:
            pid, code = int(message["exited"]), int(message["code"])
            worker = self.workers.pop(pid, None)
            if worker is not None:
                worker._exit(code)
            elif pid in self.forking:  # gone before the harness had its pipes wired up
                self.exited_early[pid] = code

    def adopt(self, worker: ForkedWorker) -> None:
        """Follow ``worker``'s exit from now on (also one reported while it was wired up)."""
        self.forking.discard(worker.pid)
        code = self.exited_early.pop(worker.pid, None)
        if code is None:
            self.workers[worker.pid] = worker
        else:
            worker._exit(code)

    def _lost(self) -> None:
        """The template is gone: its workers were killed with it (parent-death signal)."""
        self.alive = False
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.sock)
        self._loop = None
        for worker in self.workers.values():
            worker._exit(-signal.SIGKILL)
        self.workers.clear()
        self.exited_early.update(dict.fromkeys(self.forking, -signal.SIGKILL))

    def _await_reply(self, request_id: int) -> dict[str, Any] | None:
        """The template's answer to one request; exit reports that come first are handled."""
        while self.alive:
            ready, _, _ = select.select([self.sock], [], [], _REPLY_SECONDS)
            if not ready:
                return None
            message = self._receive()
            if message is None:
                continue  # nothing after all, or the template is gone (the loop ends)
            if message.get("id") == request_id:
                return message
            self._report(message)
        return None

    def fork(self, fds: list[int]) -> int | None:
        """Ask for one worker on these pipe ends; its process id, or ``None``."""
        self._next_id += 1
        request = json.dumps({"op": "fork", "id": self._next_id}).encode()
        try:
            socket.send_fds(self.sock, [request], fds)
        except OSError:
            self._lost()
            return None
        reply = self._await_reply(self._next_id)
        if reply is None or "pid" not in reply:
            return None
        self.forking.add(int(reply["pid"]))
        return int(reply["pid"])

    def kill(self, pid: int) -> None:
        if not self.alive:
            return
        try:
            self.sock.send(json.dumps({"op": "kill", "pid": pid}).encode())
        except OSError:
            self._lost()

    def stop(self) -> None:
        """End the template (its workers with it) and wait for it."""
        self._lost()
        self.sock.close()
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)


_TEMPLATES: weakref.WeakKeyDictionary[threading.Thread, _Template] = weakref.WeakKeyDictionary()
_STARTS: weakref.WeakKeyDictionary[threading.Thread, int] = weakref.WeakKeyDictionary()
_MAX_STARTS = 2
_GUARD = threading.Lock()


def enabled() -> bool:
    """Whether workers may be forked from a template (``DRIFT_WORKER_TEMPLATE`` is not ``0``)."""
    return os.environ.get(_SWITCH, "1") != "0"


def folder_env(folder: Path) -> dict[str, str]:
    """The variables that give a worker (or the template) ``folder`` as its only home."""
    return {
        "HOME": str(folder),
        "TMPDIR": str(folder),
        "PATH": "/usr/bin:/bin",
        "TIKTOKEN_CACHE_DIR": str(folder / ".tiktoken"),
    }


def _template_env(home: Path, worker_env: dict[str, str]) -> dict[str, str]:
    """The template's environment: a worker's, with the template's own folder."""
    env = {k: v for k, v in worker_env.items() if k in _STARTUP_ENV or k == "PYTHONPATH"}
    env.update(folder_env(home))
    return env


def _start(worker_env: dict[str, str]) -> _Template | None:
    """Start a template and wait until it is ready; ``None`` if it cannot serve."""
    home = Path(tempfile.mkdtemp(prefix="drift-worker-template-"))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = _template_env(home, worker_env)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(theirs.fileno()), str(os.getpid())],
            pass_fds=[theirs.fileno()],
            env=env,
            cwd=home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        ours.close()
        shutil.rmtree(home, ignore_errors=True)
        return None
    finally:
        theirs.close()
    ours.setblocking(False)
    template = _Template(process, ours, env, home)
    ready, _, _ = select.select([ours], [], [], _READY_SECONDS)
    message: dict[str, Any] = {}
    if ready:
        with contextlib.suppress(OSError, ValueError):
            message = json.loads(ours.recv(_MESSAGE_BYTES) or b"{}")
    if message.get("ready") is not True:
        template.stop()
        return None
    return template


def _template_for(worker_env: dict[str, str]) -> _Template | None:
    """The calling thread's template, started on first use; ``None`` where none can serve.

    A template that died is started once more; after that (or a start that failed) this
    thread's workers start the plain way.
    """
    thread = threading.current_thread()
    with _GUARD:
        template = _TEMPLATES.pop(thread, None)
        if template is not None and template.alive:
            _TEMPLATES[thread] = template
            return template
        if template is not None:
            template.stop()
        starts = _STARTS.get(thread, 0)
        if starts >= _MAX_STARTS:
            return None
        _STARTS[thread] = starts + 1
        template = _start(worker_env)
        if template is None:
            _STARTS[thread] = _MAX_STARTS
            return None
        _TEMPLATES[thread] = template
        return template


async def launch(
    config: dict[str, Any], secrets: dict[str, str], limit: int
) -> ForkedWorker | None:
    """Fork a worker from this thread's template; ``None`` when it must start the plain way.

    Args:
        config: The launcher's settings (see :func:`._sandbox.isolate_worker`).
        secrets: The values of the variables ``config["env_from_parent"]`` names.
        limit: The longest line the harness reads from the worker.
    """
    if not enabled():
        return None
    worker_env: dict[str, str] = config["env"]
    try:
        template = _template_for(worker_env)
    except OSError:  # no folder or socket for it: the plain way
        template = None
    if template is None or any(
        worker_env.get(k) != template.env.get(k) for k in _STARTUP_ENV if k in worker_env
    ):
        return None
    settings = json.dumps(
        {**config, "secrets": secrets, "cwd": os.getcwd(), "pythonpath": worker_env["PYTHONPATH"]}
    ).encode()
    if len(settings) > _SETTINGS_BYTES:
        return None
    loop = asyncio.get_running_loop()
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    settings_read, settings_write = os.pipe()
    try:
        os.write(settings_write, settings)
    finally:
        os.close(settings_write)
    theirs = [stdin_read, stdout_write, settings_read]
    try:
        pid = template.fork(theirs)
    finally:
        for fd in theirs:
            os.close(fd)
    if pid is None:
        os.close(stdin_write)
        os.close(stdout_read)
        return None
    template.listen()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
        os.fdopen(stdout_read, "rb", buffering=0),
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop=loop),
        os.fdopen(stdin_write, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    worker = ForkedWorker(template, pid, writer, reader, (read_transport, write_transport))
    template.adopt(worker)
    return worker


def stop_templates() -> None:
    """Stop every template of this process (at exit; in tests)."""
    with _GUARD:
        templates = list(_TEMPLATES.values())
        _TEMPLATES.clear()
        _STARTS.clear()
    for template in templates:
        template.stop()


def _forget_templates() -> None:
    """In a child forked from the harness: the parent's templates are not this process's."""
    for template in _TEMPLATES.values():
        template.sock.close()  # the parent's copy keeps its template going
    _TEMPLATES.clear()
    _STARTS.clear()


atexit.register(stop_templates)
os.register_at_fork(after_in_child=_forget_templates)


# ---------------------------------------------------------------------------------------------
# Template side


def _preload(with_numpy: bool) -> None:
    """Import what every worker imports, and the built-in backends' modules.

    With ``with_numpy``, numpy first: its BLAS starts a pool of threads as it loads, which is
    stopped at once (see :func:`_stop_blas_threads`; a worker's first BLAS call starts its own,
    as many as a fresh process would). Without, a module whose import reaches for numpy is left
    out, with whatever it imported (the worker imports it itself).
    """
    import importlib
    import importlib.abc

    import drift_pipeline.memory._worker  # noqa: F401
    from drift_pipeline._lazy import import_module_named
    from drift_pipeline.memory.backends import _registry
    from drift_pipeline.tokens import encoding

    encoding()
    if with_numpy:
        import numpy  # noqa: F401

        _stop_blas_threads()

    class _NoNumpy(importlib.abc.MetaPathFinder):
        touched = False

        def find_spec(self, name: str, path: Any, target: Any = None) -> None:
            if not with_numpy and name.partition(".")[0] == "numpy":
                _NoNumpy.touched = True
                raise ImportError("numpy is not preloaded")

    guard = _NoNumpy()
    sys.meta_path.insert(0, guard)
    try:
        # Registrations made in code only: an installed package's entry point is not loaded
        # here, and adapters of outside services (which import their SDKs) are left out.
        for name in _registry._BACKENDS.registered_names():
            if not _registry.built_in(name):
                continue
            module = _registry.backend_registration(name).target_path.partition(":")[0]
            before = set(sys.modules)
            _NoNumpy.touched = False
            try:
                import_module_named(module, f"backend {name!r}")
            except Exception:  # left to the worker, which reports it
                _NoNumpy.touched = True
            if _NoNumpy.touched:
                for added in set(sys.modules) - before:
                    del sys.modules[added]
    finally:
        sys.meta_path.remove(guard)
    importlib.invalidate_caches()
    # A table the references build on first use, from the package's word lists alone.
    from drift_pipeline.memory.backends import _slips

    _slips.build_tables()


def _stop_blas_threads() -> None:
    """Stop the thread pool OpenBLAS started as it loaded (as it does itself before a fork).

    OpenBLAS starts its threads again at its next call, which the template never makes: a
    forked worker's first BLAS call starts the pool it would have had in a process of its own.
    """
    import ctypes

    with open("/proc/self/maps") as maps:
        libraries = {line.split()[-1] for line in maps if "openblas" in line.rsplit("/", 1)[-1]}
    for library in sorted(libraries):
        with contextlib.suppress(OSError):
            shutdown = getattr(ctypes.CDLL(library), "blas_thread_shutdown_", None)
            if shutdown is not None:
                shutdown()


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1 and threading.active_count() == 1
    except OSError:
        return threading.active_count() == 1


class _Server:
    """The template's loop: fork workers on request, report their exits, kill on request."""

    def __init__(self, sock: socket.socket, harness: int) -> None:
        self.sock = sock
        self.harness = harness
        self.children: set[int] = set()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_write)
        self.pid = os.getpid()
        self.base_path = [p for p in sys.path[1:] if p not in _pythonpath()]

    def serve(self) -> dict[str, Any] | None:
        """Serve until the harness goes; in a forked child, return its launch settings."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        while True:
            events = dict(poller.poll())
            if self.wake_read in events:
                os.read(self.wake_read, 4096)
                self._reap()
            if self.sock.fileno() not in events:
                continue
            try:
                data, fds, _, _ = socket.recv_fds(self.sock, _MESSAGE_BYTES, 3)
            except OSError:
                data, fds = b"", []
            if not data:
                self._end()
                return None
            message = json.loads(data)
            if message.get("op") == "kill":
                self._kill(int(message["pid"]))
            elif message.get("op") == "fork" and len(fds) == 3:
                settings = self._fork(int(message["id"]), fds)
                if settings is not None:
                    return settings
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def _fork(self, request_id: int, fds: list[int]) -> dict[str, Any] | None:
        # Whatever the template holds now (the preloaded modules, the tokenizer's tables) is
        # left out of the child's garbage collections: a collection that walks those objects
        # writes to every page that holds them, so each worker would copy most of the
        # template's memory and pay a whole-heap scan for nothing it can free.
        gc.freeze()
        try:
            pid = os.fork()
        except OSError as error:
            self._send({"id": request_id, "error": str(error)})
            return None
        if pid == 0:
            return self._become_worker(fds)
        self.children.add(pid)
        self._send({"id": request_id, "pid": pid})
        return None

    def _become_worker(self, fds: list[int]) -> dict[str, Any]:
        """In the forked child: leave the template behind, keep only the worker's pipes."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(self.wake_read)
        os.close(self.wake_write)
        self.sock.close()
        os.setsid()
        stdin_read, stdout_write, settings_read = fds
        chunks = []
        while chunk := os.read(settings_read, 1 << 16):
            chunks.append(chunk)
        settings: dict[str, Any] = json.loads(b"".join(chunks))
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(stdin_read, 0)
        os.dup2(stdout_write, 1)
        os.dup2(devnull, 2)
        # Everything else the template had open stays with the template.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        settings["base_path"] = self.base_path
        settings["template"] = self.pid
        return settings

    def _send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(json.dumps(message).encode())

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self._send({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    def _kill(self, pid: int) -> None:
        # Only a worker not reaped yet: its process id cannot belong to anyone else.
        if pid not in self.children:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # before its setsid, it has no group of its own yet

    def _end(self) -> None:
        for pid in list(self.children):
            self._kill(pid)
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _pythonpath() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def _once_each(entries: list[str]) -> list[str]:
    """Import folders as a fresh interpreter's ``site`` leaves them: absolute, each once, in order.

    A harness whose import path names a folder twice hands it twice in PYTHONPATH; a launched
    worker's ``site`` drops the repeat, so a forked one must too.
    """
    kept: dict[str, str] = {}
    for entry in entries:
        full = os.path.abspath(entry)
        kept.setdefault(os.path.normcase(full), full)
    return list(kept.values())


def _run_worker(settings: dict[str, Any], parent: int) -> None:
    """In the forked child: the launcher's steps, then the worker's loop, as a fresh worker."""
    import importlib
    import time

    from drift_pipeline.memory import _sandbox, _worker

    pythonpath = [p for p in str(settings["pythonpath"]).split(os.pathsep) if p]
    base: list[str] = settings["base_path"]
    base = [p for p in base if p not in pythonpath]
    # The launcher's import path (its folders are what isolation exposes), then the worker's.
    sys.path[:] = [settings["cwd"], *pythonpath, *base]
    env = _sandbox.isolate_worker(settings, parent, settings.pop("secrets"))
    sys.path[:] = [os.getcwd(), *_once_each([*pythonpath, *base])]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    # Set by the interpreter's C-locale coercion as it started: a fresh worker with the same
    # locale variables (see _STARTUP_ENV) gets it too.
    coerced = os.environ.get("LC_CTYPE")
    if coerced is not None:
        env.setdefault("LC_CTYPE", coerced)
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    # Python's own random module reseeds itself in a forked child; numpy's does not.
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    sys.argv = [str(_worker.__file__)]
    _worker.main()


def main() -> None:
    """Preload, say ready, and serve the harness until it goes."""
    from drift_pipeline.memory import _sandbox

    sock = socket.socket(fileno=int(sys.argv[1]))
    harness = int(sys.argv[2])
    # Dies with the harness thread that started it; its workers die with it in turn.
    _sandbox.arm_parent_death()
    if os.getppid() != harness:
        return
    with_numpy = sys.argv[3:] != ["without-numpy"]
    _preload(with_numpy)
    if not _single_threaded():
        if with_numpy:
            # A numpy whose threads cannot be stopped here: start over without it (an exec
            # ends every thread).
            os.execv(
                sys.executable,
                [sys.executable, "-m", __spec__.name, *sys.argv[1:3], "without-numpy"],
            )
        sock.send(json.dumps({"ready": False, "error": "threads after preloading"}).encode())
        return
    server = _Server(sock, harness)
    gc.collect()  # the preloading's garbage goes before the rest is frozen at each fork
    sock.send(json.dumps({"ready": True}).encode())
    settings = server.serve()
    if settings is not None:
        _run_worker(settings, int(settings["template"]))


if __name__ == "__main__":
    main()
