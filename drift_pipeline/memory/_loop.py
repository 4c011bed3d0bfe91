"""The memory loop (spec §5): sessions through the gate into an isolated backend.

The harness reads one replicate's sessions in order, hands each to ``store()`` and drops it.
After the store of a checkpoint session it asks one ``retrieve()`` per probe of that checkpoint,
from the probe's asking entity. Nothing downstream of this loop ever reads a transcript: its
outputs (``memory_snapshots``, ``retrievals``) hold only what the backend kept and returned.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.llm import NO_UPSTREAM, MeterAccount
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    LATENT_PROFILES,
    MEMORY_SNAPSHOTS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    RootLike,
    StorageRoot,
)
from drift_pipeline.tokens import LineCounter, count_tokens_lines

from ._arms import Arm
from ._client import BackendWorker, CallResult
from ._entities import memory_owners
from ._fault_summary import PROBE, SESSION_READ, FaultSummary
from ._fault_summary import STORE as STORE_CALL
from ._first_token import FirstToken
from ._gates import GateStrategy, ReaderBuffer
from ._honesty import SnapshotIndex, WorldValues, world_values
from ._metering import CellMeter, charge, start_cell_meter
from ._secrets import arm_secrets, redact
from ._session_reads import (
    DEFAULT_READ_POLICY,
    SessionReads,
    check_read_policy,
    planned_reads,
    read_requests,
)
from ._skips import RETRIEVE, STORE, SkipRule
from ._transcripts import Session, read_world_table, replicate_sessions, transcript_tokens
from ._worker_cache import collect_worker_cache, seed_worker_cache

ProgressHook = Callable[[int], None]

MAX_STORE_RUN = 256
"""Most sessions sent to a worker in one message (a run also ends at every checkpoint)."""
_RECOUNT_INLINE_CHARS = 64 * 1024
MAX_FAULT_RATE = 0.05
"""Default share of a cell's calls that may fault or be skipped before the cell is invalid."""


class BackendStartError(RuntimeError):
    """A backend could not be built in its worker: an error of the arm, never a score.

    Raised by :func:`run_cell` before the first session is stored, so the cell has no rows.

    Attributes:
        arm: The arm's key (``backend@gate``).
        error: One line: the exception type, its message and, for code of the backend's own,
            the ``file:line`` where it arose.
    """

    def __init__(self, arm: str, error: str) -> None:
        super().__init__(arm, error)
        self.arm = arm
        self.error = error

    def __str__(self) -> str:
        return f"backend {self.arm} could not start: {self.error}"


@dataclass(frozen=True)
class LoopConfig:
    """How to run one cell.

    Attributes:
        call_timeout: Seconds before a store/retrieve call is a fault and the worker restarts.
        isolate: Run backends isolated (see :mod:`._sandbox`); off only for debugging.
        protect: Folders the backend must not see (the data root at least).
        concurrency: Replicates run at once, one backend instance each (spec §7.8: 4).
        worker_env: Names of harness variables passed into the workers (an allowlist, e.g. the
            LLM key of a backend that calls a model); empty for every other arm.
        worker_cache: A folder copied into each worker's ``llm_cache`` and merged back after
            (see :mod:`._worker_cache`); ``None`` for backends that call no model.
        max_consecutive_faults: After this many faulted calls of one kind (store, retrieve) in
            a row in one replicate, that replicate's remaining calls of that kind are recorded
            as skipped instead of being made (0: never skip), so a backend that hangs on every
            call costs a few timeouts per replicate, not one per call (see :mod:`._skips`).
        max_fault_rate: The share of a cell's calls that may fault (or be skipped) before the
            cell is invalid: reported with its fault rate, never ranked. Once one replicate's
            faulted calls of one kind alone exceed this share of the cell's planned calls, the
            cell is invalid whatever follows, and that replicate's remaining calls of that
            kind are recorded as skipped too.
        meter: Run the cell's token meter (see :mod:`._metering`): the workers' model calls go
            through it and are charged as metered. Off: the workers get no meter, and each
            backend is charged what its own ``token_counts()`` reports.
        reads: When the agent reads memory in each session (see :mod:`._session_reads`):
            ``session_start`` (the default) or ``user_turn``.
        first_token: The reader model that answers each opening message over what the
            session-start read returned, its first token timed (see :mod:`._first_token`);
            ``None``: no reader model, TTFRT at session start is modelled.
        simulated_clock: During each store and retrieve the backend's clocks (``time.time``,
            ``datetime.now``…) read the simulated time of the session (see :mod:`._clock`);
            off: they read the real time.
    """

    call_timeout: float = 30.0
    isolate: bool = True
    protect: tuple[Path, ...] = ()
    concurrency: int = 4
    worker_env: tuple[str, ...] = ()
    worker_cache: Path | None = None
    max_consecutive_faults: int = 5
    max_fault_rate: float = MAX_FAULT_RATE
    meter: bool = True
    reads: str = DEFAULT_READ_POLICY
    first_token: FirstToken | None = None
    simulated_clock: bool = True

    def __post_init__(self) -> None:
        check_read_policy(self.reads)


