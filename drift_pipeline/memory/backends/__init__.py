"""Built-in reference memory backends and the backend registry.

Six deterministic backends, no LLM and no network, each working on message text alone:
``amnesiac``, ``full_context``, ``reference_compressor``, ``bm25``, ``fact_store`` and
``temporal_graph``. They are registered by import path, so importing this package loads none of
them; a backend's module is imported when it is built or its class is first asked for (the class
names below resolve on first access). ``load_backend`` builds one by name, an installed adapter
by its ``drift_pipeline.backends`` entry point, or any other backend by
``package.module:ClassName``. The adapters to memory services (``mem0``) are registered here
too, by import path into ``drift_pipeline.adapters``; :func:`built_in` tells the package's own
backends from them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Importing _builtins registers the six built-ins (by import path: nothing heavy loads).
from ._builtins import COMPRESSOR_MODEL_ENV, MEM0_MODEL_ENV
from ._needs import BackendNeeds, LLMAccess, Package
from ._registry import (
    ENTRY_POINT_GROUP,
    BackendRegistration,
    backend_names,
    backend_needs,
    backend_registration,
    built_in,
    default_backend_names,
    get_backend_factory,
    load_backend,
    register_backend,
    resolve_backend_options,
)

if TYPE_CHECKING:
    from .amnesiac import AmnesiacBackend
    from .bm25 import BM25Backend
    from .fact_store import FactStoreBackend
    from .full_context import FullContextBackend
    from .reference_compressor import SUMMARY_CAP_TOKENS, ReferenceCompressor
    from .sentence_log import SentenceLogBackend
    from .temporal_graph import SUPERSEDED_MARKER, TemporalGraphBackend

_LAZY = {
    "AmnesiacBackend": "amnesiac",
    "BM25Backend": "bm25",
    "FactStoreBackend": "fact_store",
    "FullContextBackend": "full_context",
    "ReferenceCompressor": "reference_compressor",
    "SUMMARY_CAP_TOKENS": "reference_compressor",
    "SUPERSEDED_MARKER": "temporal_graph",
    "SentenceLogBackend": "sentence_log",
    "TemporalGraphBackend": "temporal_graph",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "COMPRESSOR_MODEL_ENV",
    "ENTRY_POINT_GROUP",
    "MEM0_MODEL_ENV",
    "SUMMARY_CAP_TOKENS",
    "SUPERSEDED_MARKER",
    "AmnesiacBackend",
    "BM25Backend",
    "BackendNeeds",
    "BackendRegistration",
    "FactStoreBackend",
    "FullContextBackend",
    "LLMAccess",
    "Package",
    "ReferenceCompressor",
    "SentenceLogBackend",
    "TemporalGraphBackend",
    "backend_names",
    "backend_needs",
    "backend_registration",
    "built_in",
    "default_backend_names",
    "get_backend_factory",
    "load_backend",
    "register_backend",
    "resolve_backend_options",
]
