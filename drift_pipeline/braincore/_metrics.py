"""The six BrainCore metrics: per-query scores, and their means with bootstrap intervals.

Per query, from the adapter's ranked items (``retrieved[0]`` is the top item):

- ``exact_match``: 1 when the expected answer equals, stripped and case-folded, the top item's
  ``answer`` field or its text (``content`` or ``text``); 0 otherwise or with nothing returned.
- ``semantic_placeholder_score``: cosine similarity of the sentence embeddings of the expected
  answer and of the top item's ``answer`` (its text when it has none); 0 with nothing returned.
- ``temporal_order_score`` (temporal queries): 1 when the returned memories of the query's record
  rank in the order they happened and include every required memory; 0 otherwise.
- ``contradiction_resolution_score`` (contradiction queries): 1 when the latest required memory
  (the revised fact) is among the returned items, wherever it ranks; 0 otherwise.
- ``latency_ms``: wall time of the query's ``retrieve`` call.

``storage_bytes`` is what ``storage_bytes()`` reports once every record is ingested.
A metric's figure is the mean over the queries it applies to, with a 95% interval from the
harness's cluster bootstrap (records are the clusters); where no query applies it is reported as
not applicable, never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from drift_pipeline.evaluation import bootstrap_resamples, percentile_interval

from ._dataset import BrainCoreQuery, BrainCoreRecord

__all__ = [
    "BOOTSTRAP_DRAWS",
    "BOOTSTRAP_SEED",
    "METRICS",
    "MetricFigure",
    "QueryScore",
    "aggregate",
    "item_answer",
    "item_text",
    "score_query",
]

METRICS = (
    "exact_match",
    "semantic_placeholder_score",
    "temporal_order_score",
    "contradiction_resolution_score",
    "latency_ms",
    "storage_bytes",
)
"""The six metrics, in report order."""

BOOTSTRAP_DRAWS = 1000
BOOTSTRAP_SEED = 20240917
"""Fixed, so that the same scores give the same intervals."""

_APPLIES: dict[str, str | None] = {
    "exact_match": None,
    "semantic_placeholder_score": None,
    "temporal_order_score": "temporal",
    "contradiction_resolution_score": "contradiction",
    "latency_ms": None,
}
"""Per-query metrics and the one query type each applies to (``None``: every type)."""


@dataclass(frozen=True)
class QueryScore:
    """One query's scores.

    Attributes:
        record: Index of its record in the dataset.
        query_id: The query's id.
        query_type: Its type.
        exact_match: 0 or 1.
        semantic_placeholder_score: Cosine similarity (filled in after embedding).
        temporal_order_score: 0 or 1 for a temporal query, else ``None``.
        contradiction_resolution_score: 0 or 1 for a contradiction query, else ``None``.
        latency_ms: Wall time of ``retrieve``.
        retrieved_ids: The ids of the returned items that are memories of its record, in rank
            order (``None`` for an item that is not).
        top_answer: What the top item answers (its ``answer``, else its text), ``""`` for none.
    """

    record: int
    query_id: str
    query_type: str
    exact_match: float
    semantic_placeholder_score: float | None
    temporal_order_score: float | None
    contradiction_resolution_score: float | None
    latency_ms: float
    retrieved_ids: tuple[str | None, ...]
    top_answer: str

    def value(self, metric: str) -> float | None:
        """The score of ``metric`` (``None`` when it does not apply to this query)."""
        value: float | None = getattr(self, metric)
        return value


@dataclass(frozen=True)
class MetricFigure:
    """One metric over a set of queries.

    Attributes:
        value: The mean, ``None`` when not applicable.
        ci_low: Lower end of the 95% interval.
        ci_high: Upper end.
        n: Queries it was computed from.
    """

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int

    @property
    def applicable(self) -> bool:
        """Whether any query supports the metric."""
        return self.value is not None

    def to_dict(self, digits: int = 6) -> dict[str, Any]:
        """The figure as JSON, values rounded to ``digits`` decimals."""

        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, digits)

        return {
            "value": rounded(self.value),
            "ci_low": rounded(self.ci_low),
            "ci_high": rounded(self.ci_high),
            "n": self.n,
            "applicable": self.applicable,
        }


def item_text(item: Mapping[str, Any]) -> str:
    """A returned item's text (``content`` or ``text``), ``""`` when it has none."""
    for key in ("content", "text"):
        value = item.get(key)
        if isinstance(value, str):
            return value
    return ""


def item_answer(item: Mapping[str, Any]) -> str | None:
    """A returned item's ``answer`` field, when it is a string."""
    value = item.get("answer")
    return value if isinstance(value, str) else None


