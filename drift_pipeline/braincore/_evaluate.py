"""The BrainCore evaluator: one adapter over one dataset, scored, written as one JSON file.

The adapter sees the records in file order: ``ingest`` once per record with its memory items,
then ``retrieve`` once per query of that record. One adapter serves the whole dataset, so later
sessions are asked with every earlier session in memory, as the BrainCore harness runs them.
"""

from __future__ import annotations

import json
import operator
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ._adapter import DEFAULT_TOP_K, BrainCoreAdapter, not_items
from ._dataset import QUERY_TYPES, BrainCoreDataset, BrainCoreError
from ._metrics import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    METRICS,
    MetricFigure,
    QueryScore,
    aggregate,
    score_query,
)

__all__ = ["FORMAT_VERSION", "BrainCoreResult", "evaluate", "write_result"]

FORMAT_VERSION = 1
"""Version of the result file's layout."""

Similarity = Callable[[Sequence[str], Sequence[str]], list[float]]


@dataclass(frozen=True)
class BrainCoreResult:
    """One evaluated run.

    Attributes:
        adapter: How the adapter was named (``MODULE[:Class]`` or ``backend:NAME``).
        dataset: The dataset.
        top_k: ``top_k`` given to every ``retrieve``.
        embedding_model: The model behind ``semantic_placeholder_score`` (name, package,
            version, sha256).
        scores: Every query's scores, in dataset order.
        storage_bytes: ``storage_bytes()`` after the last record; ``None`` when the adapter
            cannot measure it (a DRIFT backend without ``snapshot()``): reported as not
            measured, never as zero.
    """

    adapter: str
    dataset: BrainCoreDataset
    top_k: int
    embedding_model: Mapping[str, str]
    scores: tuple[QueryScore, ...]
    storage_bytes: int | None

    def figures(self, query_type: str | None = None) -> dict[str, MetricFigure]:
        """The six metrics over every query (``None``) or the queries of one type."""
        chosen = [s for s in self.scores if query_type is None or s.query_type == query_type]
        figures = {m: aggregate(chosen, m) for m in METRICS if m != "storage_bytes"}
        # The footprint belongs to the whole memory, not to a subset of its queries.
        if query_type is None and self.storage_bytes is not None:
            storage = float(self.storage_bytes)
            figures["storage_bytes"] = MetricFigure(storage, storage, storage, 1)
        else:
            figures["storage_bytes"] = MetricFigure(None, None, None, 0)
        return {m: figures[m] for m in METRICS}

    def to_dict(self) -> dict[str, Any]:
        """The result file's content (see ``docs/decisions.md``, BrainCore)."""
        types = [t for t in QUERY_TYPES if any(s.query_type == t for s in self.scores)]
        return {
            "harness": "braincore",
            "format_version": FORMAT_VERSION,
            "adapter": self.adapter,
            "dataset": {
                "path": self.dataset.path,
                "sha256": self.dataset.sha256,
                "records": len(self.dataset.records),
                "queries": self.dataset.queries,
            },
            "top_k": self.top_k,
            "embedding_model": dict(self.embedding_model),
            "bootstrap": {
                "draws": BOOTSTRAP_DRAWS,
                "seed": BOOTSTRAP_SEED,
                "level": 0.95,
                "clusters": "records",
            },
            "metrics": {
                "overall": _figures_dict(self.figures()),
                "by_query_type": {t: _figures_dict(self.figures(t)) for t in types},
            },
            "queries": [
                {
                    "query_id": s.query_id,
                    "session_id": self.dataset.records[s.record].session_id,
                    "query_type": s.query_type,
                    "exact_match": s.exact_match,
                    "semantic_placeholder_score": s.semantic_placeholder_score,
                    "temporal_order_score": s.temporal_order_score,
                    "contradiction_resolution_score": s.contradiction_resolution_score,
                    "latency_ms": round(s.latency_ms, 6),
                    "retrieved_memory_ids": list(s.retrieved_ids),
                    "top_answer": s.top_answer,
                }
                for s in self.scores
            ],
        }