@dataclass(frozen=True)
class LoopTiming:
    """What one :func:`run_cell` measured of itself (for ``drift bench``; not stored in tables).

    Attributes:
        wall_s: Wall time of the whole call: tables read, workers started, loop, tables built.
        sessions: Stores made (replicates × sessions).
        retrievals: Retrieves made.
        store_backend_ms: Sum of ``write_ms``, the time inside the backends' ``store()``.
        store_loop_ms: Sum of ``write_round_trip_ms``: the wall time of the store phase of
            every replicate, as the harness saw it (see ``_Replicate.store_run``), the reads
            before each session included.
        session_read_backend_ms: Sum of ``session_read_ms``, the time inside ``retrieve()`` of
            the reads before the sessions.
        overhead_us_per_session: ``(store_loop_ms - store_backend_ms - session_read_backend_ms)
            / sessions`` in µs: the
            mean, i.e. all the time the loop adds to the backends' own, rare expensive sessions
            (checkpoint recounts, the first store of each batch) included.
        overhead_us_per_session_median: The median over sessions of round trip minus
            ``write_ms`` and its reads' ``session_read_ms`` (batching puts the send cost on a
            batch's first session, so the median
            flatters; the mean is the figure to quote).
        read_p99_ms: Nearest-rank p99 of ``read_ms`` over every retrieve of the cell, replicates
            pooled (the definition of evaluation's ``read_ms_p99``); NaN without retrieves.
    """

    wall_s: float
    sessions: int
    retrievals: int
    store_backend_ms: float
    store_loop_ms: float
    session_read_backend_ms: float
    overhead_us_per_session: float
    overhead_us_per_session_median: float
    read_p99_ms: float

    @classmethod
    def of(
        cls, snapshots: dict[str, list[Any]], retrievals: dict[str, list[Any]], wall_s: float
    ) -> LoopTiming:
        """Summarise one cell's rows."""
        backend = np.asarray(snapshots["write_ms"], dtype=np.float64)
        loop = np.asarray(snapshots["write_round_trip_ms"], dtype=np.float64)
        session_reads = np.asarray([sum(ms) for ms in snapshots["session_read_ms"]], np.float64)
        # Waits until queryable are the backend's time too (a mean of its stores'), not the loop's.
        waits = np.asarray([ms or 0.0 for ms in snapshots["queryable_ms"]], np.float64)
        reads = np.sort(np.asarray(retrievals["read_ms"], dtype=np.float64))
        sessions = int(backend.size)
        extra_us = (loop - backend - session_reads - waits) * 1000
        rank = math.ceil(0.99 * reads.size) - 1
        return cls(
            wall_s=wall_s,
            sessions=sessions,
            retrievals=int(reads.size),
            store_backend_ms=float(backend.sum()),
            store_loop_ms=float(loop.sum()),
            session_read_backend_ms=float(session_reads.sum()),
            overhead_us_per_session=float(extra_us.mean()) if sessions else math.nan,
            overhead_us_per_session_median=float(np.median(extra_us)) if sessions else math.nan,
            read_p99_ms=float(reads[max(0, rank)]) if reads.size else math.nan,
        )


class FaultShare:
    """The validity rule of a cell, for any record that counts its calls and faulted calls."""

    calls: int
    faulted_calls: int
    max_fault_rate: float

    @property
    def fault_rate(self) -> float:
        """The share of the cell's calls that faulted or were skipped (0 without calls)."""
        return self.faulted_calls / self.calls if self.calls else 0.0

    @property
    def valid(self) -> bool:
        """Whether the cell's figures may be ranked: its fault rate is within the limit."""
        return self.fault_rate <= self.max_fault_rate


@dataclass
class CellRun(FaultShare):
    """What the loop produced for one arm on one world."""

    arm: Arm
    snapshots: pa.Table
    retrievals: pa.Table
    isolation: str
    backend_version: str
    faults: list[str] = field(default_factory=list)
    timing: LoopTiming | None = None
    """How long the loop took and what it added to the backends' time (None if not measured)."""
    calls: int = 0
    """Stores and retrieves the cell recorded (made, faulted or skipped)."""
    faulted_calls: int = 0
    """Of those, the ones with an error (a fault, a recount mismatch or a skip)."""
    max_fault_rate: float = MAX_FAULT_RATE
    deployment: str = "local"
    """Where the backend runs, as it declares (``local`` or ``cloud``): its latency budget."""
    service: dict[str, str] = field(default_factory=dict)
    """What the backend says it runs against (``DescribesService``): service, SDK, versions."""
    time_to_queryable: dict[str, float] | None = None
    """For a backend that ingests asynchronously: ``p50``, ``p95``, ``max`` (ms) and
    ``sessions`` of ``queryable_ms`` over its answered stores; ``None`` for one that does not."""
    fault_summary: FaultSummary = field(default_factory=FaultSummary)
    """The faults by call kind and the first errors, for a person to act on."""