def _item_id(item: Mapping[str, Any]) -> object:
    return item.get("memory_id", item.get("id"))


def _normal(text: str) -> str:
    # casefold, not lower: Unicode's caseless match ("Straße" and "STRASSE" are one word).
    return text.strip().casefold()


def score_query(
    record_index: int,
    record: BrainCoreRecord,
    query: BrainCoreQuery,
    retrieved: Sequence[Mapping[str, Any]],
    latency_ms: float,
) -> QueryScore:
    """Score one query from what ``retrieve`` returned (the embedding score comes later).

    An item counts as one of the record's memories when its id is one of them and its
    ``session_id``, if it carries one, is the record's: adapters that keep every session in one
    store may reuse ids across sessions.

    Args:
        record_index: Index of the record in the dataset.
        record: The record the query belongs to.
        query: The query.
        retrieved: The ranked items.
        latency_ms: Wall time of the call.

    Returns:
        The query's scores, ``semantic_placeholder_score`` left ``None``.
    """
    own = {m.memory_id for m in record.memories}
    ids: list[str | None] = []
    for item in retrieved:
        memory_id = _item_id(item)
        session = item.get("session_id", record.session_id)
        # Dataset ids are strings: an id of any other type (even an unhashable one) is no memory.
        mine = isinstance(memory_id, str) and memory_id in own and session == record.session_id
        ids.append(memory_id if mine and isinstance(memory_id, str) else None)
    top = retrieved[0] if retrieved else None
    expected = _normal(query.expected_answer)
    exact = 0.0
    top_answer = ""
    if top is not None:
        answer = item_answer(top)
        candidates = [answer, item_text(top)] if answer is not None else [item_text(top)]
        exact = float(any(_normal(c) == expected for c in candidates))
        top_answer = answer if answer else item_text(top)
    temporal = _temporal_order(record, query, ids) if query.query_type == "temporal" else None
    contradiction = (
        _contradiction(record, query, ids) if query.query_type == "contradiction" else None
    )
    return QueryScore(
        record_index,
        query.query_id,
        query.query_type,
        exact,
        None,
        temporal,
        contradiction,
        latency_ms,
        tuple(ids),
        top_answer,
    )


def _temporal_order(
    record: BrainCoreRecord, query: BrainCoreQuery, ids: Sequence[str | None]
) -> float:
    # BrainCore asks that the returned memories be in time order; without every required memory
    # among them, one returned item (or none) would pass vacuously.
    returned = list(dict.fromkeys(i for i in ids if i is not None))
    if any(m not in returned for m in query.required_memory_ids):
        return 0.0
    times = [record.memory(m).time_order for m in returned]
    return float(times == sorted(times))


def _contradiction(
    record: BrainCoreRecord, query: BrainCoreQuery, ids: Sequence[str | None]
) -> float:
    latest = max(query.required_memory_ids, key=lambda m: record.memory(m).time_order)
    return float(latest in ids)


def aggregate(
    scores: Sequence[QueryScore], metric: str, *, draws: int = BOOTSTRAP_DRAWS
) -> MetricFigure:
    """The mean of a per-query metric over ``scores``, with its 95% bootstrap interval.

    Records are the clusters of the harness's two-stage bootstrap: a draw resamples records,
    then each drawn record's queries.

    Args:
        scores: The queries' scores, in dataset order.
        metric: One of the per-query metrics.
        draws: Bootstrap draws.

    Returns:
        The figure; not applicable (value ``None``, ``n`` 0) when no query supports it.
    """
    kind = _APPLIES[metric]
    values: list[float] = []
    records: list[int] = []
    for score in scores:
        value = score.value(metric)
        if value is None or (kind is not None and score.query_type != kind):
            continue
        values.append(value)
        records.append(score.record)
    if not values:
        return MetricFigure(None, None, None, 0)
    # Records renumbered 0..R-1 in order: the bootstrap wants contiguous, sorted clusters.
    renumber = {r: i for i, r in enumerate(sorted(set(records)))}
    layout = np.array([renumber[r] for r in records], dtype=np.int64)
    unit_values = np.array(values)
    point = float(unit_values.mean())
    collected: list[np.ndarray[Any, np.dtype[np.float64]]] = []
    for block in bootstrap_resamples(len(renumber), [layout], draws, BOOTSTRAP_SEED):
        weights = block.units[0]
        totals = weights.sum(axis=1)
        means = np.full(block.size, np.nan)
        np.divide(weights @ unit_values, totals, out=means, where=totals > 0)
        collected.append(means)
    low, high = percentile_interval(point, np.concatenate(collected))
    return MetricFigure(point, low, high, len(values))
