"""Built-in reference memory backends and the backend registry.

Six deterministic backends, no LLM and no network, each working on message text alone:
``amnesiac``, ``full_context``, ``reference_compressor``, ``bm25``, ``fact_store`` and
``temporal_graph``. Importing this package registers them; ``load_backend`` builds one by name
or any other backend by ``package.module:ClassName``.
"""

from drift_pipeline.memory.backends._registry import (
    backend_names,
    get_backend_factory,
    load_backend,
    register_backend,
)
from drift_pipeline.memory.backends.amnesiac import AmnesiacBackend
from drift_pipeline.memory.backends.bm25 import BM25Backend
from drift_pipeline.memory.backends.fact_store import FactStoreBackend
from drift_pipeline.memory.backends.full_context import FullContextBackend
from drift_pipeline.memory.backends.reference_compressor import (
    SUMMARY_CAP_TOKENS,
    ReferenceCompressor,
)
from drift_pipeline.memory.backends.temporal_graph import SUPERSEDED_MARKER, TemporalGraphBackend

__all__ = [
    "SUMMARY_CAP_TOKENS",
    "SUPERSEDED_MARKER",
    "AmnesiacBackend",
    "BM25Backend",
    "FactStoreBackend",
    "FullContextBackend",
    "ReferenceCompressor",
    "TemporalGraphBackend",
    "backend_names",
    "get_backend_factory",
    "load_backend",
    "register_backend",
]