def call_counts(snapshots: pa.Table, retrievals: pa.Table) -> tuple[int, int]:
    """A cell's recorded calls and, of those, the ones with an error, from its two tables.

    One row is one store or retrieve (made, faulted or skipped), so a cell read back from
    storage has the same fault rate as the run that wrote it.
    """
    tables = (snapshots, retrievals)
    calls = sum(table.num_rows for table in tables)
    faulted = sum(t.num_rows - t.column("error").null_count for t in tables)
    if "session_reads" in snapshots.column_names:  # the agent's reads before each session
        calls += pc.sum(snapshots["session_reads"]).as_py() or 0
        errors = pc.list_flatten(snapshots["session_read_errors"])
        faulted += len(errors) - errors.null_count
    return calls, faulted


def _join(error: str | None, more: str | None) -> str | None:
    """Two fault descriptions of one call as one line."""
    if not more:
        return error
    return f"{error}; {more}" if error else more


def _text(value: Any) -> str | None:
    """A worker's string as valid UTF-8 (a lone surrogate would break the Parquet writer)."""
    if value is None:
        return None
    text = str(value)
    if text.isascii():  # O(1) on CPython: nothing to check in most (and the largest) texts
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class _Rows:
    """One replicate's output rows, column by column, and its timings."""

    def __init__(self, snapshot_columns: list[str], retrieval_columns: list[str]) -> None:
        self.snapshots: dict[str, list[Any]] = {name: [] for name in snapshot_columns}
        self.retrievals: dict[str, list[Any]] = {name: [] for name in retrieval_columns}

    def snapshot(self, **values: Any) -> None:
        for key, value in values.items():
            self.snapshots[key].append(value)

    def retrieval(self, **values: Any) -> None:
        for key, value in values.items():
            self.retrievals[key].append(value)


