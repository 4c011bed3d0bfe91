"""When a replicate stops making calls of one kind: the rule the harness and its worker share.

Faults are counted per replicate and per kind of backend call (``store``, ``retrieve``; the
agent's reads before a session are retrieves). A kind is cut off in a replicate, its remaining
calls there recorded as skipped instead of being made, after ``limit`` faults of that kind in a
row, or once its faults alone exceed the cell's fault budget (from then on the cell is invalid
whatever its other calls do). A search that raises on every question therefore never costs a
store, and one replicate's faults never skip another's calls. Within a replicate calls are made
one after another, so which calls are skipped depends only on which calls faulted before them.

The harness holds the rule of each replicate; its worker gets a copy at every (re)start and
applies it to the calls it has already been sent, so a cut-off kind's calls queued in a run of
sessions are answered as skipped at once instead of being made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

STORE: Final = "store"
RETRIEVE: Final = "retrieve"
KINDS: Final = (STORE, RETRIEVE)
"""The kinds of backend call counted apart."""

OP_KIND: Final = {"store": STORE, "retrieve": RETRIEVE}
"""The kind of each worker request that is a backend call."""


@dataclass
class SkipRule:
    """One replicate's faults by call kind, and the kinds whose calls are no longer made.

    Attributes:
        limit: Faults of one kind in a row after which that kind is cut off (0: never).
        budget: Faulted calls the whole cell may have and stay valid; a kind whose faults in
            this replicate exceed it is cut off.
        in_a_row: Faults of each kind since that kind last answered.
        faulted: Faulted calls of each kind so far (skipped ones included).
        skipping: For each cut-off kind, the error its remaining calls record.
    """

    limit: int = 0
    budget: float = float("inf")
    in_a_row: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    faulted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    skipping: dict[str, str] = field(default_factory=dict)

    def reason(self, kind: str) -> str | None:
        """The error a call of ``kind`` records instead of being made, or ``None``."""
        return self.skipping.get(kind)

    @property
    def stopped(self) -> bool:
        """Every kind is cut off: no call of this replicate will be made any more."""
        return len(self.skipping) == len(KINDS)

    def count(self, kind: str, ok: bool) -> None:
        """Count one call of ``kind`` that answered (``ok``) or faulted (or was skipped)."""
        if ok:
            self.in_a_row[kind] = 0
            return
        self.in_a_row[kind] += 1
        self.faulted[kind] += 1
        if kind in self.skipping:
            return
        if self.limit and self.in_a_row[kind] >= self.limit:
            self.skipping[kind] = (
                f"skipped: {self.limit} consecutive {kind} faults in this replicate before "
                "this call"
            )
        elif self.faulted[kind] > self.budget:
            self.skipping[kind] = (
                f"skipped: {self.faulted[kind]} faulted {kind} calls in this replicate already "
                "put the cell past its fault-rate limit"
            )

    def state(self) -> dict[str, Any]:
        """The rule as JSON, for a worker's ``init``."""
        return {
            "limit": self.limit,
            "budget": None if self.budget == float("inf") else self.budget,
            "in_a_row": dict(self.in_a_row),
            "faulted": dict(self.faulted),
            "skipping": dict(self.skipping),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SkipRule:
        """The rule :meth:`state` described."""
        budget = state.get("budget")
        return cls(
            limit=int(state.get("limit") or 0),
            budget=float("inf") if budget is None else float(budget),
            in_a_row={kind: int(state["in_a_row"].get(kind, 0)) for kind in KINDS},
            faulted={kind: int(state["faulted"].get(kind, 0)) for kind in KINDS},
            skipping={str(k): str(v) for k, v in state["skipping"].items()},
        )
