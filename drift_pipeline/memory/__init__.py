"""Phase 02, the memory loop: the backend protocol, the budget gate, isolated workers.

Public API: :class:`MemoryBackend`, :class:`Message`, :class:`TokenCounts` (what a memory
system implements; :class:`CountsOwnStorage` optionally), :class:`Gate` and :class:`Arm` (what
is being compared; a gate variant is a :class:`GateStrategy` registered with
:func:`register_gate`), :func:`run_cell` (one arm over one world; :class:`LoopTiming` is what it
measured of itself); :func:`pack_backend` readies a backend object for its workers
(:class:`BackendInstance`); :func:`check_isolation` starts one sandboxed worker before a run
(:class:`IsolationError` when it cannot).
"""

from typing import TYPE_CHECKING, Any

from ._arms import Arm, Gate
from ._client import BackendWorker, CallResult, IsolationError, check_isolation
from ._gates import (
    GATE_ENTRY_POINT_GROUP,
    GateRegistration,
    GateStrategy,
    ReaderBuffer,
    RecentTranscripts,
    gate_kinds,
    register_gate,
)
from ._instance import BackendInstance, pack_backend
from ._protocol import CountsOwnStorage, MemoryBackend, Message, TokenCounts

if TYPE_CHECKING:
    from ._loop import (
        MAX_FAULT_RATE,
        BackendStartError,
        CellRun,
        FaultShare,
        LoopConfig,
        LoopTiming,
        call_counts,
        run_cell,
    )

# The loop (pyarrow, storage, ~0.4 s of imports) is loaded on first use: every backend worker
# and its sandbox launcher import this package, and neither needs it.
_LAZY = {
    "MAX_FAULT_RATE",
    "BackendStartError",
    "CellRun",
    "FaultShare",
    "LoopConfig",
    "LoopTiming",
    "call_counts",
    "run_cell",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _loop

        return getattr(_loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GATE_ENTRY_POINT_GROUP",
    "MAX_FAULT_RATE",
    "Arm",
    "BackendInstance",
    "BackendStartError",
    "BackendWorker",
    "CallResult",
    "CellRun",
    "CountsOwnStorage",
    "FaultShare",
    "Gate",
    "GateRegistration",
    "GateStrategy",
    "IsolationError",
    "LoopConfig",
    "LoopTiming",
    "MemoryBackend",
    "Message",
    "ReaderBuffer",
    "RecentTranscripts",
    "TokenCounts",
    "call_counts",
    "check_isolation",
    "gate_kinds",
    "pack_backend",
    "register_gate",
    "run_cell",
]
