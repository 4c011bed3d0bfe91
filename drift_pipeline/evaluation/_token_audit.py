"""What a cell could measure of its backend's costs: metered against reported tokens, storage.

Two honesty checks every view shows beside the figures:

- **LLM tokens.** The harness meters the model calls a backend makes through the endpoint it is
  given, and charges those (``write_tokens`` and ``llm_read_tokens`` of the cell's tables); the
  backend's own ``token_counts()`` is kept beside them (``reported_*`` columns). A
  :class:`TokenAudit` compares the two: a gap of more than :data:`GAP_SHOWN` is shown on the
  arm's row. A cell in which nothing went through the meter while the backend reports tokens is
  charged its report, and its figures say ``self-reported``: a system that calls its model
  around the meter cannot be checked, only believed.
- **Storage.** Storage tokens and Selectivity are read from the memory itself (``snapshot()``).
  A backend without one has them reported as not measured, with :data:`NO_SNAPSHOT` as the
  reason, never as zero. So that hiding the memory never pays, its token cost counts every
  transcript as stored and DRIFT-C counts its Selectivity at chance.
- **Snapshot honesty.** A snapshot is taken at its word only while what the backend retrieves
  is in it: a retrieved line the checkpoint's snapshot did not account for (the loop records
  it, see ``drift_pipeline.memory._honesty``) marks the cell's storage
  :data:`UNDER_REPORTED`, and its storage figures and Selectivity are then treated exactly as
  those of a backend without a snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "GAP_SHOWN",
    "NO_SNAPSHOT",
    "SNAPSHOT_METRICS",
    "UNDER_REPORTED",
    "TokenAudit",
    "combined_audit",
    "storage_measured",
    "storage_trusted",
    "token_audit",
    "unreported_line",
    "unreported_reason",
]

GAP_SHOWN: Final = 0.05
"""A backend's own token report further than this share from the metered tokens is shown."""

SNAPSHOT_METRICS: Final = (
    "selectivity",
    "noise_tnr",
    "signal_fnr",
    "soft_store_rate",
    "storage_per_session",
    "storage_delta_per_session",
)
"""The figures that need the memory's ``snapshot()``."""

NO_SNAPSHOT: Final = (
    "the backend has no snapshot(), so what it keeps cannot be read or counted; "
    "implement snapshot() to earn these figures"
)
"""Why a backend without ``snapshot()`` has no :data:`SNAPSHOT_METRICS`."""

UNDER_REPORTED: Final = "storage under-reported"
"""How a cell whose retrieves returned text absent from its snapshot is marked."""

SELF_REPORTED: Final = "self-reported"
METERED: Final = "metered"


@dataclass(frozen=True)
class TokenAudit:
    """A cell's (or an arm's) LLM tokens, as metered and as the backend reported them.

    Attributes:
        metered: Tokens of the calls that went through the harness's meter.
        reported: Tokens the backend's ``token_counts()`` reported over the same calls.
        sessions: Sessions stored (replicates × sessions), for per-session figures.
    """

    metered: int
    reported: int
    sessions: int

    @property
    def source(self) -> str:
        """``metered``, or ``self-reported`` when nothing was metered but tokens were reported."""
        return SELF_REPORTED if self.metered == 0 and self.reported > 0 else METERED

    @property
    def gap(self) -> float | None:
        """(reported − metered) / metered; ``None`` when nothing was metered."""
        return (self.reported - self.metered) / self.metered if self.metered else None

    @property
    def gap_shown(self) -> bool:
        """Whether the report is further than :data:`GAP_SHOWN` from the metered tokens."""
        gap = self.gap
        return gap is not None and abs(gap) > GAP_SHOWN

    def __add__(self, other: TokenAudit) -> TokenAudit:
        return TokenAudit(
            self.metered + other.metered,
            self.reported + other.reported,
            self.sessions + other.sessions,
        )

    def per_session(self, tokens: int) -> float:
        """``tokens`` per stored session."""
        return tokens / self.sessions if self.sessions else 0.0

    def note(self, arm: str) -> str | None:
        """One line for the views, when there is something to say about this arm's tokens."""
        if self.source == SELF_REPORTED:
            return (
                f"{arm}: LLM tokens self-reported ({self.per_session(self.reported):.0f} per "
                "session): none of its model calls went through the harness's meter"
            )
        if self.gap_shown:
            assert self.gap is not None
            return (
                f"{arm}: metered {self.per_session(self.metered):.0f} LLM tokens per session, "
                f"its token_counts() reported {self.per_session(self.reported):.0f} "
                f"({self.gap:+.0%}); the metered figure is charged"
            )
        return None

    def to_json(self) -> dict[str, object]:
        """The figures for the JSON summary."""
        return {
            "metered": self.metered,
            "reported": self.reported,
            "source": self.source,
            "gap": self.gap,
            "gap_shown": self.gap_shown,
        }


def _sum(table: pa.Table, column: str) -> int | None:
    if column not in table.column_names:
        return None
    return int(pc.sum(table.column(column)).as_py() or 0)


def _list_sum(table: pa.Table, column: str) -> int:
    if column not in table.column_names:
        return 0
    return int(pc.sum(pc.list_flatten(table.column(column))).as_py() or 0)


def token_audit(snapshots: pa.Table, retrievals: pa.Table) -> TokenAudit | None:
    """A cell's audit from its tables; ``None`` for tables written before metering."""
    parts = [
        _sum(snapshots, "metered_write_tokens"),
        _sum(retrievals, "metered_read_tokens"),
        _sum(snapshots, "reported_write_tokens"),
        _sum(retrievals, "reported_read_tokens"),
    ]
    if any(part is None for part in parts):
        return None
    write, read, reported_write, reported_read = (int(part or 0) for part in parts)
    # The agent's reads before each session spend tokens too (list columns, one per read).
    read += _list_sum(snapshots, "session_metered_read_tokens")
    reported_read += _list_sum(snapshots, "session_reported_read_tokens")
    return TokenAudit(write + read, reported_write + reported_read, snapshots.num_rows)


def storage_measured(snapshots: pa.Table) -> bool:
    """Whether the cell's storage was measured: no store row lacks its storage count."""
    if "storage_tokens" not in snapshots.column_names:
        return True
    return int(snapshots.column("storage_tokens").null_count) == 0


def unreported_line(retrievals: pa.Table) -> str | None:
    """The first retrieved line a cell's snapshots did not account for; ``None`` when none.

    Tables written before the check have no such column: nothing was found there.
    """
    if "unreported" not in retrievals.column_names:
        return None
    column = retrievals.column("unreported")
    if column.null_count == len(column):
        return None
    return str(pc.drop_null(column)[0].as_py())


def unreported_reason(line: str) -> str:
    """Why a cell's storage figures and Selectivity are not measured once it under-reported."""
    return (
        f"{UNDER_REPORTED}: retrieve() returned text its snapshot() did not hold "
        f"({line!r}), so what it keeps cannot be read or counted"
    )


def storage_trusted(snapshots: pa.Table, retrievals: pa.Table) -> bool:
    """Whether a cell's storage counts and Selectivity stand: measured, and not under-reported."""
    return storage_measured(snapshots) and unreported_line(retrievals) is None


def combined_audit(audits: Iterable[TokenAudit | None]) -> TokenAudit | None:
    """The audits of an arm's cells added up (``None`` when no cell has one)."""
    present = [audit for audit in audits if audit is not None]
    if not present:
        return None
    total = present[0]
    for audit in present[1:]:
        total = total + audit
    return total
