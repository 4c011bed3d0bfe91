"""Views over the stored tables that ``drift query`` (and :func:`connect`) adds beside them.

``session_reads``: one row per read the agent made before a session was stored, from the list
columns of ``memory_snapshots``, with how much memory there was to read: the sessions stored
before it and the storage tokens after the previous session (null when not measured). Read
latency and read tokens against stored sessions show a memory that slows down as it grows.
"""

from __future__ import annotations

from typing import Final

from ._schemas import MEMORY_SNAPSHOTS, TableDef

__all__ = ["DERIVED_VIEWS", "SESSION_READS_VIEW"]

SESSION_READS_VIEW: Final = f"""
select scenario, horizon, arm, backend, gate, replicate, session_index, session_id,
    session_index as sessions_stored,
    lag(storage_tokens) over (
        partition by scenario, horizon, arm, replicate order by session_index
    ) as storage_tokens_before,
    unnest(generate_series(0, len(session_read_ms) - 1)) as read_index,
    unnest(session_read_ms) as read_ms,
    unnest(session_read_round_trip_ms) as read_round_trip_ms,
    unnest(session_read_tokens) as read_tokens,
    unnest(session_metered_read_tokens) as metered_read_tokens,
    unnest(session_reported_read_tokens) as reported_read_tokens,
    unnest(session_read_errors) as error
from {MEMORY_SNAPSHOTS.name}
"""
"""One row per read before a session (see the module docstring)."""

DERIVED_VIEWS: Final[tuple[tuple[str, TableDef, str], ...]] = (
    ("session_reads", MEMORY_SNAPSHOTS, SESSION_READS_VIEW),
)
"""Each view: its name, the table it reads, and its query."""