@dataclass
class _Replicate:
    """The state of one replicate's walk through its sessions."""

    arm: Arm
    worker: BackendWorker
    replicate: int
    probes_at: dict[int, list[tuple[str, str, str]]]
    rows: _Rows
    progress: ProgressHook | None
    gate: GateStrategy
    reader_buffer: ReaderBuffer
    faults: list[str] = field(default_factory=list)
    storage: int | None = 0
    """Tokens of the memory after the last store; ``None``: not measured (no snapshot())."""
    write_total: int = 0
    read_total: int = 0
    recounter: LineCounter = field(default_factory=LineCounter)
    read_counter: LineCounter = field(default_factory=LineCounter)
    """Counts what reads return: a memory's answer mostly repeats its last one."""
    asker_counters: dict[str, LineCounter] = field(default_factory=dict)
    """Counts what probes get, one counter per asker: each entity's memory answers on from its
    own last answer, so probes that alternate between askers still count what changed only.
    The first asker shares :attr:`read_counter`."""
    skips: SkipRule = field(default_factory=SkipRule)
    """When this replicate stops making calls of a kind (see :mod:`._skips`)."""
    tally: FaultSummary = field(default_factory=FaultSummary)
    """This replicate's faults by call kind, and its first errors."""
    secrets: tuple[str, ...] = ()
    """Keys the worker was given: replaced in every recorded line (see :mod:`._secrets`)."""
    meter: MeterAccount | None = None
    """The worker's key at the cell's token meter: its calls are booked to each row."""
    refused: int = 0
    """Model calls the meter refused (no upstream endpoint configured)."""
    read_policy: str = DEFAULT_READ_POLICY
    """When the agent reads memory before a session is stored (see :mod:`._session_reads`)."""
    first_token: FirstToken | None = None
    """Times the reader model's first token at each session start (see :mod:`._first_token`)."""
    checkpoint_snapshot: str | None = None
    """The snapshot reported after the last checkpoint's store (``None``: none to check)."""
    honesty: SnapshotIndex = field(default_factory=SnapshotIndex)
    """Which retrieved lines the checkpoint's snapshot accounts for (see :mod:`._honesty`)."""
    clock: bool = True
    """Send each call with its session's simulated time (see :mod:`._clock`)."""
    askers: frozenset[str] = field(init=False)
    """The entities asked probes in this replicate: each keeps a memory of what it attended."""
    buffers: dict[str, ReaderBuffer] = field(default_factory=dict)
    """Each asker's soft-gate buffer: the transcripts of the sessions it attended only."""

    def __post_init__(self) -> None:
        self.askers = frozenset(asker for calls in self.probes_at.values() for _, asker, _ in calls)

    def _buffer(self, entity: str) -> ReaderBuffer:
        """The reader buffer of ``entity`` (the replicate's own for the first one asked)."""
        buffer = self.buffers.get(entity)
        if buffer is None:
            buffer = self.buffers[entity] = (
                self.gate.reader_buffer() if self.buffers else self.reader_buffer
            )
        return buffer

    def _metered(self, result: CallResult) -> int:
        """The metered tokens of the calls booked to one backend call (see ``MeterAccount``)."""
        if self.meter is None:
            return 0
        ended = result.data.get("t1") if result.ok else None
        if not isinstance(ended, int):
            return 0  # a faulted call: its model calls go to the next one that returns
        booked = self.meter.book(ended)
        self.refused += booked.refused
        return booked.total

    def _retried(self, kind: str, call: str, result: CallResult) -> None:
        """Record the retries an adapter made during one call (``RecordsRetries``) as faults."""
        for note in result.data.get("retries") or ():
            line = redact(_text(note), self.secrets)
            self.faults.append(f"replicate {self.replicate} {call}: retried: {line}")
            self.tally.retried[kind] += 1

    def _tally(self, kind: str, call: str, result: CallResult, error: str) -> None:
        """Count a faulted call in the replicate's summary (and its list of faults)."""
        self.faults.append(f"replicate {self.replicate} {call}: {error}")
        skipped = bool(result.data.get("skipped"))
        where = result.data.get("where") if not skipped else None
        self.tally.add(
            kind,
            self.replicate,
            call,
            error,
            skipped=skipped,
            where=str(where) if where is not None else None,
        )

    def _counter_fault(
        self, data: dict[str, Any], write_now: int | None, read_now: int | None
    ) -> str | None:
        """What is wrong with the token counters a reply carries, if anything.

        The counters are cumulative for one backend instance (the loop resets its totals when
        the worker restarts), so a count that goes down is a lie; the deltas recorded stay >= 0.
        A counter the backend does not know (``None``) is not a fault.
        """
        problem = _text(data.get("counts_error")) if data else None
        if write_now is not None and write_now < self.write_total:
            problem = _join(
                problem, f"token_counts().write went down from {self.write_total} to {write_now}"
            )
        if read_now is not None and read_now < self.read_total:
            problem = _join(
                problem, f"token_counts().read went down from {self.read_total} to {read_now}"
            )
        return problem

    async def store_run(self, run: list[Session], started: float) -> None:
        """Store a run of sessions (ending at a checkpoint at the latest) and record each.

        ``started`` is when the harness began preparing the run. Each session's round trip is
        the wall time from the end of the previous session's handling (or ``started``) to the
        end of its own, so over a replicate the round trips add up to the store phase's wall
        time: nothing the harness does for a session escapes the overhead figure. The agent's
        reads before each session travel in the same stream, just before its store.
        """
        requests: list[dict[str, Any]] = []
        reads_before: list[list[dict[str, Any]]] = []
        for session in run:
            asks = read_requests(session.session_id, session.messages, self.read_policy)
            store: dict[str, Any] = {
                "session_id": session.session_id,
                "messages": self.gate.backend_messages(session.messages, session.timestamp),
                "snapshot": session.index + 1 in self.probes_at,
                # Whose memory it goes into, for a backend whose store() takes entity_id.
                "entities": memory_owners(session.messages, session.participants, self.askers),
            }
            if self.clock:
                for ask in asks:
                    ask["at"] = session.timestamp
                store["at"] = session.timestamp
            reads_before.append(asks)
            requests += asks
            requests.append(store)
        mark = started
        incarnation = self.worker.restarts
        # Calls of a kind cut off mid-run are answered as skipped by the worker itself.
        results = None if self.skips.stopped else self.worker.store_many(requests)
        for session, asks in zip(run, reads_before, strict=True):
            reads = SessionReads()
            for number, ask in enumerate(asks):
                answer, results = await self._next_result(results, RETRIEVE)
                context = await self._record_read(session, answer, reads)
                if number == 0 and self.first_token is not None and context is not None:
                    reads.ttft_ms = await asyncio.to_thread(
                        self.first_token.measure, context, ask["query"]
                    )
                if self.worker.restarts != incarnation:
                    self.write_total = self.read_total = 0
                    incarnation = self.worker.restarts
            result, results = await self._next_result(results, STORE)
            snapshot = (
                _text(result.data.get("snapshot")) if session.index + 1 in self.probes_at else None
            )
            if session.index + 1 in self.probes_at:
                self.checkpoint_snapshot = snapshot if result.ok else None
            recount = None
            if snapshot is not None:
                # A long snapshot is recounted on a thread (tiktoken runs outside the GIL), so
                # the other replicates' sessions keep flowing meanwhile.
                # Counted from the previous checkpoint's snapshot on when it only grew, so a
                # keep-everything memory costs its new lines, not its whole size, per checkpoint.
                recount = (
                    await asyncio.to_thread(self.recounter.count, snapshot)
                    if len(snapshot) > _RECOUNT_INLINE_CHARS
                    else self.recounter.count(snapshot)
                )
            self._record_store(session, result, snapshot, recount, reads)
            if self.worker.restarts != incarnation:
                # A fresh backend instance counts its LLM tokens from zero again.
                self.write_total = self.read_total = 0
                incarnation = self.worker.restarts
            now = time.perf_counter()
            self.rows.snapshots["write_round_trip_ms"].append((now - mark) * 1000)
            mark = now
            if self.progress:
                self.progress(1)
        if results is not None:
            await results.aclose()

    async def _next_result(
        self, results: AsyncGenerator[CallResult, None] | None, kind: str
    ) -> tuple[CallResult, AsyncGenerator[CallResult, None] | None]:
        """The next reply of a run (a call of ``kind``), or a skip when none was sent."""
        if results is None:
            return _skipped(self.skips.reason(kind)), None
        result = await anext(results)
        self.skips.count(kind, result.ok)
        return result, results

    async def _record_read(
        self, session: Session, answer: CallResult, reads: SessionReads
    ) -> str | None:
        """Record one read before ``session``: its latency, the tokens returned, its LLM tokens.

        Returns the text it returned (``None`` for a faulted read).
        """
        context = _text(answer.data.get("context")) if answer.ok else None
        tokens = 0
        if context:
            tokens = (
                await asyncio.to_thread(self.read_counter.count, context)
                if len(context) > _RECOUNT_INLINE_CHARS
                else self.read_counter.count(context)
            )
        error, reported = self._record_retrieve(
            answer, f"retrieve before {session.session_id}", SESSION_READ
        )
        reads.add(
            answer.backend_ms, answer.round_trip_ms, tokens, self._metered(answer), reported, error
        )
        reads.unmetered_calls += _unmetered(answer)
        return context if answer.ok else None

    def _record_retrieve(
        self, answer: CallResult, what: str, kind: str
    ) -> tuple[str | None, int | None]:
        """A retrieve's error (kept as a fault of ``what``) and the LLM read tokens it reports.

        Advances the replicate's read counter to what the reply carries.
        """
        data = answer.data
        read_now = _counter(data, "read", self.read_total)
        write_now = _counter(data, "write", self.write_total)
        error = redact(
            _join(_text(answer.error), self._counter_fault(data, write_now, read_now)),
            self.secrets,
        )
        if error:
            self._tally(kind, what, answer, error)
        self._retried(kind, what, answer)
        if read_now is None:
            return error, None  # the backend does not know: recorded as unknown, never as zero
        reported = max(0, read_now - self.read_total)
        self.read_total = max(self.read_total, read_now)
        return error, reported

    def _record_store(
        self,
        session: Session,
        result: CallResult,
        snapshot: str | None,
        recount: int | None,
        reads: SessionReads,
    ) -> None:
        is_checkpoint = session.index + 1 in self.probes_at
        # A transcript kept for the reader reaches only the askers that attended the session.
        attended = [entity for entity in session.participants if entity in self.askers]
        for owner in attended if session.participants else sorted(self.askers):
            self._buffer(owner).add(session.messages)
        error = redact(_text(result.error), self.secrets)
        storage = self.storage
        data = result.data
        new_storage = storage
        if result.ok and "storage_tokens" in data:
            reported = data["storage_tokens"]
            new_storage = None if reported is None else int(reported)
        if snapshot is not None and recount is not None:
            # Authoritative recount in the harness: a backend cannot under-report its size.
            if recount != new_storage:
                error = (error + "; " if error else "") + "storage count mismatch; recounted"
            new_storage = recount
        write_now = _counter(data, "write", self.write_total)
        read_now = _counter(data, "read", self.read_total)
        error = redact(_join(error, self._counter_fault(data, write_now, read_now)), self.secrets)
        if read_now is not None:
            self.read_total = max(self.read_total, read_now)
        if error:
            self._tally(STORE_CALL, f"store {session.session_id}", result, error)
        self._retried(STORE_CALL, f"store {session.session_id}", result)
        self.rows.snapshot(
            replicate=self.replicate,
            session_index=session.index,
            session_id=session.session_id,
            tier=session.tier,
            transcript_tokens=session.transcript_tokens,
            write_ms=result.backend_ms,
            queryable_ms=data.get("queryable_ms") if result.ok else None,
            write_tokens=0,  # charged at the end of the cell (see _metering.charge)
            metered_write_tokens=self._metered(result),
            reported_write_tokens=(
                None if write_now is None else max(0, write_now - self.write_total)
            ),
            unmetered_calls=_unmetered(result) + reads.unmetered_calls,
            storage_tokens=new_storage,
            storage_delta_tokens=(
                None if new_storage is None or storage is None else new_storage - storage
            ),
            checkpoint=is_checkpoint,
            snapshot=snapshot,
            error=error,
            **reads.columns(),
        )
        self.storage = new_storage
        if write_now is not None:
            self.write_total = max(self.write_total, write_now)

    def _asker_counter(self, asker: str) -> LineCounter:
        """The counter of what ``asker``'s probes get (the first asker's: :attr:`read_counter`)."""
        counter = self.asker_counters.get(asker)
        if counter is None:
            counter = self.read_counter if not self.asker_counters else LineCounter()
            self.asker_counters[asker] = counter
        return counter

    async def probe(self, session: Session) -> None:
        """Ask every probe of the checkpoint after ``session``, one retrieve each."""
        after = session.index + 1
        last_context, last_tokens = "", 0
        last_raw: Any = None
        last_clean = ""
        buffered: dict[str, tuple[str, int]] = {}
        unreported: str | None = None
        # Each asker's last answer and what the snapshot did not account for in it: askers take
        # turns, and each one's memory mostly answers as it did for its previous probe.
        checked: dict[str, tuple[str, str | None]] = {}
        given: dict[str, tuple[str, int]] = {}  # each asker's last context and its tokens
        if self.checkpoint_snapshot is not None:
            self.honesty.update(self.checkpoint_snapshot)
        for probe_id, asker, question in self.probes_at[after]:
            if asker not in buffered:
                text = self._buffer(asker).text()
                buffered[asker] = (text, count_tokens_lines(text))
            buffer, buffer_tokens = buffered[asker]
            incarnation = self.worker.restarts
            skip = self.skips.reason(RETRIEVE)
            if skip is not None:
                answer = _skipped(skip)
            else:
                ask = {
                    "op": "retrieve",
                    "session_id": session.session_id,
                    "entity_id": asker,
                    "query": question,
                }
                if self.clock:
                    ask["at"] = session.timestamp
                answer = await self.worker.call(ask)
                self.skips.count(RETRIEVE, answer.ok)
            raw = answer.data.get("context") if answer.ok else None
            if raw is not last_raw:  # "same as last time" replies hand back the same object
                last_raw, last_clean = raw, _text(raw) or ""
                # Checked before the gate appends anything: only the backend's own text.
                unreported = None
                if raw is not None and self.checkpoint_snapshot is not None:
                    seen = checked.get(asker)
                    if seen is not None and seen[0] == last_clean:
                        unreported = seen[1]
                    else:
                        unreported = self.honesty.unreported(last_clean)
                        checked[asker] = (last_clean, unreported)
            context = last_clean
            if buffer:
                context = f"{context}\n\n{buffer}" if context else buffer
            # Equal contexts share one string (and one token count): a full-context memory
            # gives every probe of a checkpoint the same, possibly huge, text, and each asker
            # its own one, probe after probe.
            if context == last_context:
                context = last_context
            else:
                kept = given.get(asker)
                if kept is not None and kept[0] == context:
                    context, tokens = kept
                else:
                    tokens = self._asker_counter(asker).count(context)
                    given[asker] = (context, tokens)
                last_context, last_tokens = context, tokens
            answer_error, reported = self._record_retrieve(answer, f"retrieve {probe_id}", PROBE)
            self.rows.retrieval(
                replicate=self.replicate,
                checkpoint=after,
                probe_id=probe_id,
                asker=asker,
                context=context,
                read_ms=answer.backend_ms,
                read_round_trip_ms=answer.round_trip_ms,
                read_tokens=last_tokens,
                llm_read_tokens=0,  # charged at the end of the cell
                metered_read_tokens=self._metered(answer),
                reported_read_tokens=reported,
                unmetered_calls=_unmetered(answer),
                soft_buffer_tokens=buffer_tokens,
                error=answer_error,
                unreported=unreported,
            )
            if self.worker.restarts != incarnation:
                self.write_total = self.read_total = 0


