"""The backend worker: runs one memory system, answering JSON-line requests.

Run after isolation, by :mod:`._sandbox` or in a child of :mod:`._worker_template`. Requests
come on stdin, responses go on the original stdout; the backend's own prints are redirected to
stderr so they can never corrupt the protocol. Responses are plain JSON (never pickle), so a
hostile backend cannot run code in the harness through them.

Requests: ``{"op": "init", "backend": spec, "options": {...}}`` (or, for a backend given as an
object, ``{"op": "init", "backend": name, "instance": base64 cloudpickle bytes}``),
``{"op": "store", "session_id": ..., "messages": [...], "snapshot": bool}``,
``{"op": "store_many", "sessions": [{"session_id", "messages", "snapshot"}, ...]}`` (one
response line per session, in order, each sent as soon as that session is stored; an item
``{"op": "retrieve", ...}`` among them is a read answered in its place, as a single retrieve),
``{"op": "retrieve", "session_id": ..., "entity_id": ..., "query": ...}``,
``{"op": "snapshot"}``, ``{"op": "service"}`` (what ``service_info()`` says now; also sent
at ``init``, with ``declares``: which optional protocols the backend implements, see
:func:`declared`), ``{"op": "ping"}`` (no backend needed: answers with the isolation level),
``{"op": "close"}`` (the backend's ``aclose()`` or ``close()`` is called first, if it has
one). An ``init`` may carry ``skips``, the harness's skip rule for the
replicate (see :mod:`._skips`), and ``clock``, true when calls will carry ``at`` (below); a
store or retrieve of a kind it has cut off is answered
``{"ok": false, "skipped": true, "error": ...}`` without reaching the backend.
A store or retrieve may carry ``at``, the simulated time of its session (ISO 8601): the
worker's clocks read it during the call (see :mod:`._clock`).
A retrieve that returned text answers with ``context``, or, when the text repeats this
worker's previous answer, ``same_context`` (the same text again) or ``context_splice``
``[previous length, head, keep from, tail]`` (``head + previous[keep_from:] + tail``: see
:func:`drift_pipeline.tokens.splice_of`).
Every response has ``ok``, ``ms`` (time inside the backend call), ``write``/``read`` (the
backend's LLM token counters) and, on failure, ``error`` (one line) and, for an exception
raised in the backend's code or a library it calls, ``where`` (``file:line``, also at the end
of ``error``). A store or retrieve that
returned also has ``t0``/``t1``: when the backend call began and ended, in
``time.monotonic_ns()`` (the token meter's clock: see :mod:`drift_pipeline.llm._meter`). A
backend without ``snapshot()`` answers stores with ``storage_tokens`` null.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import inspect
import operator
import os
import sys
import sysconfig
import time
import traceback
from collections.abc import Callable
from typing import Any

from drift_pipeline.tokens import LineCounter, encoding, splice_of

from . import _wire
from ._clock import SimulatedClock
from ._deployment import deployment_of, models_outside_meter_of
from ._instance import unpack_backend
from ._protocol import KEEPS_NOTHING, STORE_ENTITY_KEYWORD, MemoryBackend
from ._skips import OP_KIND, SkipRule
from ._unmetered import UnmeteredCalls

_PIPE_BYTES = 1 << 20
# Answers at least this long are sent as a splice of the previous answer when they are one.
_SPLICE_FROM = 4096
MAX_COUNT = 2**53
"""Largest token count (or storage size) a backend may report: a table column holds int64."""
MAX_CONTEXT_CHARS = 16 << 20
"""Longest ``retrieve()`` text accepted (a reader's context, far above any model's window)."""
MAX_SNAPSHOT_CHARS = 64 << 20
"""Longest ``snapshot()`` accepted (a keep-everything memory at the longest horizon is ~10 MB)."""
_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
# The standard library's folders (site-packages below them excluded, where a distribution puts
# it there): a fault raised inside asyncio or json is placed at the caller that handed it bad
# input, the line a person can act on.
_STDLIB_DIRS = tuple(
    dict.fromkeys(
        os.path.join(os.path.realpath(path), "")
        for path in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"])
    )
)
# How long a backend's close()/aclose() may take at the end of a replicate: the harness waits a
# few seconds for the worker to exit before it kills it.
_CLOSE_SECONDS = 3.0


class CallTimedOut(Exception):
    """A backend coroutine that outran the worker's own deadline and was cancelled."""