def _figures_dict(figures: Mapping[str, MetricFigure]) -> dict[str, Any]:
    return {metric: figure.to_dict() for metric, figure in figures.items()}


def evaluate(
    adapter: BrainCoreAdapter,
    dataset: BrainCoreDataset,
    *,
    adapter_name: str,
    top_k: int = DEFAULT_TOP_K,
    similarity: Similarity | None = None,
    embedding_model: Mapping[str, str] | None = None,
) -> BrainCoreResult:
    """Run ``adapter`` over ``dataset`` and score every query.

    Args:
        adapter: The adapter (built fresh: it should hold nothing yet).
        dataset: The checked dataset.
        adapter_name: How the adapter is named in the result.
        top_k: ``top_k`` for every ``retrieve``.
        similarity: Pairwise cosine similarity of texts; the harness's sentence embedder when
            ``None``.
        embedding_model: What ``similarity`` is, recorded in the result (required with
            ``similarity``).

    Returns:
        The result.

    Raises:
        BrainCoreError: One line naming the record or query at which the adapter failed or
            returned something other than a list of dicts.
    """
    if top_k < 1:
        raise BrainCoreError(f"top_k must be at least 1, got {top_k}")
    scores: list[QueryScore] = []
    for index, record in enumerate(dataset.records):
        where = f"{dataset.path}:{record.line}"
        _call(where, "ingest", adapter.ingest, [dict(m.raw) for m in record.memories])
        for query in record.queries:
            started = time.perf_counter()
            returned = _call(
                f"{where}: query {query.query_id!r}",
                "retrieve",
                adapter.retrieve,
                query.query_text,
                top_k,
            )
            elapsed = (time.perf_counter() - started) * 1000.0
            kind = not_items(returned)
            if kind is not None:
                raise BrainCoreError(
                    f"{where}: query {query.query_id!r}: retrieve returned {kind}, "
                    "expected a list of dicts"
                )
            scores.append(score_query(index, record, query, returned, elapsed))
    stored: int | None = None
    # A DRIFT backend seen through the adapter may have no snapshot to size: not measured.
    if getattr(adapter, "measures_storage", True):
        returned_size = _call(f"{dataset.path}", "storage_bytes", adapter.storage_bytes)
        stored = _byte_count(returned_size)
    if similarity is None:
        from drift_pipeline.embedding import sentence_embedder

        embedder = sentence_embedder()
        similarity = embedder.similarity
        embedding_model = vars(embedder.model)
    if embedding_model is None:
        raise BrainCoreError("a similarity function needs its embedding_model description")
    expected = {q.query_id: q.expected_answer for r in dataset.records for q in r.queries}
    cosines = similarity([expected[s.query_id] for s in scores], [s.top_answer for s in scores])
    scored = tuple(
        # Nothing returned scores 0: there is no text to compare with.
        replace(s, semantic_placeholder_score=c if s.top_answer else 0.0)
        for s, c in zip(scores, cosines, strict=True)
    )
    return BrainCoreResult(adapter_name, dataset, top_k, dict(embedding_model), scored, stored)


def _byte_count(value: object) -> int:
    # Any integer type counts (numpy's, from ``array.sum()``, is common); a bool, a float or a
    # negative number is no byte count.
    try:
        count = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        count = -1
    if isinstance(value, bool) or count < 0:
        raise BrainCoreError(f"storage_bytes returned {value!r}, expected an int >= 0")
    return count


def _call(where: str, method: str, call: Callable[..., Any], *args: Any) -> Any:
    try:
        return call(*args)
    except BrainCoreError:
        raise
    except Exception as error:
        message = str(error).splitlines()[0] if str(error) else ""
        raise BrainCoreError(
            f"{where}: the adapter's {method} raised {type(error).__name__}: {message}"
        ) from None


def write_result(result: BrainCoreResult, path: str | Path) -> Path:
    """Write the result as JSON, atomically: a failed write leaves no file behind.

    Args:
        result: The result.
        path: The output file; its folder is created.

    Returns:
        The path written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    handle, staged = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(staged, target)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise
    return target