async def _run_replicate(
    arm: Arm,
    options: dict[str, Any],
    config: LoopConfig,
    replicate: int,
    sessions_ready: Callable[[], Awaitable[Iterator[Session]]],
    probes_at: dict[int, list[tuple[str, str, str]]],
    rows: _Rows,
    progress: ProgressHook | None,
    skips: SkipRule,
    metering: CellMeter | None = None,
    values: WorldValues | None = None,
) -> _ReplicateOutcome:
    gate = arm.gate.strategy()
    passed = {name: os.environ[name] for name in config.worker_env if name in os.environ}
    account = None
    if metering is not None:
        account = metering.account(f"{arm.key}#{replicate}")
        options = metering.options
        # The meter's variables win: the user's own key stays in the harness.
        passed.update(metering.environment(account))
    worker = BackendWorker(
        arm.backend, options, list(config.protect), config.call_timeout, config.isolate, passed
    )
    state = _Replicate(
        arm,
        worker,
        replicate,
        probes_at,
        rows,
        progress,
        gate,
        gate.reader_buffer(),
        skips=skips,
        # The meter's key is no secret of the user's, but it differs between runs: a line that
        # quoted it would make the tables differ too.
        secrets=arm_secrets(options, config.worker_env) + ((account.key,) if account else ()),
        meter=account,
        read_policy=config.reads,
        first_token=config.first_token,
        clock=config.simulated_clock,
        honesty=SnapshotIndex(values=values),
    )
    worker.init_extra = lambda: {"skips": skips.state(), "clock": config.simulated_clock}
    try:
        started = await worker.start()
    except BaseException:
        # Cancelled mid-start (a sibling replicate's backend failed): stop this worker too.
        await worker.close()
        raise
    if not started.ok:
        await worker.close()
        raise BackendStartError(arm.key, redact(started.error, state.secrets) or "unknown error")
    # With a meter, the meter keeps the arm's replies (see start_cell_meter), not the worker.
    worker_cache = config.worker_cache if metering is None else None
    if worker_cache is not None:
        seed_worker_cache(worker_cache, worker)
    try:
        sessions = await sessions_ready()
        run: list[Session] = []
        run_started = time.perf_counter()
        for session in sessions:
            run.append(session)
            at_checkpoint = session.index + 1 in probes_at
            if not at_checkpoint and len(run) < MAX_STORE_RUN:
                continue
            await state.store_run(run, run_started)
            run = []
            if at_checkpoint:
                await state.probe(session)
            run_started = time.perf_counter()
        if run:
            await state.store_run(run, run_started)
        if worker.service:
            await worker.describe()
    finally:
        isolation, version, deployment = worker.isolation, worker.version, worker.deployment
        if worker_cache is not None:
            collect_worker_cache(worker, worker_cache)
        await worker.close()
    _book_the_rest(state)
    service = {key: redact(value, state.secrets) or "" for key, value in worker.service.items()}
    return _ReplicateOutcome(
        isolation,
        version,
        state.faults,
        deployment,
        state.tally,
        service,
        worker.models_outside_meter,
    )


