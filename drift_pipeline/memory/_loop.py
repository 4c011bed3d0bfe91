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
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.llm import NO_UPSTREAM, MeterAccount
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
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
from ._first_token import FirstToken
from ._gates import GateStrategy, ReaderBuffer
from ._honesty import SnapshotIndex
from ._metering import CellMeter, charge, start_cell_meter
from ._secrets import arm_secrets, redact
from ._session_reads import (
    DEFAULT_READ_POLICY,
    SessionReads,
    check_read_policy,
    planned_reads,
    read_requests,
)
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
        max_consecutive_faults: After this many faulted calls in a row (counted over the
            cell's calls as they complete, all replicates together), the arm's remaining calls
            in the world are recorded as skipped instead of being made (0: never skip), so a
            backend that hangs on every call costs a few timeouts, not one per call or per
            replicate.
        max_fault_rate: The share of a cell's calls that may fault (or be skipped) before the
            cell is invalid: reported with its fault rate, never ranked. Once more of the
            cell's planned calls than this share have faulted, the cell is invalid whatever
            follows, and its remaining calls are recorded as skipped too.
        meter: Run the cell's token meter (see :mod:`._metering`): the workers' model calls go
            through it and are charged as metered. Off: the workers get no meter, and each
            backend is charged what its own ``token_counts()`` reports.
        reads: When the agent reads memory in each session (see :mod:`._session_reads`):
            ``session_start`` (the default) or ``user_turn``.
        first_token: The reader model that answers each opening message over what the
            session-start read returned, its first token timed (see :mod:`._first_token`);
            ``None``: no reader model, TTFRT at session start is modelled.
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
        reads = np.sort(np.asarray(retrievals["read_ms"], dtype=np.float64))
        sessions = int(backend.size)
        extra_us = (loop - backend - session_reads) * 1000
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
class _CellFaults:
    """The fault count an arm's replicates share in one world, and when to stop calling.

    Two cut-offs, both for the whole cell (every replicate, including those not started yet):
    ``limit`` faults in a row, and more faults than the cell's fault-rate limit allows over all
    its planned calls (from then on the cell is invalid whatever its remaining calls do, so
    waiting for them would only cost time).
    """

    limit: int
    budget: float
    """Faulted calls the cell may have and stay valid: ``max_fault_rate`` × planned calls."""
    in_a_row: int = 0
    faulted: int = 0
    skipping: str | None = None
    """Once set, the error recorded for every remaining call of the cell (none is made)."""
    workers: set[BackendWorker] = field(default_factory=set)
    """The started workers of the cell's replicates: interrupted when the cell is cut off."""

    def count(self, ok: bool) -> None:
        """Count one completed call; past a cut-off, the rest of the cell is skipped."""
        if ok:
            self.in_a_row = 0
            return
        self.in_a_row += 1
        self.faulted += 1
        if self.skipping is not None:
            return
        if self.limit and self.in_a_row >= self.limit:
            self.skipping = f"skipped: {self.limit} consecutive faults before this call"
        elif self.faulted > self.budget:
            self.skipping = (
                f"skipped: {self.faulted} faulted calls already put the cell past its "
                "fault-rate limit"
            )
        else:
            return
        # The other replicates' calls in flight are not waited for either (a hung one would
        # cost its whole timeout): they end at once, recorded as skipped.
        for worker in self.workers:
            worker.interrupt(self.skipping)


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
    cell: _CellFaults = field(default_factory=lambda: _CellFaults(0, math.inf))
    """Shared by the cell's replicates (see :class:`_CellFaults`)."""
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

    @property
    def skipping(self) -> str | None:
        """The error every remaining call records once the cell is cut off, else ``None``."""
        return self.cell.skipping

    def _count_fault(self, ok: bool) -> None:
        self.cell.count(ok)

    def _counter_fault(self, data: dict[str, Any], write_now: int, read_now: int) -> str | None:
        """What is wrong with the token counters a reply carries, if anything.

        The counters are cumulative for one backend instance (the loop resets its totals when
        the worker restarts), so a count that goes down is a lie; the deltas recorded stay >= 0.
        """
        problem = _text(data.get("counts_error")) if data else None
        if write_now < self.write_total:
            problem = _join(
                problem, f"token_counts().write went down from {self.write_total} to {write_now}"
            )
        if read_now < self.read_total:
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
            reads_before.append(asks)
            requests += asks
            requests.append(
                {
                    "session_id": session.session_id,
                    "messages": self.gate.backend_messages(session.messages, session.timestamp),
                    "snapshot": session.index + 1 in self.probes_at,
                }
            )
        mark = started
        incarnation = self.worker.restarts
        results = self.worker.store_many(requests) if self.skipping is None else None
        for session, asks in zip(run, reads_before, strict=True):
            reads = SessionReads()
            for number, ask in enumerate(asks):
                answer, results = await self._next_result(results)
                context = await self._record_read(session, answer, reads)
                if number == 0 and self.first_token is not None and context is not None:
                    reads.ttft_ms = await asyncio.to_thread(
                        self.first_token.measure, context, ask["query"]
                    )
                if self.worker.restarts != incarnation:
                    self.write_total = self.read_total = 0
                    incarnation = self.worker.restarts
            result, results = await self._next_result(results)
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
        self, results: AsyncGenerator[CallResult, None] | None
    ) -> tuple[CallResult, AsyncGenerator[CallResult, None] | None]:
        """The next reply of a run, or a skipped call once the cell is cut off."""
        if results is not None and self.skipping is not None:
            # The limit was reached inside this run: the worker may still be busy with (or
            # stuck on) the calls sent; it is not waited for.
            await results.aclose()
            await self.worker.abandon()
            results = None
        if results is None:
            return CallResult(False, 0.0, 0.0, {}, self.skipping), None
        result = await anext(results)
        self._count_fault(result.ok)
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
                await asyncio.to_thread(count_tokens_lines, context)
                if len(context) > _RECOUNT_INLINE_CHARS
                else count_tokens_lines(context)
            )
        error, reported = self._record_retrieve(answer, f"retrieve before {session.session_id}")
        reads.add(
            answer.backend_ms, answer.round_trip_ms, tokens, self._metered(answer), reported, error
        )
        return context if answer.ok else None

    def _record_retrieve(self, answer: CallResult, what: str) -> tuple[str | None, int]:
        """A retrieve's error (kept as a fault of ``what``) and the LLM read tokens it reports.

        Advances the replicate's read counter to what the reply carries.
        """
        data = answer.data
        read_now = int(data.get("read", self.read_total)) if data else self.read_total
        write_now = int(data.get("write", self.write_total)) if data else self.write_total
        error = redact(
            _join(_text(answer.error), self._counter_fault(data, write_now, read_now)),
            self.secrets,
        )
        if error:
            self.faults.append(f"replicate {self.replicate} {what}: {error}")
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
        self.reader_buffer.add(session.messages)
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
        write_now = int(data.get("write", self.write_total)) if data else self.write_total
        read_now = int(data.get("read", self.read_total)) if data else self.read_total
        error = redact(_join(error, self._counter_fault(data, write_now, read_now)), self.secrets)
        self.read_total = max(self.read_total, read_now)
        if error:
            self.faults.append(f"replicate {self.replicate} store {session.session_id}: {error}")
        self.rows.snapshot(
            replicate=self.replicate,
            session_index=session.index,
            session_id=session.session_id,
            tier=session.tier,
            transcript_tokens=session.transcript_tokens,
            write_ms=result.backend_ms,
            write_tokens=0,  # charged at the end of the cell (see _metering.charge)
            metered_write_tokens=self._metered(result),
            reported_write_tokens=max(0, write_now - self.write_total),
            storage_tokens=new_storage,
            storage_delta_tokens=(
                None if new_storage is None or storage is None else new_storage - storage
            ),
            checkpoint=is_checkpoint,
            snapshot=snapshot,
            error=error,
            **reads.columns(),
        )
        self.storage, self.write_total = new_storage, max(self.write_total, write_now)

    async def probe(self, session: Session) -> None:
        """Ask every probe of the checkpoint after ``session``, one retrieve each."""
        after = session.index + 1
        buffer = self.reader_buffer.text()
        last_context, last_tokens = "", 0
        last_raw: Any = None
        last_clean = ""
        unreported: str | None = None
        buffer_tokens = count_tokens_lines(buffer)
        if self.checkpoint_snapshot is not None:
            self.honesty.update(self.checkpoint_snapshot)
        for probe_id, asker, question in self.probes_at[after]:
            incarnation = self.worker.restarts
            if self.skipping is not None:
                answer = CallResult(False, 0.0, 0.0, {}, self.skipping)
            else:
                answer = await self.worker.call(
                    {
                        "op": "retrieve",
                        "session_id": session.session_id,
                        "entity_id": asker,
                        "query": question,
                    }
                )
                self._count_fault(answer.ok)
                if self.skipping is not None:
                    await self.worker.abandon()
            raw = answer.data.get("context") if answer.ok else None
            if raw is not last_raw:  # "same as last time" replies hand back the same object
                last_raw, last_clean = raw, _text(raw) or ""
                # Checked before the gate appends anything: only the backend's own text.
                unreported = (
                    self.honesty.unreported(last_clean)
                    if raw is not None and self.checkpoint_snapshot is not None
                    else None
                )
            context = last_clean
            if buffer:
                context = f"{context}\n\n{buffer}" if context else buffer
            # Equal contexts share one string (and one token count): a full-context memory
            # gives every probe of a checkpoint the same, possibly huge, text.
            if context == last_context:
                context = last_context
            else:
                last_context, last_tokens = context, count_tokens_lines(context)
            answer_error, reported = self._record_retrieve(answer, f"retrieve {probe_id}")
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
    cell: _CellFaults,
    metering: CellMeter | None = None,
) -> tuple[str, str, list[str], str]:
    gate = arm.gate.strategy()
    if cell.skipping is not None:
        # The cell was cut off before this replicate began: its calls are recorded as
        # skipped without starting a worker.
        return await _skip_replicate(
            _Replicate(
                arm,
                _NoWorker(),
                replicate,
                probes_at,
                rows,
                progress,
                gate,
                gate.reader_buffer(),
                cell=cell,
                read_policy=config.reads,
            ),
            await sessions_ready(),
        )
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
        cell=cell,
        # The meter's key is no secret of the user's, but it differs between runs: a line that
        # quoted it would make the tables differ too.
        secrets=arm_secrets(options, config.worker_env) + ((account.key,) if account else ()),
        meter=account,
        read_policy=config.reads,
        first_token=config.first_token,
    )
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
    if cell.skipping is not None:
        worker.interrupt(cell.skipping)  # cut off while it started
    cell.workers.add(worker)
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
    finally:
        isolation, version, deployment = worker.isolation, worker.version, worker.deployment
        if worker_cache is not None:
            collect_worker_cache(worker, worker_cache)
        cell.workers.discard(worker)
        if state.skipping is not None:
            # Cut off (perhaps by another replicate): no goodbye to wait for.
            await worker.abandon()
        await worker.close()
    _book_the_rest(state)
    return isolation, version, state.faults, deployment


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
        state.faults.append(
            f"replicate {state.replicate}: {state.refused} model call(s) refused: {NO_UPSTREAM}"
        )


