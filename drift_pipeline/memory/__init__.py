"""Phase 02, the memory loop: the backend protocol, the budget gate, isolated workers.

Public API: :class:`MemoryBackend`, :class:`Message`, :class:`TokenCounts` (what a memory
system implements; :class:`CountsOwnStorage` optionally), :class:`Gate` and :class:`Arm` (what
is being compared), :func:`run_cell` (one arm over one world; :class:`LoopTiming` is what it
measured of itself).
"""

from ._arms import Arm, Gate
from ._client import BackendWorker, CallResult
from ._loop import CellRun, LoopConfig, LoopTiming, run_cell
from ._protocol import CountsOwnStorage, MemoryBackend, Message, TokenCounts

__all__ = [
    "Arm",
    "BackendWorker",
    "CallResult",
    "CellRun",
    "CountsOwnStorage",
    "Gate",
    "LoopConfig",
    "LoopTiming",
    "MemoryBackend",
    "Message",
    "TokenCounts",
    "run_cell",
]