class NeverQueryable(Exception):
    """A backend's ``wait_until_queryable()`` raised: what it stored never became findable."""


async def _awaited(value: Any) -> Any:
    """``value``, awaited if it is awaitable (a backend method written without ``async``)."""
    return await value if inspect.isawaitable(value) else value


def service_of(backend: object) -> dict[str, str]:
    """What ``backend`` says it runs against (:class:`DescribesService`), ``{}`` if it says nothing.

    Raises:
        TypeError: ``service_info()`` returned something other than a mapping of short strings.
    """
    describe = getattr(backend, "service_info", None)
    if not callable(describe):
        return {}
    info = describe()
    if isinstance(info, dict):
        # None (not known yet) reads "unknown"; numbers and flags read as they print.
        info = {k: "unknown" if v is None else v for k, v in info.items()}
        info = {k: str(v) if isinstance(v, int | float) else v for k, v in info.items()}
    if not isinstance(info, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(k) <= 100 and len(v) <= 500
        for k, v in info.items()
    ):
        raise TypeError(
            f"service_info() returned {info!r:.80}, expected a dict of short strings to strings"
        )
    return {k: _printable(v) for k, v in info.items()}


def declared(backend: object) -> dict[str, bool]:
    """The optional protocols ``backend`` implements (see :mod:`._protocol`), by name.

    ``stores_for_entity`` (its ``store`` takes the entity), ``asynchronous``
    (``wait_until_queryable``), ``snapshot``, ``counts_own_storage`` (``storage_tokens``),
    ``describes_service`` and ``keeps_nothing`` (a baseline that remembers nothing said).
    """
    store = getattr(backend, "store", None)
    return {
        "stores_for_entity": callable(store) and takes_keyword(store, STORE_ENTITY_KEYWORD),
        "asynchronous": callable(getattr(backend, "wait_until_queryable", None)),
        "snapshot": callable(getattr(backend, "snapshot", None)),
        "counts_own_storage": callable(getattr(backend, "storage_tokens", None)),
        "describes_service": callable(getattr(backend, "service_info", None)),
        "keeps_nothing": getattr(backend, KEEPS_NOTHING, False) is True,
    }