class _NoWorker(BackendWorker):
    """Stands in for a worker never started: a replicate of a cell already cut off.

    Only what a skipped call touches is there (the restart count, abandoning); no process,
    folder or uid is ever taken.
    """

    def __init__(self) -> None:  # no folders, process or uid: BackendWorker.__init__ unused
        self.restarts = 0

    async def abandon(self) -> None:
        """Nothing runs."""


async def _skip_replicate(
    state: _Replicate, sessions: Iterator[Session]
) -> tuple[str, str, list[str], str]:
    """Record every call of a replicate as skipped (the cell was cut off before it began)."""
    run: list[Session] = []
    started = time.perf_counter()
    for session in sessions:
        run.append(session)
        if session.index + 1 in state.probes_at:
            await state.store_run(run, started)
            run = []
            await state.probe(session)
            started = time.perf_counter()
    if run:
        await state.store_run(run, started)
    return "", "", state.faults, ""


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
    snapshot_columns = [
        f.name
        for f in MEMORY_SNAPSHOTS.schema
        if f.name not in _CELL_CONSTANTS and f.name != "deployment"
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
    faults = _CellFaults(config.max_consecutive_faults, config.max_fault_rate * planned)
    metering = (
        start_cell_meter(arm.backend, options or {}, config.worker_cache) if config.meter else None
    )

    async def run_all() -> list[tuple[str, str, list[str], str]]:
        limit = asyncio.Semaphore(max(1, config.concurrency))
        # The transcripts' tokens are counted (tiktoken works outside the GIL) while the
        # workers start; each replicate waits for the counts only once its worker is up.
        counting = asyncio.ensure_future(asyncio.to_thread(transcript_tokens, transcripts))

        async def one(replicate: int) -> tuple[str, str, list[str], str]:
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
                    faults,
                    metering,
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
    snapshots = _with_constants(
        snapshot_rows, {**constants, "deployment": deployment}, MEMORY_SNAPSHOTS.schema
    )
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
    )


_CELL_CONSTANTS = ("scenario", "horizon", "arm", "backend", "gate")


def _with_constants(
    rows: dict[str, list[Any]], constants: dict[str, str], schema: pa.Schema
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