class _ReplicateOutcome(NamedTuple):
    """What a replicate's run says besides its rows."""

    isolation: str
    version: str
    faults: list[str]
    deployment: str
    tally: FaultSummary
    service: dict[str, str]
    models_outside_meter: bool


def _book_the_rest(state: _Replicate) -> None:
    """Book a replicate's model calls made after its last backend call to its last store."""
    if state.meter is None:
        return
    rest = state.meter.book()
    state.refused += rest.refused
    column = state.rows.snapshots["metered_write_tokens"]
    if rest.total and column:
        column[-1] += rest.total
    if state.refused:
        refused = (
            f"replicate {state.replicate}: {state.refused} model call(s) refused: {NO_UPSTREAM}"
        )
        state.faults.append(refused)
        state.tally.other.append(refused)


def _unmetered(result: CallResult) -> int:
    """Model calls the worker saw go around the meter during the call (see :mod:`._unmetered`)."""
    return int(result.data.get("unmetered", 0)) if result.data else 0


def _counter(data: dict[str, Any], key: str, total: int) -> int | None:
    """A token counter a reply carries.

    ``total`` when it carries none (a call not made), ``None`` when the backend does not know.
    """
    if not data or key not in data:
        return total
    value = data[key]
    return None if value is None else int(value)


def _skipped(reason: str | None) -> CallResult:
    """A call not made: its kind is cut off in this replicate (see :mod:`._skips`)."""
    return CallResult(False, 0.0, 0.0, {"skipped": True}, reason or "skipped")


