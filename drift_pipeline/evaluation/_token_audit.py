"""What a cell could measure of its backend's costs: metered against reported tokens, storage.

Two honesty checks every view shows beside the figures:

- **LLM tokens.** The harness meters the model calls a backend makes through the endpoint it is
  given, and charges those (``write_tokens`` and ``llm_read_tokens`` of the cell's tables); the
  backend's own ``token_counts()`` is kept beside them (``reported_*`` columns). A
  :class:`TokenAudit` compares the two: a gap of more than :data:`GAP_SHOWN` is shown on the
  arm's row. A backend that reports more than that above the meter's count says it spent
  tokens the meter did not see: it is charged its report, and its figures say
  ``self-reported`` (believed, never checked). A backend whose models run where the meter
  cannot see them (declared ``models_outside_meter``, or seen calling another model endpoint)
  and whose report does not cover them has an **unknown** spend: its token cost is known only
  in part, so the cost figures are bounds (:data:`COST_BOUNDS`: the token cost at least what is
  known, MVOT and DRIFT-C at most what they would be on it), TES and DRIFT-E are not measured
  (:data:`UNKNOWN_MODEL_TOKENS`), and the arm is not ranked against arms whose cost is known.
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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.memory import REPORT_TOLERANCE, TOKEN_SOURCES, token_source

__all__ = [
    "COST_BOUNDS",
    "COST_NOT_MEASURED",
    "GAP_SHOWN",
    "METERED",
    "NO_SNAPSHOT",
    "SELF_REPORTED",
    "SNAPSHOT_METRICS",
    "UNDER_REPORTED",
    "UNKNOWN",
    "UNKNOWN_MODEL_TOKENS",
    "Bound",
    "TokenAudit",
    "combined_audit",
    "storage_measured",
    "storage_trusted",
    "token_audit",
    "unreported_line",
    "unreported_reason",
]

GAP_SHOWN: Final = REPORT_TOLERANCE
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

METERED, SELF_REPORTED, UNKNOWN = TOKEN_SOURCES

Bound = Literal["lower", "upper"]
"""Which side of the true figure a figure computed on a partly known cost lies: ``lower`` (the
true figure is at least this) or ``upper`` (at most this)."""

COST_BOUNDS: Final[Mapping[str, Bound]] = {
    "mvot": "upper",
    "drift_c": "upper",
    "drift_c_lift": "upper",
    "write_tokens_per_session": "lower",
    "read_llm_tokens_per_retrieve": "lower",
    "token_cost_per_session": "lower",
}
"""The figures of a cell whose model spend is unknown that are bounds, and which side they bound.

