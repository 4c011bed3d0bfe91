"""The built-in backends' registrations: each class by import path, with its needs and defaults.

Nothing here imports a backend module: a registration names its class by ``module:Class``, so a
backend's code (and its libraries) load only when it is built or its class is asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._needs import BackendNeeds, LLMAccess, Package
from ._registry import register_backend

if TYPE_CHECKING:
    from drift_pipeline.sources import WorldSource

__all__ = ["COMPRESSOR_MODEL_ENV", "MEM0_MODEL_ENV"]

COMPRESSOR_MODEL_ENV = "DRIFT_COMPRESSOR_MODEL"
"""Optional: the reference compressor's model, when it is not ``DRIFT_LLM_MODEL``."""

_PACKAGE = "drift_pipeline.memory.backends"

_COMPRESSOR_LLM = BackendNeeds(
    llm=LLMAccess(purpose="summariser llm", model_variables=(COMPRESSOR_MODEL_ENV,)),
    cache=True,
)


def reference_compressor_needs(options: Mapping[str, Any]) -> BackendNeeds:
    """The compressor calls a model (and keeps a completion cache) only with ``summariser: llm``.

    Args:
        options: Its constructor options.
    """
    return _COMPRESSOR_LLM if options.get("summariser") == "llm" else BackendNeeds()


def full_context_defaults(source: WorldSource) -> dict[str, Any]:
    """``budget_tokens`` defaults to the smallest declared assistant context window.

    So stuffing the context visibly breaks once a trajectory outgrows what the asking agent
    could hold.

    Args:
        source: The world source it runs on.
    """
    windows = [
        entity.context_window
        for entity in source.entities
        if entity.entity_type == "assistant_agent" and entity.context_window is not None
    ]
    return {"budget_tokens": min(windows)} if windows else {}


# Every built-in that keeps anything is built through the scoping layer (``scoped=True``): a
# memory per entity, holding the sessions that entity attended, so none leaks one entity's
# sessions to another whatever its own scope rules are.
register_backend("amnesiac", f"{_PACKAGE}.amnesiac:AmnesiacBackend", default_arm=True)
register_backend("bm25", f"{_PACKAGE}.bm25:BM25Backend", default_arm=True, scoped=True)
register_backend(
    "fact_store", f"{_PACKAGE}.fact_store:FactStoreBackend", default_arm=True, scoped=True
)
register_backend(
    "full_context",
    f"{_PACKAGE}.full_context:FullContextBackend",
    default_arm=True,
    defaults=full_context_defaults,
    scoped=True,
)
register_backend(
    "reference_compressor",
    f"{_PACKAGE}.reference_compressor:ReferenceCompressor",
    default_arm=True,
    needs=reference_compressor_needs,
    scoped=True,
)
register_backend(
    "temporal_graph",
    f"{_PACKAGE}.temporal_graph:TemporalGraphBackend",
    default_arm=True,
    scoped=True,
)
# A floor, run by default and ranked with the references: every dated first-person user sentence.
register_backend(
    "sentence_log", f"{_PACKAGE}.sentence_log:SentenceLogBackend", default_arm=True, scoped=True
)

# Sanity arms: trivial strategies the metrics must rank low (never default arms).
register_backend("recency_buffer", f"{_PACKAGE}.sanity:RecencyBufferBackend", scoped=True)
register_backend("tagged_buffer", f"{_PACKAGE}.sanity:TaggedBufferBackend", scoped=True)
register_backend("keyword_lines", f"{_PACKAGE}.sanity:KeywordLinesBackend", scoped=True)
register_backend("session_dates", f"{_PACKAGE}.sanity:SessionDatesBackend", scoped=True)
register_backend("exam_only", f"{_PACKAGE}.sanity:ExamOnlyBackend", scoped=True)
# One store for every entity: shows the Privacy Score catching a leak; never ranked.
register_backend("leaky_shared", f"{_PACKAGE}.leaky_shared:LeakySharedBackend", ranked=False)
# Any memory server over MCP (the `mcp` extra): options name the server and map the tools.
register_backend(
    "mcp",
    "drift_pipeline.adapters.mcp_backend:mcp_backend",
    needs="drift_pipeline.adapters.mcp_backend:mcp_needs",
)
# A BrainCore adapter under the gate (its ``adapter`` option names it); never a default arm.
register_backend("braincore", "drift_pipeline.braincore._backend:BrainCoreBackend")

# Adapters to memory services and libraries (optional extras): imported only when named in a
# run, never a default arm.
_ADAPTERS = "drift_pipeline.adapters"
_SCENARIO = f"{_ADAPTERS}._service:scenario_defaults"
for _name, _cls, _import, _env in (
    ("honcho", "HonchoMemory", "honcho", ("HONCHO_API_KEY", "HONCHO_URL")),
    ("zep", "ZepMemory", "zep_cloud", ("ZEP_API_KEY", "ZEP_URL")),
    ("letta", "LettaMemory", "letta_client", ("LETTA_API_KEY", "LETTA_BASE_URL")),
):
    register_backend(
        _name,
        f"{_ADAPTERS}.{_name}:{_cls}",
        needs=BackendNeeds(
            network=True,
            packages=(Package(_import, f"drift-pipeline[{_name}]"),),
            env=_env,
        ),
        defaults=_SCENARIO,
    )

MEM0_MODEL_ENV = "DRIFT_MEM0_MODEL"
"""Optional: the model Mem0 extracts facts with (``infer: true``), when not ``DRIFT_LLM_MODEL``."""

_MEM0 = (Package("mem0", "drift-pipeline[mem0]"),)
_MEM0_RAW = BackendNeeds(packages=_MEM0)
_MEM0_INFER = BackendNeeds(
    llm=LLMAccess(purpose="infer llm", model_variables=(MEM0_MODEL_ENV,)),
    cache=True,
    packages=_MEM0,
)


def mem0_needs(options: Mapping[str, Any]) -> BackendNeeds:
    """Mem0 needs its SDK; with ``infer: true`` also a model (and a completion cache).

    Args:
        options: Its constructor options.
    """
    return _MEM0_INFER if options.get("infer") else _MEM0_RAW


register_backend("mem0", f"{_ADAPTERS}.mem0:Mem0Backend", needs=mem0_needs)