def run_cell(
    world_root: RootLike,
    scenario: str,
    horizon: str,
    replicates: int,
    arm: Arm,
    options: dict[str, Any] | None = None,
    config: LoopConfig | None = None,
    progress: ProgressHook | None = None,
) -> CellRun:
    """Run one arm over every replicate of one world; returns its two tables in memory.

    Raises:
        BackendStartError: The backend could not be built (an import, attribute or
            constructor failure), before any session reached it.
    """
    cell_started = time.perf_counter()
    config = config or LoopConfig()
    storage = StorageRoot.from_url(world_root)
    schedule = read_world_table(storage, EVENT_SCHEDULES, scenario, horizon)
    transcripts = read_world_table(storage, TRANSCRIPTS, scenario, horizon)
    probes = read_world_table(storage, PROBES, scenario, horizon)
    values = _world_values(storage, scenario, horizon)
    snapshot_columns = [
        f.name for f in MEMORY_SNAPSHOTS.schema if f.name not in (*_CELL_CONSTANTS, *_DECLARED)
    ]
    retrieval_columns = [f.name for f in RETRIEVALS.schema if f.name not in _CELL_CONSTANTS]
    per_replicate: list[dict[int, list[tuple[str, str, str]]]] = []
    for replicate in range(replicates):
        mine = probes.filter(pc.equal(probes["replicate"], replicate))
        probes_at: dict[int, list[tuple[str, str, str]]] = {}
        for checkpoint, probe_id, asker, question in zip(
            mine["checkpoint"].to_pylist(),
            mine["probe_id"].to_pylist(),
            mine["asker"].to_pylist(),
            mine["question"].to_pylist(),
            strict=True,
        ):
            probes_at.setdefault(checkpoint, []).append((probe_id, asker, question))
        per_replicate.append(probes_at)
    # Each replicate writes into its own rows; merged in replicate order afterwards, so that the
    # output does not depend on which replicate finished first.
    rows = [_Rows(snapshot_columns, retrieval_columns) for _ in range(replicates)]
    planned = pc.sum(pc.less(schedule["replicate"], replicates)).as_py() or 0
    planned += sum(len(calls) for probes_at in per_replicate for calls in probes_at.values())
    planned += planned_reads(schedule, transcripts, replicates, config.reads)
    budget = config.max_fault_rate * planned
    metering = (
        start_cell_meter(arm.backend, options or {}, config.worker_cache) if config.meter else None
    )

    async def run_all() -> list[_ReplicateOutcome]:
        limit = asyncio.Semaphore(max(1, config.concurrency))
        # The transcripts' tokens are counted (tiktoken works outside the GIL) while the
        # workers start; each replicate waits for the counts only once its worker is up.
        counting = asyncio.ensure_future(asyncio.to_thread(transcript_tokens, transcripts))

        async def one(replicate: int) -> _ReplicateOutcome:
            async def sessions_ready() -> Iterator[Session]:
                tokens = await counting
                return replicate_sessions(
                    schedule,
                    transcripts,
                    replicate,
                    tokens.get(replicate, np.zeros(0, dtype=np.int64)),
                )

            async with limit:
                return await _run_replicate(
                    arm,
                    options or {},
                    config,
                    replicate,
                    sessions_ready,
                    per_replicate[replicate],
                    rows[replicate],
                    progress,
                    SkipRule(config.max_consecutive_faults, budget),
                    metering,
                    values,
                )

        # A task group: a replicate whose backend cannot start stops its siblings at once.
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(r)) for r in range(replicates)]
        except* BackendStartError as failed:
            raise failed.exceptions[0] from None
        except* Exception:
            error = counting.exception() if counting.done() and not counting.cancelled() else None
            if error is not None:
                # Counting failed (every replicate waiting for it failed alike): its own error.
                raise error from None
            raise
        return [task.result() for task in tasks]

    try:
        results = asyncio.run(run_all())
    finally:
        if metering is not None:
            metering.close()
    snapshot_rows = {k: [v for r in rows for v in r.snapshots[k]] for k in snapshot_columns}
    retrieval_rows = {k: [v for r in rows for v in r.retrievals[k]] for k in retrieval_columns}
    snapshot_rows["write_tokens"], retrieval_rows["llm_read_tokens"] = charge(
        snapshot_rows, retrieval_rows
    )
    constants = {
        "scenario": scenario,
        "horizon": horizon,
        "arm": arm.key,
        "backend": arm.backend,
        "gate": str(arm.gate),
    }
    deployment = next((r[3] for r in results if r[3]), "local")
    declared = {
        "deployment": deployment,
        "models_outside_meter": any(r.models_outside_meter for r in results),
    }
    snapshots = _with_constants(snapshot_rows, {**constants, **declared}, MEMORY_SNAPSHOTS.schema)
    retrievals = _with_constants(retrieval_rows, constants, RETRIEVALS.schema)
    isolation = sorted({r[0] for r in results if r[0]})  # "": a replicate that never started
    calls, faulted_calls = call_counts(snapshots, retrievals)
    return CellRun(
        arm=arm,
        snapshots=snapshots,
        retrievals=retrievals,
        isolation=",".join(isolation),
        backend_version=next((r[1] for r in results if r[1]), ""),
        faults=[fault for r in results for fault in r[2]],
        timing=LoopTiming.of(snapshot_rows, retrieval_rows, time.perf_counter() - cell_started),
        calls=calls,
        faulted_calls=faulted_calls,
        max_fault_rate=config.max_fault_rate,
        deployment=deployment,
        fault_summary=FaultSummary.merged([r.tally for r in results]),
        service=merged_service([r.service for r in results]),
        time_to_queryable=time_to_queryable(snapshot_rows["queryable_ms"]),
    )


