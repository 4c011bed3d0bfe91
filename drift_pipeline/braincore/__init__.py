"""The BrainCore memory harness: its adapters, JSONL datasets, six metrics and evaluator.

A BrainCore adapter has ``ingest(raw_memories)``, ``retrieve(query, top_k) -> list[dict]`` and
``storage_bytes()``; a dataset is JSON lines of sessions with memories and queries. ``drift
braincore`` runs an adapter (or any DRIFT backend) over a dataset and writes ``exact_match``,
``semantic_placeholder_score``, ``temporal_order_score``, ``contradiction_resolution_score``,
``latency_ms`` and ``storage_bytes``. The other way round, :class:`BrainCoreBackend` runs an
adapter as a DRIFT backend under the budget gate (``--backend braincore`` with
``--braincore-adapter`` or its ``adapter`` option), and the ``braincore:`` source prefix turns a
dataset into a DRIFT world.

Names are resolved on first use, so importing the package (``drift --help`` imports its command)
loads neither the evaluator nor the scoring code behind it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drift_pipeline.embedding import (
        EMBEDDING_MODEL,
        EmbeddingModel,
        SentenceEmbedder,
        sentence_embedder,
    )

    from ._adapter import BrainCoreAdapter, DriftBackendAdapter, absolute_adapter_spec, load_adapter
    from ._backend import BrainCoreBackend, caller_options
    from ._baseline import KeywordAdapter
    from ._dataset import (
        QUERY_TYPES,
        BrainCoreDataset,
        BrainCoreError,
        BrainCoreMemory,
        BrainCoreQuery,
        BrainCoreRecord,
        load_dataset,
        parse_dataset,
    )
    from ._evaluate import FORMAT_VERSION, BrainCoreResult, evaluate, write_result
    from ._metrics import METRICS, MetricFigure, QueryScore, aggregate, score_query
    from ._report import render_results, results_template_path
    from ._source import open_braincore
    from ._synthetic import (
        SYNTHETIC_RECORDS,
        SYNTHETIC_SEED,
        synthetic_dataset,
        synthetic_dataset_bytes,
        synthetic_dataset_path,
        write_synthetic_dataset,
    )

_EXPORTS = {
    "BrainCoreAdapter": "_adapter",
    "BrainCoreBackend": "_backend",
    "BrainCoreDataset": "_dataset",
    "BrainCoreError": "_dataset",
    "BrainCoreMemory": "_dataset",
    "BrainCoreQuery": "_dataset",
    "BrainCoreRecord": "_dataset",
    "BrainCoreResult": "_evaluate",
    "DriftBackendAdapter": "_adapter",
    "EMBEDDING_MODEL": ".embedding",
    "EmbeddingModel": ".embedding",
    "FORMAT_VERSION": "_evaluate",
    "KeywordAdapter": "_baseline",
    "METRICS": "_metrics",
    "MetricFigure": "_metrics",
    "QUERY_TYPES": "_dataset",
    "QueryScore": "_metrics",
    "SYNTHETIC_RECORDS": "_synthetic",
    "SYNTHETIC_SEED": "_synthetic",
    "SentenceEmbedder": ".embedding",
    "absolute_adapter_spec": "_adapter",
    "aggregate": "_metrics",
    "caller_options": "_backend",
    "evaluate": "_evaluate",
    "load_adapter": "_adapter",
    "load_dataset": "_dataset",
    "open_braincore": "_source",
    "parse_dataset": "_dataset",
    "render_results": "_report",
    "results_template_path": "_report",
    "score_query": "_metrics",
    "sentence_embedder": ".embedding",
    "synthetic_dataset": "_synthetic",
    "synthetic_dataset_bytes": "_synthetic",
    "synthetic_dataset_path": "_synthetic",
    "write_result": "_evaluate",
    "write_synthetic_dataset": "_synthetic",
}
"""Public name → the private module defining it (``.embedding``: the package's own embedder)."""

__all__ = [
    "EMBEDDING_MODEL",
    "FORMAT_VERSION",
    "METRICS",
    "QUERY_TYPES",
    "SYNTHETIC_RECORDS",
    "SYNTHETIC_SEED",
    "BrainCoreAdapter",
    "BrainCoreBackend",
    "BrainCoreDataset",
    "BrainCoreError",
    "BrainCoreMemory",
    "BrainCoreQuery",
    "BrainCoreRecord",
    "BrainCoreResult",
    "DriftBackendAdapter",
    "EmbeddingModel",
    "KeywordAdapter",
    "MetricFigure",
    "QueryScore",
    "SentenceEmbedder",
    "absolute_adapter_spec",
    "aggregate",
    "caller_options",
    "evaluate",
    "load_adapter",
    "load_dataset",
    "open_braincore",
    "parse_dataset",
    "render_results",
    "results_template_path",
    "score_query",
    "sentence_embedder",
    "synthetic_dataset",
    "synthetic_dataset_bytes",
    "synthetic_dataset_path",
    "write_result",
    "write_synthetic_dataset",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