The token cost (and its LLM parts) counts only what is known, so the true cost is at least it.
MVOT's cost factor min(1, TC_ref / TC_mem) on that cost is at least the true factor; MVOT is
given per replicate as the most it can be for any unknown spend (a memory that does worse than
the amnesiac: 0), and DRIFT-C (MVOT clipped to [0, 1]) and its lift follow from it."""

COST_NOT_MEASURED: Final = ("tes", "drift_e")
"""Figures a cell whose model spend is unknown does not have: TES divides by the whole cost, so
a part of it can make TES any size (and DRIFT-E with it)."""

UNKNOWN_MODEL_TOKENS: Final = (
    "its models run where the harness's meter cannot see them and it reports none of their "
    "tokens, so its token cost is known only in part; report them from token_counts() to earn "
    "these figures"
)
"""Why a cell whose model spend is unknown has no :data:`COST_NOT_MEASURED` figures."""


@dataclass(frozen=True)
class TokenAudit:
    """A cell's (or an arm's) LLM tokens, as metered and as the backend reported them.

    Attributes:
        metered: Tokens of the calls that went through the harness's meter.
        reported: Tokens the backend's ``token_counts()`` reported over the same calls;
            ``None`` when it did not know for some call.
        sessions: Sessions stored (replicates × sessions), for per-session figures.
        models_outside_meter: The backend declares model calls the meter cannot see.
        unmetered_calls: Model calls its worker saw it make to an endpoint other than the meter.
        source: Where the charged tokens come from (``metered``, ``self-reported`` or
            ``unknown``); worked out from the figures above unless given (an arm's audit keeps
            the least trustworthy source of its cells).
    """

    metered: int
    reported: int | None
    sessions: int
    models_outside_meter: bool = False
    unmetered_calls: int = 0
    source: str = field(default="")

    def __post_init__(self) -> None:
        if not self.source:
            unseen = self.models_outside_meter or self.unmetered_calls > 0
            object.__setattr__(self, "source", token_source(self.metered, self.reported, unseen))

    @property
    def cost_known(self) -> bool:
        """Whether the charged tokens are the whole model spend (metered or self-reported)."""
        return self.source != UNKNOWN

    @property
    def gap(self) -> float | None:
        """(reported − metered) / metered; ``None`` when nothing was metered or reported."""
        if not self.metered or self.reported is None:
            return None
        return (self.reported - self.metered) / self.metered

    @property
    def gap_shown(self) -> bool:
        """Whether the report is further than :data:`GAP_SHOWN` from the metered tokens."""
        gap = self.gap
        return gap is not None and abs(gap) > GAP_SHOWN

    @property
    def charged(self) -> int:
        """The tokens charged: the report when self-reported, else the metered ones."""
        if self.source == SELF_REPORTED and self.reported is not None:
            return self.reported
        return self.metered

    def __add__(self, other: TokenAudit) -> TokenAudit:
        worst = max(TOKEN_SOURCES.index(self.source), TOKEN_SOURCES.index(other.source))
        return TokenAudit(
            self.metered + other.metered,
            None
            if self.reported is None or other.reported is None
            else self.reported + other.reported,
            self.sessions + other.sessions,
            self.models_outside_meter or other.models_outside_meter,
            self.unmetered_calls + other.unmetered_calls,
            TOKEN_SOURCES[worst],
        )

    def per_session(self, tokens: int) -> float:
        """``tokens`` per stored session."""
        return tokens / self.sessions if self.sessions else 0.0

    def mark(self) -> str:
        """The short mark an arm's row carries, or ``""`` when there is nothing to say."""
        if self.source == UNKNOWN:
            return "model tokens unknown; not ranked"
        if self.source == SELF_REPORTED:
            return "tokens self-reported"
        if self.gap_shown and self.gap is not None:
            return f"token report gap {self.gap:+.0%}"
        return ""

    def why_unknown(self) -> str:
        """Why the spend is unknown, in a few words (for :meth:`note` and the run's output)."""
        seen = (
            f"its worker called a model endpoint other than the meter {self.unmetered_calls} "
            f"time{'s' if self.unmetered_calls != 1 else ''}"
            if self.unmetered_calls
            else ""
        )
        declared = (
            "it declares models the harness's meter cannot see" if self.models_outside_meter else ""
        )
        reason = " and ".join(part for part in (declared, seen) if part) or "its spend is unseen"
        if self.reported is None:
            return f"{reason}, and reports no token counts"
        return (
            f"{reason}, and its token_counts() report ({self.per_session(self.reported):.0f} "
            "per session) adds nothing to what the meter counted"
        )

    def note(self, arm: str, token_cost: float | None = None) -> str | None:
        """One line for the views, when there is something to say about this arm's tokens.

        Args:
            arm: The arm's name.
            token_cost: Its token cost per session (TC), said as a lower bound where the spend
                is unknown.
        """
        if self.source == UNKNOWN:
            cost = (
                f"its token cost is at least {token_cost:.0f} per session"
                if token_cost is not None
                else "its token cost is at least what is known"
            )
            return (
                f"{arm}: model tokens unknown: {self.why_unknown()}. Only "
                f"{self.per_session(self.metered):.0f} LLM tokens per session are known "
                f"(metered), so {cost}, MVOT and DRIFT-C are at most the figures shown, TES "
                "and DRIFT-E are not measured, and it is not ranked against arms whose cost "
                "is known"
            )
        if self.source == SELF_REPORTED:
            assert self.reported is not None
            if not self.metered:
                return (
                    f"{arm}: LLM tokens self-reported ({self.per_session(self.reported):.0f} per "
                    "session): none of its model calls went through the harness's meter"
                )
            assert self.gap is not None
            return (
                f"{arm}: LLM tokens self-reported: its token_counts() reported "
                f"{self.per_session(self.reported):.0f} per session, the meter counted "
                f"{self.per_session(self.metered):.0f} ({self.gap:+.0%}); the larger report is "
                "charged (tokens the meter did not see)"
            )
        if self.gap_shown:
            assert self.gap is not None and self.reported is not None
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
            "charged": self.charged,
            "cost_known": self.cost_known,
            "models_outside_meter": self.models_outside_meter,
            "unmetered_calls": self.unmetered_calls,
        }


def _sum(table: pa.Table, column: str) -> int | None:
    """The column's total; ``None`` when the table has no such column."""
    if column not in table.column_names:
        return None
    return int(pc.sum(table.column(column)).as_py() or 0)


def _report(table: pa.Table, column: str, listed: bool = False) -> int | None:
    """A report column's total; ``None`` when some call's report was unknown (a null)."""
    values = table.column(column)
    if listed:
        values = pc.list_flatten(values)
    if values.null_count:
        return None
    return int(pc.sum(values).as_py() or 0)


def token_audit(snapshots: pa.Table, retrievals: pa.Table) -> TokenAudit | None:
    """A cell's audit from its tables; ``None`` for tables written before metering."""
    needed = (
        (snapshots, "metered_write_tokens"),
        (retrievals, "metered_read_tokens"),
        (snapshots, "reported_write_tokens"),
        (retrievals, "reported_read_tokens"),
    )
    if any(column not in table.column_names for table, column in needed):
        return None
    metered = int(_sum(snapshots, "metered_write_tokens") or 0)
    metered += int(_sum(retrievals, "metered_read_tokens") or 0)
    reports = [
        _report(snapshots, "reported_write_tokens"),
        _report(retrievals, "reported_read_tokens"),
    ]
    # The agent's reads before each session spend tokens too (list columns, one per read).
    if "session_metered_read_tokens" in snapshots.column_names:
        metered += int(
            pc.sum(pc.list_flatten(snapshots["session_metered_read_tokens"])).as_py() or 0
        )
    if "session_reported_read_tokens" in snapshots.column_names:
        reports.append(_report(snapshots, "session_reported_read_tokens", listed=True))
    reported = None if any(r is None for r in reports) else sum(int(r or 0) for r in reports)
    declared = "models_outside_meter" in snapshots.column_names and bool(
        pc.any(snapshots["models_outside_meter"]).as_py()
    )
    seen = int(_sum(snapshots, "unmetered_calls") or 0) + int(
        _sum(retrievals, "unmetered_calls") or 0
    )
    return TokenAudit(metered, reported, snapshots.num_rows, declared, seen)


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
