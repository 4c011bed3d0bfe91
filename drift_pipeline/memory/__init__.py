"""Phase 02, the memory loop: the backend protocol, the budget gate, isolated workers.

Public API: :class:`MemoryBackend`, :class:`Message`, :class:`TokenCounts` (what a memory system
implements; :class:`HasSnapshot` and :class:`CountsOwnStorage` optionally), :class:`Gate` and
:class:`Arm` (what is being compared; a gate variant is a :class:`GateStrategy` registered with
:func:`register_gate`), :func:`run_cell` (one arm over one world; :class:`LoopTiming` is what it
measured of itself); :func:`pack_backend` readies a backend object for its workers
(:class:`BackendInstance`); a cell's faults by call kind are a :class:`FaultSummary`;
:func:`check_isolation` starts one sandboxed worker before a run (:class:`IsolationError` when
it cannot). The agent reads memory before every session (:data:`READ_POLICIES`: at its start or
before every user turn), a reader model timing its first token where the run has one
(:class:`FirstToken`); a backend declares where it runs (:data:`DEPLOYMENTS`) with a
``deployment`` attribute, and model calls the harness's meter cannot see with
:data:`MODELS_OUTSIDE_METER`. :func:`token_source` is the rule that says which LLM tokens a
cell is charged (:data:`TOKEN_SOURCES`: metered, self-reported or unknown).
:func:`check_backend` is the conformance and health check an arm passes before it is scored
(:class:`ConformanceReport`).
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._protocol import (
    MODELS_OUTSIDE_METER,
    STORE_ENTITY_KEYWORD,
    CountsOwnStorage,
    DescribesService,
    HasSnapshot,
    IngestsAsynchronously,
    MemoryBackend,
    Message,
    RecordsRetries,
    TokenCounts,
)

if TYPE_CHECKING:
    from ._arms import Arm, Gate
    from ._charging import REPORT_TOLERANCE, TOKEN_SOURCES, token_source
    from ._client import BackendWorker, CallResult, IsolationError, check_isolation
    from ._conformance import (
        CheckScript,
        ConformanceReport,
        check_backend,
        check_backend_async,
        check_script,
    )
    from ._deployment import DEPLOYMENTS
    from ._fault_summary import FaultedCall, FaultSummary
    from ._first_token import FirstToken
    from ._gates import (
        GATE_ENTRY_POINT_GROUP,
        GateRegistration,
        GateStrategy,
        ReaderBuffer,
        RecentTranscripts,
        gate_kinds,
        register_gate,
    )
    from ._honesty import slot_values
    from ._instance import BackendInstance, pack_backend
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
    from ._secrets import recorded_options
    from ._session_reads import READ_POLICIES
    from ._transcripts import transcript_tokens

# Everything but the protocol is loaded on first use: every backend worker and its sandbox
# launcher import this package, and neither needs the loop (pyarrow, storage, ~0.4 s of
# imports), the worker client (asyncio), the arms or the gate registry (package metadata).
_LAZY = {
    "Arm": "_arms",
    "Gate": "_arms",
    "BackendWorker": "_client",
    "CallResult": "_client",
    "IsolationError": "_client",
    "check_isolation": "_client",
    "REPORT_TOLERANCE": "_charging",
    "TOKEN_SOURCES": "_charging",
    "token_source": "_charging",
    "CheckScript": "_conformance",
    "ConformanceReport": "_conformance",
    "check_script": "_conformance",
    "check_backend": "_conformance",
    "check_backend_async": "_conformance",
    "DEPLOYMENTS": "_deployment",
    "FaultedCall": "_fault_summary",
    "FaultSummary": "_fault_summary",
    "FirstToken": "_first_token",
    "READ_POLICIES": "_session_reads",
    "recorded_options": "_secrets",
    "GATE_ENTRY_POINT_GROUP": "_gates",
    "GateRegistration": "_gates",
    "GateStrategy": "_gates",
    "ReaderBuffer": "_gates",
    "RecentTranscripts": "_gates",
    "gate_kinds": "_gates",
    "register_gate": "_gates",
    "BackendInstance": "_instance",
    "pack_backend": "_instance",
    "MAX_FAULT_RATE": "_loop",
    "BackendStartError": "_loop",
    "CellRun": "_loop",
    "FaultShare": "_loop",
    "LoopConfig": "_loop",
    "LoopTiming": "_loop",
    "call_counts": "_loop",
    "run_cell": "_loop",
    "slot_values": "_honesty",
    "transcript_tokens": "_transcripts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # resolved once
    return value


__all__ = [
    "DEPLOYMENTS",
    "GATE_ENTRY_POINT_GROUP",
    "MAX_FAULT_RATE",
    "MODELS_OUTSIDE_METER",
    "READ_POLICIES",
    "REPORT_TOLERANCE",
    "STORE_ENTITY_KEYWORD",
    "TOKEN_SOURCES",
    "Arm",
    "BackendInstance",
    "BackendStartError",
    "BackendWorker",
    "CallResult",
    "CellRun",
    "CheckScript",
    "ConformanceReport",
    "CountsOwnStorage",
    "DescribesService",
    "FaultShare",
    "FaultSummary",
    "FaultedCall",
    "FirstToken",
    "Gate",
    "GateRegistration",
    "GateStrategy",
    "HasSnapshot",
    "IngestsAsynchronously",
    "IsolationError",
    "LoopConfig",
    "LoopTiming",
    "MemoryBackend",
    "Message",
    "ReaderBuffer",
    "RecentTranscripts",
    "RecordsRetries",
    "TokenCounts",
    "call_counts",
    "check_backend",
    "check_backend_async",
    "check_isolation",
    "check_script",
    "gate_kinds",
    "pack_backend",
    "recorded_options",
    "register_gate",
    "run_cell",
    "slot_values",
    "token_source",
    "transcript_tokens",
]
