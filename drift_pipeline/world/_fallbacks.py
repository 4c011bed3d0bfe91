"""The ``synthesis_fallbacks`` table: every session a synthesizer handed to its fallback."""

from __future__ import annotations

import pyarrow as pa

from drift_pipeline.storage import SYNTHESIS_FALLBACKS

from ._generate import WorldReplicate, session_id
from .synthesis import Synthesizer


def writes_fallbacks(synthesizer: Synthesizer) -> bool:
    """Whether the synthesizer can fall back (and so writes the table, even when empty)."""
    return hasattr(synthesizer, "take_fallbacks")


def fallback_table(
    scenario: str, horizon: str, synthesizer: Synthesizer, replicates: list[WorldReplicate]
) -> pa.Table:
    """One row per fallen-back session of every replicate, in replicate and session order."""
    fallback = getattr(synthesizer, "fallback", None)
    fallback_name = f"{fallback.name}@{fallback.version}" if fallback is not None else ""
    rows = [
        {
            "scenario": scenario,
            "horizon": horizon,
            "replicate": world.replicate,
            "session_index": record.session_index,
            "session_id": session_id(horizon, world.replicate, record.session_index),
            "synthesizer": f"{synthesizer.name}@{synthesizer.version}",
            "fallback": fallback_name,
            "reason": record.reason,
            "attempts": record.attempts,
            "planned": record.planned,
        }
        for world in replicates
        for record in world.synthesis_fallbacks
    ]
    return pa.Table.from_pylist(rows, schema=SYNTHESIS_FALLBACKS.schema)
