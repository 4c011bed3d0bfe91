"""What one of the agent's reads costs in the token cost TC, and that cost over a trajectory.

A read costs what it makes a model read: the LLM tokens spent inside ``retrieve()`` plus the
text handed to the reader. TC measures it on the agent's own reads before each session, but
the probes are reads too, and the only ones scored: a memory that handed the probes more than
the agent's reads would have its capability measured on reads it is never charged for. So a
read costs the larger of the two means: what the agent's reads were handed, and what the
probes' retrieves were handed (the memory's own text, without the soft gate's buffer, which the
harness appends at probes only). A memory that answers the probes more generously than the
agent costs as much as one that gives the agent that much on every read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._bootstrap import FloatArray

__all__ = ["charged_per_read", "cumulative_read_tokens", "probe_handout"]


def charged_per_read(agent: FloatArray, probes: FloatArray) -> FloatArray:
    """The per-read part of TC: the agent's reads' mean, or the probes' mean when larger.

    Args:
        agent: Mean tokens per agent read (NaN where there was none).
        probes: Mean tokens the probes' retrieves were handed (NaN where there was none).

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


def _column(table: pa.Table, name: str) -> FloatArray:
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)


def cumulative_read_tokens(
    snapshots: pa.Table,
    retrievals: pa.Table,
    checkpoints: Sequence[int],
    self_reported: bool = False,
) -> dict[tuple[int, int], float]:
    """The read side of TC summed over a trajectory so far, per (replicate, checkpoint).

    At checkpoint ``t`` a replicate has made the agent's reads before sessions ``0 .. t - 1``;
    each costs :func:`charged_per_read` of those reads' mean and the mean handed to the probes
    of checkpoints up to ``t``. The LLM tokens of an agent read are the metered ones, or the
    backend's report when the cell's figures are self-reported.

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
    counts = np.asarray(
        pc.list_value_length(snapshots.column("session_read_tokens")).fill_null(0).to_numpy(),
        dtype=np.int64,
    )
    texts = pc.list_flatten(snapshots.column("session_read_tokens")).to_numpy(zero_copy_only=False)
    llm = (
        pc.list_flatten(snapshots.column(llm_name)).to_numpy(zero_copy_only=False)
        if llm_name in snapshots.column_names
        else np.zeros(len(texts))
    )
    read_rows = np.repeat(np.arange(snapshots.num_rows), counts)
    handed = np.asarray(texts, dtype=np.float64) + np.asarray(llm, dtype=np.float64)
    read_rep = _column(snapshots, "replicate")[read_rows]
    read_index = _column(snapshots, "session_index")[read_rows]
    buffer = (
        _column(retrievals, "soft_buffer_tokens")
        if "soft_buffer_tokens" in retrievals.column_names
        else np.zeros(retrievals.num_rows)
    )
    probed = probe_handout(
        _column(retrievals, "read_tokens"), _column(retrievals, "llm_read_tokens"), buffer
    )
    probe_rep, probe_cp = _column(retrievals, "replicate"), _column(retrievals, "checkpoint")
    out: dict[tuple[int, int], float] = {}
    for replicate in np.unique(_column(snapshots, "replicate")):
        for checkpoint in checkpoints:
            reads = handed[(read_rep == replicate) & (read_index < checkpoint)]
            probes = probed[(probe_rep == replicate) & (probe_cp <= checkpoint)]
            if reads.size == 0:
                out[(int(replicate), checkpoint)] = 0.0
                continue
            mean_probe = np.array([probes.mean() if probes.size else np.nan])
            price = charged_per_read(np.array([reads.mean()]), mean_probe)[0]
            out[(int(replicate), checkpoint)] = float(reads.size * price)
    return out
