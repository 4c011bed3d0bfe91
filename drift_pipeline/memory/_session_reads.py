"""Memory read in every session (spec §5.1 step 4): the agent consults memory before it answers.

Before a session is handed to ``store()``, the agent of that session asks its memory what it
knows, as the spec's loop has it: ``retrieve(session_id, principal, query)`` with the session's
opening user message as the query (policy ``session_start``, the default), or once before every
user turn (``user_turn``). The reads go through the same gate, worker and per-call timeout as a
checkpoint's probe retrieves, in the same message stream as the stores (see ``store_many`` in
:mod:`._client`), so they cost the loop one reply each, not a round trip.

What is kept of a read: its latency (inside ``retrieve()`` and at the harness), the tokens of
the text it returned (counted by :mod:`drift_pipeline.tokens`), the metered and self-reported
LLM tokens spent inside it, and its fault, in the session's ``memory_snapshots`` row. The
returned text itself is dropped: no probe is scored from it (checkpoint probes ask memory
themselves, after the store), so session reads change cost and latency figures, never what is
scored. The query and the principal are not kept either: they come from the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

import pyarrow as pa
import pyarrow.compute as pc

from ._protocol import Message

ReadPolicy = Literal["session_start", "user_turn"]
"""When the agent reads memory in a session: once at its start, or before every user turn."""

READ_POLICIES: Final[tuple[str, ...]] = get_args(ReadPolicy)
DEFAULT_READ_POLICY: Final[ReadPolicy] = "session_start"

SESSION_READ_COLUMNS: Final = (
    "session_reads",
    "session_read_ms",
    "session_read_round_trip_ms",
    "session_read_tokens",
    "session_metered_read_tokens",
    "session_reported_read_tokens",
    "session_read_errors",
    "session_start_ttft_ms",
)
"""The ``memory_snapshots`` columns a session's reads fill (see :mod:`drift_pipeline.storage`)."""

__all__ = [
    "DEFAULT_READ_POLICY",
    "READ_POLICIES",
    "SESSION_READ_COLUMNS",
    "ReadPolicy",
    "SessionReads",
    "check_read_policy",
    "planned_reads",
    "read_requests",
]


def check_read_policy(policy: str) -> None:
    """Raise ``ValueError`` (one line naming the allowed values) for an unknown policy."""
    if policy not in READ_POLICIES:
        raise ValueError(
            f"memory read policy {policy!r}: expected one of {', '.join(READ_POLICIES)}"
        )


def _principal(messages: list[Message]) -> str:
    """Who consults memory: the session's agent (its first assistant speaker), else its first."""
    agents = session_agents(messages)
    return agents[0] if agents else ""


def session_agents(messages: list[Message]) -> list[str]:
    """The entities whose memory a session goes into: every agent that speaks in it.

    The speakers whose role is ``assistant``, in order of first appearance; a session in which
    no agent speaks goes to its first speaker (as its reads do), one without messages to
    nobody.
    """
    agents = list(dict.fromkeys(m["speaker"] for m in messages if m["role"] == "assistant"))
    if agents or not messages:
        return [str(agent) for agent in agents]
    return [str(messages[0]["speaker"])]


def read_requests(session_id: str, messages: list[Message], policy: str) -> list[dict[str, Any]]:
    """The ``retrieve`` requests the agent makes before a session is stored.

    ``session_start``: one, with the opening user message as the query (the opening message
    when no user speaks, an empty query for an empty session). ``user_turn``: one per user
    message, each with that message, so a session without user turns has none.

    Raises:
        ValueError: An unknown policy (one line naming the allowed ones).
    """
    check_read_policy(policy)
    principal = _principal(messages)
    if policy == "session_start":
        first = messages[0]["content"] if messages else ""
        queries = [str(next((m["content"] for m in messages if m["role"] == "user"), first))]
    else:
        queries = [str(m["content"]) for m in messages if m["role"] == "user"]
    return [
        {"op": "retrieve", "session_id": session_id, "entity_id": principal, "query": query}
        for query in queries
    ]


def planned_reads(schedule: pa.Table, transcripts: pa.Table, replicates: int, policy: str) -> int:
    """How many reads the first ``replicates`` replicates of a world make under ``policy``."""
    if policy == "session_start":
        return int(pc.sum(pc.less(schedule["replicate"], replicates)).as_py() or 0)
    users = pc.and_(
        pc.equal(transcripts["role"], "user"), pc.less(transcripts["replicate"], replicates)
    )
    return int(pc.sum(users).as_py() or 0)


@dataclass
class SessionReads:
    """The reads made before one session, column by column (one list entry per read)."""

    read_ms: list[float] = field(default_factory=list)
    round_trip_ms: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    metered: list[int] = field(default_factory=list)
    reported: list[int | None] = field(default_factory=list)  # None: the backend did not know
    errors: list[str | None] = field(default_factory=list)
    ttft_ms: float | None = None
    """The reader model's time to first token after the session-start read (None: modelled)."""
    unmetered_calls: int = 0
    """Model calls seen going around the meter during the reads (the store's row adds them)."""

    def add(
        self,
        read_ms: float,
        round_trip_ms: float,
        tokens: int,
        metered: int,
        reported: int | None,
        error: str | None,
    ) -> None:
        """Record one read."""
        self.read_ms.append(read_ms)
        self.round_trip_ms.append(round_trip_ms)
        self.tokens.append(tokens)
        self.metered.append(metered)
        self.reported.append(reported)
        self.errors.append(error or None)

    def columns(self) -> dict[str, Any]:
        """The session's values of :data:`SESSION_READ_COLUMNS`."""
        return {
            "session_reads": len(self.read_ms),
            "session_read_ms": self.read_ms,
            "session_read_round_trip_ms": self.round_trip_ms,
            "session_read_tokens": self.tokens,
            "session_metered_read_tokens": self.metered,
            "session_reported_read_tokens": self.reported,
            "session_read_errors": self.errors,
            "session_start_ttft_ms": self.ttft_ms,
        }
