"""What the agent's reads cost in the token cost TC, and that cost over a trajectory.

A read costs what it makes a model read: the LLM tokens spent inside ``retrieve()`` plus the
text handed to the reader. TC measures it on the agent's own reads before each session, but
the probes are reads too, and the only ones scored: a memory that handed the probes more than
the agent's reads would have its capability measured on reads it is never charged for.

So each checkpoint prices the agent's reads that led up to it: the reads since the previous
checkpoint cost, each, the larger of their own mean and the mean the checkpoint's probes were
handed (a probe's LLM tokens plus the memory's own text; the soft gate's buffer, which the
harness appends at probes only, is not the memory's). A memory that answers the probes more
generously than the agent pays on every read what the probes got; one that grows pays for no
more than its growth since the previous checkpoint, as the probes see a larger memory than the
reads before them did. A checkpoint without probes prices nothing: its reads go to the next
one with probes; reads after the last are priced by the last.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ._bootstrap import FloatArray, IntArray

__all__ = [
    "charged_per_read",
    "cumulative_read_tokens",
    "probe_handout",
    "read_checkpoints",
]


def charged_per_read(agent: FloatArray, probes: FloatArray) -> FloatArray:
    """What each read of a stretch costs: the reads' own mean, or the probes' when larger.

    Args:
        agent: Mean tokens the agent's reads of a stretch were handed (NaN where none).
        probes: Mean tokens the probes closing it were handed (NaN where none).

    Returns:
        The elementwise larger of the two, an undefined side not counting (NaN only where
        both are).
    """
    return np.fmax(agent, probes)


def probe_handout(
    read_tokens: FloatArray, llm_read_tokens: FloatArray, soft_buffer_tokens: FloatArray
) -> FloatArray:
    """What the memory handed each probe: its LLM tokens and its own text, the buffer left out."""
    return llm_read_tokens + np.maximum(read_tokens - soft_buffer_tokens, 0.0)


def read_checkpoints(
    read_replicate: npt.NDArray[np.int64],
    read_session: npt.NDArray[np.int64],
    probe_replicate: npt.NDArray[np.int64],
    probe_checkpoint: npt.NDArray[np.int64],
) -> IntArray:
    """The checkpoint whose probes price each of the agent's reads (-1: its replicate has none).

    The probes of checkpoint ``t`` follow the store of session ``t - 1``, so the reads before
    sessions up to ``t - 1`` lead up to them: a read before session ``s`` goes to the first
    checkpoint of its replicate with probes at ``s + 1`` or later, else to the last one.
    """
    out = np.full(read_replicate.size, -1, dtype=np.int64)
    for replicate in np.unique(read_replicate):
        probed = np.unique(probe_checkpoint[probe_replicate == replicate])
        if probed.size == 0:
            continue
        mine = read_replicate == replicate
        at = np.searchsorted(probed, read_session[mine] + 1)
        out[mine] = probed[np.minimum(at, probed.size - 1)]
    return out


def _column(table: pa.Table, name: str) -> FloatArray:
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)


def cumulative_read_tokens(
    snapshots: pa.Table,
    retrievals: pa.Table,
    checkpoints: Sequence[int],
    self_reported: bool = False,
) -> dict[tuple[int, int], float]:
    """The read side of TC summed over a trajectory so far, per (replicate, checkpoint).

    At checkpoint ``t`` a replicate has made the agent's reads before sessions ``0 .. t - 1``,
    each priced as TC prices it (see the module). At the end of a trajectory the sum divided
    by its sessions is TC's read part. The LLM tokens of an agent read are the metered ones, or
    the backend's report when the cell's figures are self-reported.

    Args:
        snapshots: ``memory_snapshots`` rows: ``replicate, session_index, session_read_tokens``
            and the LLM columns (``session_metered_read_tokens`` or, self-reported,
            ``session_reported_read_tokens``).
        retrievals: ``retrievals`` rows: ``replicate, checkpoint, read_tokens,
            llm_read_tokens`` and optionally ``soft_buffer_tokens``.
        checkpoints: The checkpoints to give the sum at.
        self_reported: Whether the cell's LLM tokens are the backend's own report.

    Returns:
        Tokens per (replicate, checkpoint), for every replicate of ``snapshots``.
    """
    llm_name = "session_reported_read_tokens" if self_reported else "session_metered_read_tokens"
    per_session = snapshots.column("session_read_tokens")
    counts = np.asarray(pc.list_value_length(per_session).fill_null(0).to_numpy(), dtype=np.int64)
    texts = np.asarray(pc.list_flatten(per_session).to_numpy(zero_copy_only=False), np.float64)
    llm = (
        np.asarray(
            pc.list_flatten(snapshots.column(llm_name)).to_numpy(zero_copy_only=False), np.float64
        )
        if llm_name in snapshots.column_names
        else np.zeros(texts.size)
    )
    rows = np.repeat(np.arange(snapshots.num_rows), counts)
    handed = texts + llm
    read_rep = _column(snapshots, "replicate").astype(np.int64)[rows]
    read_session = _column(snapshots, "session_index").astype(np.int64)[rows]
    buffer = (
        _column(retrievals, "soft_buffer_tokens")
        if "soft_buffer_tokens" in retrievals.column_names
        else np.zeros(retrievals.num_rows)
    )
    probed = probe_handout(
        _column(retrievals, "read_tokens"), _column(retrievals, "llm_read_tokens"), buffer
    )
    probe_rep = _column(retrievals, "replicate").astype(np.int64)
    probe_cp = _column(retrievals, "checkpoint").astype(np.int64)
    priced_by = read_checkpoints(read_rep, read_session, probe_rep, probe_cp)
    price = np.zeros(handed.size)
    for replicate, checkpoint in set(zip(read_rep.tolist(), priced_by.tolist(), strict=True)):
        stretch = (read_rep == replicate) & (priced_by == checkpoint)
        probes = probed[(probe_rep == replicate) & (probe_cp == checkpoint)]
        closing = np.array([probes.mean() if probes.size else np.nan])
        price[stretch] = charged_per_read(np.array([handed[stretch].mean()]), closing)[0]
    out: dict[tuple[int, int], float] = {}
    for replicate in np.unique(_column(snapshots, "replicate").astype(np.int64)):
        mine = read_rep == replicate
        for checkpoint in checkpoints:
            out[(int(replicate), checkpoint)] = float(
                price[mine & (read_session < checkpoint)].sum()
            )
    return out
