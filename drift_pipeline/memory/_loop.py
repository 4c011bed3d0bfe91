"""The memory loop (spec §5, DESIGN §5): sessions through the gate into an isolated backend.

The harness reads one replicate's sessions in order, hands each to ``store()`` and drops it.
After the store of a checkpoint session it asks one ``retrieve()`` per probe of that checkpoint,
from the probe's asking entity. Nothing downstream of this loop ever reads a transcript: its
outputs (``memory_snapshots``, ``retrievals``) hold only what the backend kept and returned.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    MEMORY_SNAPSHOTS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    RootLike,
    StorageRoot,
)
from drift_pipeline.tokens import count_tokens, count_tokens_lines

from ._arms import Arm
from ._client import BackendWorker, CallResult
from ._protocol import Message
from ._worker_cache import collect_worker_cache, seed_worker_cache
from .backends.reference_compressor import summarise_session

ProgressHook = Callable[[int], None]


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
    """

    call_timeout: float = 30.0
    isolate: bool = True
    protect: tuple[Path, ...] = ()
    concurrency: int = 4
    worker_env: tuple[str, ...] = ()
    worker_cache: Path | None = None


@dataclass
class CellRun:
    """What the loop produced for one arm on one world."""

    arm: Arm
    snapshots: pa.Table
    retrievals: pa.Table
    isolation: str
    backend_version: str
    faults: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Session:
    index: int
    session_id: str
    tier: str
    timestamp: str
    messages: list[Message]


def _read(root: StorageRoot, table: Any, scenario: str, horizon: str) -> pa.Table:
    keys = {"scenario": scenario, "horizon": horizon}
    if not root.partition_exists(table, keys):
        raise FileNotFoundError(f"no {table.name} table for {scenario}/{horizon} under {root}")
    return root.read_table(table, keys)


def _in_order(table: pa.Table, keys: list[str]) -> pa.Table:
    """Sort by ``keys`` unless already sorted (generated tables are; sorting copies every row)."""
    order = np.lexsort([table[key].to_numpy() for key in reversed(keys)])
    if np.array_equal(order, np.arange(table.num_rows)):
        return table
    return table.take(pa.array(order))


def _sessions(schedule: pa.Table, transcripts: pa.Table, replicate: int) -> Iterator[_Session]:
    """Yield one replicate's sessions in order; each transcript is built, yielded, dropped."""
    rows = _in_order(schedule.filter(pc.equal(schedule["replicate"], replicate)), ["session_index"])
    # Only the message columns cross into the loop: harness-private labels stay behind.
    message_columns = ["session_index", "turn_index", "speaker", "role", "content"]
    turns = _in_order(
        transcripts.select(message_columns).filter(pc.equal(transcripts["replicate"], replicate)),
        ["session_index", "turn_index"],
    )
    session_of = turns["session_index"].to_pylist()
    speakers = turns["speaker"].to_pylist()
    roles = turns["role"].to_pylist()
    contents = turns["content"].to_pylist()
    del turns
    position = 0
    for index, session_id, tier, moment in zip(
        rows["session_index"].to_pylist(),
        rows["session_id"].to_pylist(),
        rows["tier"].to_pylist(),
        rows["sim_time"].to_pylist(),
        strict=True,
    ):
        timestamp = moment.isoformat()
        messages: list[Message] = []
        while position < len(session_of) and session_of[position] == index:
            messages.append(
                Message(
                    speaker=speakers[position],
                    role=roles[position],
                    content=contents[position],
                    timestamp=timestamp,
                )
            )
            # Drop the harness's copy as soon as it is handed over.
            contents[position] = ""
            position += 1
        yield _Session(index, session_id, tier, timestamp, messages)


def _summary_messages(messages: list[Message], size: int, timestamp: str) -> list[Message]:
    """The summary gate's input: an N-token reference summary instead of the transcript.

    The reference model is the reference compressor's summariser. Its ``speaker: sentence``
    lines go back to their speakers, and every participant keeps one message, so backends can
    still scope what they store by who took part in the session.
    """
    summary = summarise_session(messages, size)
    lines: dict[str, list[str]] = {}
    roles: dict[str, str] = {}
    for message in messages:
        lines.setdefault(message["speaker"], [])
        roles.setdefault(message["speaker"], message["role"])
    for line in summary.splitlines()[1:]:  # the first line is the date
        speaker, sep, sentence = line.partition(": ")
        if sep and speaker in lines:
            lines[speaker].append(sentence)
    return [
        Message(
            speaker=speaker,
            role=roles[speaker],
            content=" ".join(said) if said else "(summary gate: nothing kept from this speaker)",
            timestamp=timestamp,
        )
        for speaker, said in lines.items()
    ]


