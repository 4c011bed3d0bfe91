"""Phase 02, the memory loop: the backend protocol, the budget gate, isolated workers.

Public API: :class:`MemoryBackend`, :class:`Message`, :class:`TokenCounts` (what a memory
system implements), :class:`Gate` and :class:`Arm` (what is being compared), :func:`run_cell`
(one arm over one world).
"""

from ._arms import Arm, Gate
from ._client import BackendWorker, CallResult
from ._loop import CellRun, LoopConfig, run_cell
from ._protocol import MemoryBackend, Message, TokenCounts

__all__ = [
    "Arm",
    "BackendWorker",
    "CallResult",
    "CellRun",
    "Gate",
    "LoopConfig",
    "MemoryBackend",
    "Message",
    "TokenCounts",
    "run_cell",
]
