"""What faulted in one cell, in the form a person acts on: counts by call kind, the first error.

Every fault is a row's ``error`` in the cell's tables; this summary is what a run prints per
faulting arm and keeps in the cell's manifest: how many calls of each kind faulted (and of those
how many were skipped, never made), the first fault that was not a skip, and the first
exception raised in the backend's own code or a library it calls, with its ``file:line``.
"First" is in replicate order, then in the order a replicate made its calls, so the summary of
a deterministic backend is the same on every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

STORE: Final = "store"
SESSION_READ: Final = "read before a session"
PROBE: Final = "probe"
CALL_KINDS: Final = (STORE, SESSION_READ, PROBE)
"""The calls a cell makes: a session's store, the agent's read before it, a probe's retrieve."""


@dataclass(frozen=True)
class FaultedCall:
    """One faulted call: which, where in the cell, the error line and where it arose.

    Attributes:
        replicate: The replicate that made it.
        call: ``store SESSION``, ``retrieve before SESSION`` or ``retrieve PROBE``.
        error: The error line recorded for it.
        where: ``file:line`` of the exception in the backend's code, if it raised one.
    """

    replicate: int
    call: str
    error: str
    where: str | None = None

    def describe(self) -> str:
        """``replicate R, CALL: ERROR`` (the error line ends with its place, if it has one)."""
        return f"replicate {self.replicate}, {self.call}: {self.error}"


@dataclass
class FaultSummary:
    """A cell's (or one replicate's) faults by call kind, and its first errors.

    Attributes:
        faulted: Calls with an error, by kind (:data:`CALL_KINDS`), skipped ones included.
        skipped: Of those, the calls not made because their kind was cut off.
        first_error: The first fault that was not a skip.
        first_exception: The first fault raised as an exception in the backend's code.
        other: Faults that are no call (model calls the token meter refused), in order.
        retried: Retries an adapter made after a service refused (rate limits, server
            errors), by kind of the call they belong to; that call may still have answered.
    """

    faulted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CALL_KINDS, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CALL_KINDS, 0))
    first_error: FaultedCall | None = None
    first_exception: FaultedCall | None = None
    other: list[str] = field(default_factory=list)
    retried: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CALL_KINDS, 0))

    @property
    def total(self) -> int:
        """Faulted calls of every kind."""
        return sum(self.faulted.values())

    def add(
        self,
        kind: str,
        replicate: int,
        call: str,
        error: str,
        *,
        skipped: bool = False,
        where: str | None = None,
    ) -> None:
        """Count one faulted call of ``kind``, made in ``replicate``'s order."""
        self.faulted[kind] += 1
        if skipped:
            self.skipped[kind] += 1
            return
        faulted = FaultedCall(replicate, call, error, where)
        if self.first_error is None:
            self.first_error = faulted
        if where is not None and self.first_exception is None:
            self.first_exception = faulted

    @classmethod
    def merged(cls, parts: list[FaultSummary]) -> FaultSummary:
        """The summary of a cell from its replicates' summaries, given in replicate order."""
        total = cls()
        for part in parts:
            for kind in CALL_KINDS:
                total.faulted[kind] += part.faulted[kind]
                total.skipped[kind] += part.skipped[kind]
                total.retried[kind] += part.retried[kind]
            total.first_error = total.first_error or part.first_error
            total.first_exception = total.first_exception or part.first_exception
            total.other += part.other
        return total

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object (the cell manifest's ``fault_summary``)."""

        def call(faulted: FaultedCall | None) -> dict[str, Any] | None:
            if faulted is None:
                return None
            return {
                "replicate": faulted.replicate,
                "call": faulted.call,
                "error": faulted.error,
                "where": faulted.where,
            }

        return {
            "faulted": dict(self.faulted),
            "skipped": dict(self.skipped),
            "first_error": call(self.first_error),
            "first_exception": call(self.first_exception),
            "other": list(self.other),
            "retried": dict(self.retried),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> FaultSummary:
        """The summary :meth:`to_json` wrote (empty for a manifest written without one)."""
        if not data:
            return cls()

        def call(value: dict[str, Any] | None) -> FaultedCall | None:
            if not value:
                return None
            return FaultedCall(
                int(value["replicate"]), str(value["call"]), str(value["error"]), value["where"]
            )

        return cls(
            faulted={kind: int(data["faulted"].get(kind, 0)) for kind in CALL_KINDS},
            skipped={kind: int(data["skipped"].get(kind, 0)) for kind in CALL_KINDS},
            first_error=call(data.get("first_error")),
            first_exception=call(data.get("first_exception")),
            other=[str(line) for line in data.get("other", [])],
            retried={kind: int(data.get("retried", {}).get(kind, 0)) for kind in CALL_KINDS},
        )