def _text(value: Any) -> str | None:
    """A worker's string as valid UTF-8 (a lone surrogate would break the Parquet writer)."""
    if value is None:
        return None
    return str(value).encode("utf-8", "replace").decode("utf-8")


def _render(messages: list[Message]) -> str:
    return "\n".join(f"[{m['timestamp'][:10]}] {m['speaker']}: {m['content']}" for m in messages)


async def _run_replicate(
    arm: Arm,
    options: dict[str, Any],
    config: LoopConfig,
    replicate: int,
    sessions: Iterator[_Session],
    probes_at: dict[int, list[tuple[str, str, str]]],
    snapshot_rows: dict[str, list[Any]],
    retrieval_rows: dict[str, list[Any]],
    progress: ProgressHook | None,
) -> tuple[str, str, list[str]]:
    passed = {name: os.environ[name] for name in config.worker_env if name in os.environ}
    worker = BackendWorker(
        arm.backend, options, list(config.protect), config.call_timeout, config.isolate, passed
    )
    faults: list[str] = []
    started = await worker.start()
    if not started.ok:
        faults.append(f"replicate {replicate}: backend did not start: {started.error}")
    if config.worker_cache is not None:
        seed_worker_cache(config.worker_cache, worker)
    soft: deque[str] = deque(maxlen=arm.gate.size if arm.gate.kind == "soft" else 0)
    storage = write_total = read_total = 0
    try:
        for session in sessions:
            after = session.index + 1
            is_checkpoint = after in probes_at
            transcript_tokens = sum(count_tokens(m["content"]) for m in session.messages)
            messages = session.messages
            if arm.gate.kind == "summary":
                messages = _summary_messages(messages, arm.gate.size, session.timestamp)
            incarnation = worker.restarts
            result: CallResult = await worker.call(
                {
                    "op": "store",
                    "session_id": session.session_id,
                    "messages": messages,
                    "snapshot": is_checkpoint,
                }
            )
            if soft.maxlen:
                soft.append(_render(session.messages))
            del messages
            error = _text(result.error)
            new_storage = int(result.data.get("storage_tokens", storage)) if result.ok else storage
            snapshot = _text(result.data.get("snapshot")) if is_checkpoint else None
            if snapshot is not None:
                # Authoritative recount in the harness: a backend cannot under-report its size.
                recount = count_tokens_lines(snapshot)
                if recount != new_storage:
                    error = (error + "; " if error else "") + "storage count mismatch; recounted"
                new_storage = recount
            write_now = int(result.data.get("write", write_total)) if result.data else write_total
            read_total = int(result.data.get("read", read_total)) if result.data else read_total
            if error:
                faults.append(f"replicate {replicate} store {session.session_id}: {error}")
            for key, value in (
                ("replicate", replicate),
                ("session_index", session.index),
                ("session_id", session.session_id),
                ("tier", session.tier),
                ("transcript_tokens", transcript_tokens),
                ("write_ms", result.backend_ms),
                ("write_round_trip_ms", result.round_trip_ms),
                ("write_tokens", max(0, write_now - write_total)),
                ("storage_tokens", new_storage),
                ("storage_delta_tokens", new_storage - storage),
                ("checkpoint", is_checkpoint),
                ("snapshot", snapshot),
                ("error", error),
            ):
                snapshot_rows[key].append(value)
            storage, write_total = new_storage, max(write_total, write_now)
            if worker.restarts != incarnation:
                # A fresh backend instance counts its LLM tokens from zero again.
                write_total = read_total = 0
            if progress:
                progress(1)
            if not is_checkpoint:
                continue
            buffer = "\n\n".join(soft)
            last_context, last_tokens = "", 0
            buffer_tokens = count_tokens_lines(buffer)
            for probe_id, asker, question in probes_at[after]:
                incarnation = worker.restarts
                answer = await worker.call(
                    {
                        "op": "retrieve",
                        "session_id": session.session_id,
                        "entity_id": asker,
                        "query": question,
                    }
                )
                context = (_text(answer.data.get("context")) or "") if answer.ok else ""
                if buffer:
                    context = f"{context}\n\n{buffer}" if context else buffer
                # Equal contexts share one string (and one token count): a full-context memory
                # gives every probe of a checkpoint the same, possibly huge, text.
                if context == last_context:
                    context = last_context
                else:
                    last_context, last_tokens = context, count_tokens_lines(context)
                read_now = int(answer.data.get("read", read_total)) if answer.data else read_total
                answer_error = _text(answer.error)
                if answer_error:
                    faults.append(f"replicate {replicate} retrieve {probe_id}: {answer_error}")
                for key, value in (
                    ("replicate", replicate),
                    ("checkpoint", after),
                    ("probe_id", probe_id),
                    ("asker", asker),
                    ("context", context),
                    ("read_ms", answer.backend_ms),
                    ("read_round_trip_ms", answer.round_trip_ms),
                    ("read_tokens", last_tokens),
                    ("llm_read_tokens", max(0, read_now - read_total)),
                    ("soft_buffer_tokens", buffer_tokens),
                    ("error", answer_error),
                ):
                    retrieval_rows[key].append(value)
                read_total = max(read_total, read_now)
                if worker.restarts != incarnation:
                    write_total = read_total = 0
    finally:
        isolation, version = worker.isolation, worker.version
        if config.worker_cache is not None:
            collect_worker_cache(worker, config.worker_cache)
        await worker.close()
    return isolation, version, faults


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
    """Run one arm over every replicate of one world; returns its two tables in memory."""
    config = config or LoopConfig()
    storage = StorageRoot.from_url(world_root)
    schedule = _read(storage, EVENT_SCHEDULES, scenario, horizon)
    transcripts = _read(storage, TRANSCRIPTS, scenario, horizon)
    probes = _read(storage, PROBES, scenario, horizon)
    snapshot_rows: dict[str, list[Any]] = {
        f.name: [] for f in MEMORY_SNAPSHOTS.schema if f.name not in _CELL_CONSTANTS
    }
    retrieval_rows: dict[str, list[Any]] = {
        f.name: [] for f in RETRIEVALS.schema if f.name not in _CELL_CONSTANTS
    }
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

    async def run_all() -> list[tuple[str, str, list[str]]]:
        limit = asyncio.Semaphore(max(1, config.concurrency))
        # Each replicate writes into its own row buffers; merged in replicate order afterwards
        # so that the output does not depend on which replicate finished first.
        buffers: list[tuple[dict[str, list[Any]], dict[str, list[Any]]]] = [
            ({k: [] for k in snapshot_rows}, {k: [] for k in retrieval_rows})
            for _ in range(replicates)
        ]

        async def one(replicate: int) -> tuple[str, str, list[str]]:
            async with limit:
                return await _run_replicate(
                    arm,
                    options or {},
                    config,
                    replicate,
                    _sessions(schedule, transcripts, replicate),
                    per_replicate[replicate],
                    buffers[replicate][0],
                    buffers[replicate][1],
                    progress,
                )

        results = await asyncio.gather(*(one(r) for r in range(replicates)))
        for snap, retr in buffers:
            for key in snapshot_rows:
                snapshot_rows[key].extend(snap[key])
            for key in retrieval_rows:
                retrieval_rows[key].extend(retr[key])
        return list(results)

    results = asyncio.run(run_all())
    constants = {
        "scenario": scenario,
        "horizon": horizon,
        "arm": arm.key,
        "backend": arm.backend,
        "gate": str(arm.gate),
    }
    snapshots = _with_constants(snapshot_rows, constants, MEMORY_SNAPSHOTS.schema)
    retrievals = _with_constants(retrieval_rows, constants, RETRIEVALS.schema)
    isolation = sorted({r[0] for r in results})
    return CellRun(
        arm=arm,
        snapshots=snapshots,
        retrievals=retrievals,
        isolation=",".join(isolation),
        backend_version=next((r[1] for r in results if r[1]), ""),
        faults=[fault for r in results for fault in r[2]],
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