def _world_values(storage: StorageRoot, scenario: str, horizon: str) -> WorldValues | None:
    """The slot values of the world's entity types (``None``: a world without entity profiles).

    A retrieved line may name one only when the checkpoint's snapshot names it too.
    """
    keys = {"scenario": scenario, "horizon": horizon}
    if not storage.partition_exists(LATENT_PROFILES, keys):
        return None
    types = storage.read_table(LATENT_PROFILES, keys).column("entity_type").to_pylist()
    return world_values(tuple(sorted({str(name) for name in types})))


def merged_service(reports: list[dict[str, str]]) -> dict[str, str]:
    """One description of what a cell's replicates ran against.

    Each replicate's worker asks the backend on its own, so a service upgraded or a model
    switched mid-cell shows: a key whose replicates disagree lists every value seen, in
    replicate order, joined by `` | `` (one value when they agree).
    """
    seen: dict[str, dict[str, None]] = {}
    for report in reports:
        for key, value in report.items():
            seen.setdefault(key, {})[value] = None
    return {key: " | ".join(values) for key, values in seen.items()}


def time_to_queryable(waits: list[float | None]) -> dict[str, float] | None:
    """Nearest-rank p50 and p95, and the largest, of a cell's waits until queryable (ms).

    ``None`` when no store of the cell was waited for (a backend that does not ingest
    asynchronously, or one whose every store faulted).
    """
    measured = np.sort(np.asarray([ms for ms in waits if ms is not None], dtype=np.float64))
    if not measured.size:
        return None

    def rank(share: float) -> float:
        return float(measured[max(0, math.ceil(share * measured.size) - 1)])

    return {
        "p50": rank(0.50),
        "p95": rank(0.95),
        "max": float(measured[-1]),
        "sessions": float(measured.size),
    }


_CELL_CONSTANTS = ("scenario", "horizon", "arm", "backend", "gate")
_DECLARED = ("deployment", "models_outside_meter")
"""What the backend declares of itself, stored on every session row of its cell."""


def _with_constants(
    rows: dict[str, list[Any]], constants: Mapping[str, object], schema: pa.Schema
) -> pa.Table:
    n = len(next(iter(rows.values()))) if rows else 0
    columns: dict[str, Any] = {name: [value] * n for name, value in constants.items()}
    columns.update(rows)
    for column in schema:
        if pa.types.is_dictionary(column.type):
            columns[column.name] = _dictionary(columns[column.name], column.type)
    return pa.Table.from_pydict({f.name: columns[f.name] for f in schema}, schema=schema)


def _dictionary(values: list[Any], kind: pa.DataType) -> pa.DictionaryArray:
    """Dictionary-encode without first copying every value (contexts repeat, and can be huge)."""
    index: dict[Any, int] = {}
    codes = [index.setdefault(value, len(index)) for value in values]
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, type=kind.index_type), pa.array(list(index), type=kind.value_type)
    )