def takes_keyword(method: Any, name: str) -> bool:
    """Whether ``method`` accepts the keyword argument ``name`` (by name, not ``**kwargs``)."""
    try:
        parameter = inspect.signature(method).parameters.get(name)
    except (TypeError, ValueError):  # no introspectable signature
        return False
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def _one_line(error: BaseException) -> str:
    if isinstance(error, CallTimedOut):
        return str(error)
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return _printable(text[:500])


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions behind it, outermost first, as Python's traceback prints them.

    An explicit cause (``raise ... from err``) is followed, else the exception being handled when
    ``error`` was raised, unless ``raise ... from None`` suppressed it (``json`` hides the
    ``StopIteration`` of its scanner that way: it is no part of what went wrong).
    """
    chain = [error]
    seen = {id(error)}
    while True:
        inner = error.__cause__
        if inner is None and not error.__suppress_context__:
            inner = error.__context__
        if inner is None or id(inner) in seen:
            return chain
        seen.add(id(inner))
        chain.append(inner)
        error = inner


def _location(error: BaseException) -> str | None:
    """``file:line`` where ``error`` arose in the backend's code.

    The bad line of a syntax error, else the last frame of its traceback outside the import
    machinery, the standard library (asyncio's event loop, a parser handed bad text) and this
    package (whose own checks name what is wrong without a line).
    """
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(("<", _PACKAGE_DIR)) and not _in_stdlib(frame.filename)
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def _in_stdlib(filename: str) -> bool:
    """Whether ``filename`` is a module of the standard library (not an installed package)."""
    path = os.path.realpath(filename)
    if any(part in ("site-packages", "dist-packages") for part in path.split(os.sep)):
        return False
    return path.startswith(_STDLIB_DIRS)


def error_line(error: BaseException) -> tuple[str, str | None]:
    """One line for a backend's fault: the error, its cause and where it arose; and that place.

    The place is ``file:line`` in the backend's own code or a library it calls (``None`` for a
    timeout, and for a fault the harness's own checks found).
    """
    text = _one_line(error)
    if isinstance(error, CallTimedOut):  # its chain ends in asyncio's cancellation machinery
        return text, None
    chain = _chain(error)
    origin = chain[-1]
    if origin is not error:
        cause = _one_line(origin)
        if cause not in text:
            text = f"{text} (caused by {cause})"
    # The first exception's place, else (it arose and was caught inside the standard library, as
    # urllib's FileNotFoundError behind a URLError) the place of the next one out that has one.
    where = next(filter(None, map(_location, reversed(chain))), None)
    if where is None:
        return text, None
    where = _printable(where)
    return f"{text} at {where}", where


def start_error_line(error: BaseException) -> str:
    """One line for a backend that could not be built: the error, its cause and where it arose."""
    return error_line(error)[0]


def _printable(text: str) -> str:
    """``text`` as valid UTF-8 (a lone surrogate would break the harness's Parquet writer)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _token_count(value: Any, what: str) -> int | None:
    """``value`` as a count of tokens, or ``ValueError`` naming ``what`` (a table holds int64).

    ``None`` stays ``None``: the backend does not know (never read as zero).
    """
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        count = operator.index(value)
    except TypeError:
        raise ValueError(f"{what} is {value!r:.60}, expected an int") from None
    if not 0 <= count <= MAX_COUNT:
        raise ValueError(f"{what} is {count!r:.60}, outside 0..{MAX_COUNT}")
    return count


def _check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise ValueError(
            f"{what} returned {len(text)} characters, over the {limit} the harness accepts; "
            "not recorded"
        )


async def _bounded(call: Any, seconds: float) -> Any:
    # asyncio.timeout, not wait_for: no extra task per call.
    async with asyncio.timeout(seconds):
        return await call


class _Worker:
    def __init__(self, unmetered: UnmeteredCalls | None = None) -> None:
        self.backend: MemoryBackend | None = None
        self.unmetered = unmetered
        self.loop = asyncio.new_event_loop()
        self.storage = LineCounter()
        self.last_context: str | None = None
        # Set by init from the harness's per-call timeout, a little below it: a hung coroutine
        # is cancelled here and the worker (and the backend's state) carries on, instead of
        # the harness killing and restarting it.
        self.deadline: float | None = None
        self.last_counts: dict[str, int | None] = {"write": 0, "read": 0}
        self.clock = SimulatedClock()
        # The harness's skip rule for this replicate, as it stood at this (re)start: calls of
        # a kind it cuts off are answered as skipped without reaching the backend.
        self.skips = SkipRule()
        # What the backend declares (see _protocol): its store takes the entity whose memory a
        # session goes into; it ingests asynchronously (waited for after every store).
        self.store_entity = False
        self.waits = False
        self.waiting = False  # inside wait_until_queryable (named by a timeout's error)

    def close(self) -> None:
        """Let the backend release what it holds (``aclose()`` or ``close()``, if it has one).

        Called once when the replicate ends. A client that holds connections, a server process
        or files open gets to shut them down cleanly instead of being killed. The call is
        bounded (:data:`_CLOSE_SECONDS`) and its failure is printed on the worker's stderr, not
        recorded as a fault: every scored call has already returned.
        """
        backend = self.backend
        closer = getattr(backend, "aclose", None) or getattr(backend, "close", None)
        if backend is None or not callable(closer):
            return
        try:
            result = closer()
            if inspect.isawaitable(result):
                self.loop.run_until_complete(_bounded(result, _CLOSE_SECONDS))
        except Exception as error:  # a backend's shutdown fault must not hide the run's results
            print(f"{type(backend).__name__}.close(): {_one_line(error)}", file=sys.stderr)

    def _at(self, request: dict[str, Any]) -> None:
        """Move the clock to the simulated time of the call's session, if the harness sent one."""
        at = request.get("at")
        if at is not None:
            self.clock.advance(str(at))

    def _counts(self) -> dict[str, Any]:
        """The backend's LLM token counters; a broken or impossible one is a recorded fault.

        On a fault the last good counts are sent again, so the harness's per-call deltas stay
        defined, with ``counts_error`` saying what was wrong. ``unmetered``: the model calls
        seen going around the meter since the last reply (see :mod:`._unmetered`), when any.
        """
        seen = self.unmetered.take() if self.unmetered is not None else 0
        if seen:
            return {**self._token_counts(), "unmetered": seen}
        return self._token_counts()

    def _token_counts(self) -> dict[str, Any]:
        """The backend's ``token_counts()`` as the reply carries them (see :meth:`_counts`)."""
        if self.backend is None:
            return {"write": 0, "read": 0}
        try:
            counts = self.backend.token_counts()
            good = {
                "write": _token_count(counts.write, "write"),
                "read": _token_count(counts.read, "read"),
            }
        except Exception as error:  # a broken counter is a fault, not a crash
            return {**self.last_counts, "counts_error": f"token_counts(): {_one_line(error)}"}
        self.last_counts = good
        return dict(good)

    def _run(self, value: Any) -> Any:
        if not inspect.isawaitable(value):
            return value
        if self.deadline is None:
            return self.loop.run_until_complete(value)
        try:
            return self.loop.run_until_complete(_bounded(value, self.deadline))
        except TimeoutError:
            during = " while waiting until queryable" if self.waiting else ""
            self.waiting = False
            raise CallTimedOut(
                f"timeout after {self.deadline:g}s{during}; cancelled in the worker"
            ) from None

    async def _store_and_wait(
        self, session_id: str, messages: Any, entities: list[str]
    ) -> float | None:
        """Store a session for each entity whose memory it is, then wait until it is queryable.

        Returns the wait in ms (``None`` for a backend that does not ingest asynchronously).
        One coroutine, so the worker's deadline covers the stores and the wait together.
        """
        assert self.backend is not None
        if self.store_entity:  # a session without messages goes into nobody's memory
            for entity in entities:
                await _awaited(
                    self.backend.store(session_id, messages, **{STORE_ENTITY_KEYWORD: entity})
                )
        else:
            await _awaited(self.backend.store(session_id, messages))
        if not self.waits:
            return None
        started = time.perf_counter()
        # Left set if the deadline cancels the wait: the timeout's error then says so.
        self.waiting = True
        try:
            await _awaited(self.backend.wait_until_queryable(session_id))  # type: ignore[attr-defined]
        except Exception as error:
            self.waiting = False
            raise NeverQueryable(f"wait_until_queryable(): {_one_line(error)}") from error
        self.waiting = False
        return (time.perf_counter() - started) * 1000

    def store(self, request: dict[str, Any]) -> dict[str, Any]:
        """Store one session; report the time inside ``store()`` and the storage size after it.

        The request's ``entities`` are those whose memory the session goes into (see
        :mod:`._entities`); a backend whose ``store`` takes no ``entity_id`` is called once.

        The size comes from the backend's ``storage_tokens()`` when it has one (see
        ``CountsOwnStorage``), else from counting ``snapshot()``. At a checkpoint the snapshot
        is built and sent anyway, and the harness recounts it.
        """
        if self.backend is None:
            raise RuntimeError("store before the backend was constructed")
        session_id, messages = request["session_id"], request["messages"]
        send_snapshot = request.get("snapshot")
        self._at(request)
        began = time.monotonic_ns()
        started = time.perf_counter()
        queryable_ms: float | None = None
        if self.store_entity or self.waits:
            queryable_ms = self._run(
                self._store_and_wait(session_id, messages, request.get("entities") or [])
            )
        else:
            self._run(self.backend.store(session_id, messages))
        elapsed = (time.perf_counter() - started) * 1000 - (queryable_ms or 0.0)
        # When the call ended on the token meter's clock: its model calls are booked to it
        # (those of the background processing waited for too).
        response: dict[str, Any] = {
            "ok": True,
            "ms": elapsed,
            "t0": began,
            "t1": time.monotonic_ns(),
            "queryable_ms": queryable_ms,
        }
        shows = getattr(self.backend, "snapshot", None)
        if not callable(shows):
            # A backend with the spec's three methods only: its storage is not measured.
            response["storage_tokens"] = None
            response.update(self._counts())
            return response
        counter = getattr(self.backend, "storage_tokens", None)
        snapshot: Any = None
        if send_snapshot or not callable(counter):
            snapshot = shows()
            if not isinstance(snapshot, str):
                raise TypeError(f"snapshot() returned {type(snapshot).__name__}, expected str")
            _check_size(snapshot, MAX_SNAPSHOT_CHARS, "snapshot()")
            # isascii() is O(1) on CPython strings; only non-ASCII text needs the full check.
            if not snapshot.isascii() and not _is_utf8(snapshot):
                raise ValueError("snapshot() returned text that is not valid Unicode (surrogates)")
        if callable(counter):
            reported = counter()
            try:
                tokens = operator.index(reported)
            except TypeError:
                tokens = -1
            if not 0 <= tokens <= MAX_COUNT:
                raise TypeError(
                    f"storage_tokens() returned {reported!r:.80}, expected an int in 0..{MAX_COUNT}"
                )
            response["storage_tokens"] = tokens
        else:
            response["storage_tokens"] = self.storage.count(snapshot)
        if send_snapshot:
            response["snapshot"] = snapshot
        response.update(self._counts())
        return response

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "init":
            from .backends import load_backend

            # Load the tokenizer now (a few hundred ms, once), so that no store's timing, the
            # backend's or the harness's round trip, pays for it.
            encoding()
            deadline = request.get("deadline")
            self.deadline = float(deadline) if isinstance(deadline, int | float) else None
            if request.get("skips") is not None:
                self.skips = SkipRule.from_state(request["skips"])
            if request.get("clock"):
                self.clock.prepare()  # its import would otherwise fall in the first call's time
            started = time.perf_counter()
            if request.get("instance") is not None:
                # Unpickled here, after isolation: the instance's code runs in the sandbox only.
                self.backend = unpack_backend(request["instance"], request["backend"])
            else:
                self.backend = load_backend(request["backend"], request.get("options") or {})
            declares = declared(self.backend)
            self.store_entity = declares["stores_for_entity"]
            self.waits = declares["asynchronous"]
            return {
                "ok": True,
                "ms": (time.perf_counter() - started) * 1000,
                "version": str(getattr(self.backend, "version", "")),
                "deployment": deployment_of(self.backend),
                "models_outside_meter": models_outside_meter_of(self.backend),
                "service": service_of(self.backend),
                "declares": declares,
                # Model calls made while it was built go with its first call's reply.
                **self._token_counts(),
            }
        if op == "ping":  # the harness checking that isolation starts, before any backend
            return {"ok": True, "ms": 0.0}
        if op == "service":  # asked again at the end: a service connected lazily knows more now
            return {"ok": True, "ms": 0.0, "service": service_of(self.backend)}
        if self.backend is None:
            raise RuntimeError(f"{op} before the backend was constructed")
        if op == "store":
            return self.store(request)
        if op == "retrieve":
            self._at(request)
            began = time.monotonic_ns()
            started = time.perf_counter()
            context = self._run(
                self.backend.retrieve(request["session_id"], request["entity_id"], request["query"])
            )
            elapsed = (time.perf_counter() - started) * 1000
            ended = time.monotonic_ns()
            if not isinstance(context, str):
                return {
                    "ok": False,
                    "ms": elapsed,
                    **self._counts(),
                    "error": f"retrieve() returned {type(context).__name__}, expected str",
                }
            if context == self.last_context:
                # The same text as the previous answer (a full-context memory answers every
                # question of a checkpoint alike), which passed the checks below when it was
                # sent: say so instead of sending it again.
                return {
                    "ok": True,
                    "ms": elapsed,
                    "t0": began,
                    "t1": ended,
                    "same_context": True,
                    **self._counts(),
                }
            if len(context) > MAX_CONTEXT_CHARS:
                return {
                    "ok": False,
                    "ms": elapsed,
                    **self._counts(),
                    "error": f"retrieve() returned {len(context)} characters, over the "
                    f"{MAX_CONTEXT_CHARS} the harness accepts; not recorded",
                }
            # A memory that answers with its newest lines repeats most of its last answer:
            # only the lines it dropped and added cross the pipe.
            last = self.last_context
            splice = splice_of(last, context) if last and len(context) >= _SPLICE_FROM else None
            # Of a splice, only what is new needs checking: the kept part passed when it was sent.
            fresh = context if splice is None else splice.head + splice.tail
            if not context.isascii() and not _is_utf8(fresh):
                return {
                    "ok": False,
                    "ms": elapsed,
                    **self._counts(),
                    "error": "retrieve() returned text that is not valid Unicode (surrogates)",
                }
            response = {"ok": True, "ms": elapsed, "t0": began, "t1": ended, **self._counts()}
            self.last_context = context
            if last is None or splice is None:
                response["context"] = context
            else:
                response["context_splice"] = [len(last), *splice]
            return response
        if op == "snapshot":
            shows = getattr(self.backend, "snapshot", None)
            if not callable(shows):
                raise TypeError("the backend has no snapshot() method: its storage is not measured")
            snapshot = shows()
            if not isinstance(snapshot, str):
                raise TypeError(f"snapshot() returned {type(snapshot).__name__}, expected str")
            _check_size(snapshot, MAX_SNAPSHOT_CHARS, "snapshot()")
            return {"ok": True, "ms": 0.0, "snapshot": _printable(snapshot), **self._counts()}
        raise ValueError(f"unknown op {op!r}")

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The response to one request, a backend's exception contained as a fault.

        A store or retrieve of a kind the skip rule has cut off is answered as skipped without
        a call; every other one is counted by the rule, as the harness counts it.
        """
        op = request.get("op")
        kind = OP_KIND.get(str(op))
        if kind is not None:
            reason = self.skips.reason(kind)
            if reason is not None:
                self.skips.count(kind, False)
                return {"ok": False, "ms": 0.0, "error": reason, "skipped": True, **self._counts()}
        started = time.perf_counter()
        try:
            response = self.handle(request)
        except Exception as error:
            # The time the call took before it raised still counts as its latency.
            elapsed = (time.perf_counter() - started) * 1000
            message, where = error_line(error)
            response = {"ok": False, "ms": elapsed, "error": message, **self._counts()}
            if where is not None:
                response["where"] = where
            if op == "init":
                response["start_error"] = True
        if kind is not None:
            self.skips.count(kind, bool(response["ok"]))
            retries = self._retries()
            if retries:
                response["retries"] = retries
        return response

    def _retries(self) -> list[str]:
        """The retries the backend made during the last call (``RecordsRetries``), as lines."""
        drain = getattr(self.backend, "drain_retries", None)
        if not callable(drain):
            return []
        try:
            notes = drain()
            return [_printable(str(note))[:500] for note in notes][:100]
        except Exception as error:  # a broken report is itself noted, not a crash
            return [f"drain_retries(): {_one_line(error)}"]


def _widen_pipes(*descriptors: int) -> None:
    """Give the protocol pipes room for a whole run of sessions or a large snapshot.

    A 64 KiB pipe moves a 400 KB run of sessions (or a 5 MB snapshot) in many hand-offs, each
    waiting for the other side to be scheduled: tens of milliseconds on a busy machine. Linux
    lets either end grow a pipe (up to ``/proc/sys/fs/pipe-max-size`` without privileges);
    elsewhere, or when refused, the default stays.
    """
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            fcntl.fcntl(descriptor, set_size, _PIPE_BYTES)


def main() -> None:
    """Serve requests until ``close`` or end of input."""
    protocol_in = os.fdopen(os.dup(0), "rb", buffering=0)
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    _widen_pipes(protocol_in.fileno(), protocol_out.fileno())
    # Backends that print must not corrupt the protocol: fd 1 now goes to stderr.
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    # Watching for model calls around the meter starts before any backend code is imported.
    unmetered = UnmeteredCalls.from_environment()
    unmetered.install()
    worker = _Worker(unmetered)
    reader = protocol_in
    buffer = b""

    def respond(response: dict[str, Any]) -> None:
        response["isolation"] = os.environ.get("DRIFT_ISOLATION", "process")
        protocol_out.write(_wire.dumps(response) + b"\n")

    while True:
        while b"\n" not in buffer:
            chunk = reader.read(1 << 20)
            if not chunk:
                return
            buffer += chunk
        line, _, buffer = buffer.partition(b"\n")
        request = _wire.loads(line)
        del line  # a batch's raw text must not outlive the parse
        op = request.get("op")
        if op == "close":
            worker.close()
            protocol_out.write(b'{"ok": true, "ms": 0}\n')
            return
        if op == "store_many":
            _store_many(worker, request.pop("sessions"), respond)
            continue
        started = time.perf_counter()
        try:
            response = worker.answer(request)
        except BaseException as error:  # SystemExit from a backend's module: not a crash
            if op != "init":
                raise
            elapsed = (time.perf_counter() - started) * 1000
            response = {
                "ok": False,
                "ms": elapsed,
                "error": start_error_line(error),
                "start_error": True,
            }
        respond(response)


def _store_many(
    worker: _Worker, sessions: list[dict[str, Any]], respond: Callable[[dict[str, Any]], None]
) -> None:
    """Store a run of sessions one at a time, answering one line per session as each ends.

    The harness never sends sessions past the next checkpoint. Each session is dropped from
    the batch before the next ``store()`` (what the backend kept of it is its own business), and
    each store is timed and contained on its own, exactly as a single ``store`` request is.
    """
    sessions.reverse()  # pop() from the end hands them over in order, each dropped as it goes
    while sessions:
        item = sessions.pop()
        item.setdefault("op", "store")  # else a read before a session (see _session_reads)
        response = worker.answer(item)
        del item
        respond(response)


if __name__ == "__main__":
    main()
