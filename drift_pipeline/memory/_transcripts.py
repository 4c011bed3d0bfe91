"""Reading a world's sessions for the memory loop, and counting their tokens once per world."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline._bounded import BoundedCache
from drift_pipeline.storage import StorageRoot, table_fingerprint
from drift_pipeline.tokens import count_tokens_batch

from ._protocol import Message

# Transcript token counts of the last few worlds this process ran, by content fingerprint: every
# arm of a world reads the same transcripts, and counting them is the floor's whole cost.
_COUNT_SLICE = 20_000
_counted: BoundedCache[str, dict[int, npt.NDArray[np.int64]]] = BoundedCache(4)


@dataclass(frozen=True)
class Session:
    """One session as the loop hands it over: the messages, and the harness's own labels."""

    index: int
    session_id: str
    tier: str
    timestamp: str
    transcript_tokens: int
    messages: list[Message]


def read_world_table(root: StorageRoot, table: Any, scenario: str, horizon: str) -> pa.Table:
    """One table of a generated world; a missing one is a one-line error naming it."""
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


def transcript_tokens(transcripts: pa.Table) -> dict[int, npt.NDArray[np.int64]]:
    """Tokens of each session's transcript, per replicate (indexed by session index).

    Counted once per world and process: each message on its own (see
    :func:`~drift_pipeline.tokens.count_tokens_batch`), summed per session; later arms of the
    same world reuse the counts.
    """
    columns = ["replicate", "session_index", "content"]
    key = table_fingerprint(transcripts, columns)
    counted = _counted.get(key)
    if counted is not None:
        return counted
    contents = transcripts["content"]
    per_message = np.zeros(len(contents), dtype=np.int64)
    # In slices: the Python strings of one slice at a time, not of the whole world.
    for start in range(0, len(contents), _COUNT_SLICE):
        texts = contents.slice(start, _COUNT_SLICE).to_pylist()
        per_message[start : start + len(texts)] = count_tokens_batch(texts)
    replicates = transcripts["replicate"].to_numpy()
    sessions = transcripts["session_index"].to_numpy()
    counted = {}
    for replicate in np.unique(replicates).tolist():
        mine = replicates == replicate
        counted[int(replicate)] = np.bincount(
            sessions[mine], weights=per_message[mine], minlength=int(sessions[mine].max()) + 1
        ).astype(np.int64)
    return _counted.put(key, counted)


def replicate_sessions(
    schedule: pa.Table,
    transcripts: pa.Table,
    replicate: int,
    tokens: npt.NDArray[np.int64],
) -> Iterator[Session]:
    """Yield one replicate's sessions in order; each transcript is built, yielded, dropped."""
    rows = _in_order(schedule.filter(pc.equal(schedule["replicate"], replicate)), ["session_index"])
    # Only the message columns cross into the loop: harness-private labels stay behind.
    message_columns = ["session_index", "turn_index", "speaker", "role", "content"]
    turns = _in_order(
        transcripts.select(message_columns).filter(pc.equal(transcripts["replicate"], replicate)),
        ["session_index", "turn_index"],
    )
    session_of = turns["session_index"].to_numpy()
    speakers = turns["speaker"].to_pylist()
    roles = turns["role"].to_pylist()
    contents = turns["content"].to_pylist()
    del turns
    indices = rows["session_index"].to_numpy()
    # Turns are sorted by session: each session's turns are one slice.
    starts = np.searchsorted(session_of, indices, side="left").tolist()
    ends = np.searchsorted(session_of, indices, side="right").tolist()
    for index, session_id, tier, moment, start, end in zip(
        indices.tolist(),
        rows["session_id"].to_pylist(),
        rows["tier"].to_pylist(),
        rows["sim_time"].to_pylist(),
        starts,
        ends,
        strict=True,
    ):
        timestamp = moment.isoformat()
        messages: list[Message] = [
            {"speaker": speaker, "role": role, "content": content, "timestamp": timestamp}
            for speaker, role, content in zip(
                speakers[start:end], roles[start:end], contents[start:end], strict=True
            )
        ]
        # Drop the harness's copy as soon as it is handed over.
        contents[start:end] = [""] * (end - start)
        count = int(tokens[index]) if index < tokens.size else 0  # a session without turns
        yield Session(index, session_id, tier, timestamp, count, messages)
