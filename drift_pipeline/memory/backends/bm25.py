"""``bm25``: turn-level lexical retrieval over every stored turn, with the ``bm25s`` library.

The classic RAG baseline: nothing is distilled, every turn is kept and indexed, and a query gets
the ``top_k`` best-scoring turns the asking entity took part in.
"""

from __future__ import annotations

from typing import Any, ClassVar

import bm25s
import numpy as np
import numpy.typing as npt

from drift_pipeline.memory._protocol import Message, TokenCounts
from drift_pipeline.memory.backends._registry import register_backend
from drift_pipeline.memory.backends._text import render_turn, session_speakers, terms

__all__ = ["BM25Backend"]

_EMPTY_TERM = ""  # id 0: the one token of a turn without content words (bm25s needs one)


@register_backend("bm25")
class BM25Backend:
    """Index every turn as ``[date] speaker: text`` and return the ``top_k`` best BM25 matches.

    Turns are tokenised once, at store time, into ids over a growing vocabulary (the content terms
    of ``_text.terms``); the ``bm25s`` index is rebuilt from those ids only when turns arrived
    since the last retrieve, so a run of probes after a checkpoint pays for one rebuild. Scoping
    is a boolean mask per entity over the turns of the sessions it spoke in; only turns with a
    positive score under the mask are returned, best first, newer first on ties.

    Args:
        top_k: Number of turns returned per query.

    """

    name: ClassVar[str] = "bm25"
    version: ClassVar[str] = "1"

    def __init__(self, top_k: int = 8) -> None:
        if top_k < 1:
            raise ValueError(f"bm25 top_k must be >= 1, got {top_k}")
        self.top_k = top_k
        self._lines: list[str] = []
        self._token_ids: list[list[int]] = []
        self._vocabulary: dict[str, int] = {_EMPTY_TERM: 0}
        self._turns_of: dict[str, list[int]] = {}
        self._retriever: Any = None
        self._indexed_turns = 0
        self._masks: dict[str, npt.NDArray[np.bool_]] = {}
        self.rebuilds = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        """Keep and tokenise every turn of the session; the index is rebuilt on next retrieve."""
        if not messages:
            return
        first = len(self._lines)
        for message in messages:
            line = render_turn(message)
            self._lines.append(line)
            self._token_ids.append(self._ids(terms(line), grow=True) or [0])
        turn_ids = range(first, len(self._lines))
        for speaker in sorted(session_speakers(messages)):
            self._turns_of.setdefault(speaker, []).extend(turn_ids)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        """Return the ``top_k`` turns ``entity_id`` took part in that best match ``query``."""
        if entity_id not in self._turns_of:
            return ""
        query_ids = sorted(set(self._ids(terms(query), grow=False)))
        if not query_ids:
            return ""
        self._ensure_index()
        scores = self._retriever.get_scores_from_ids(query_ids)
        candidates = np.flatnonzero(self._mask(entity_id) & (scores > 0))
        if candidates.size == 0:
            return ""
        candidate_scores = scores[candidates]
        if candidates.size > self.top_k:
            keep = np.argpartition(-candidate_scores, self.top_k - 1)[: self.top_k]
            # argpartition breaks ties arbitrarily: widen to every turn tied with the k-th score.
            threshold = candidate_scores[keep].min()
            keep = np.flatnonzero(candidate_scores >= threshold)
            candidates, candidate_scores = candidates[keep], candidate_scores[keep]
        order = np.lexsort((-candidates, -candidate_scores))[: self.top_k]
        return "\n".join(self._lines[int(turn)] for turn in candidates[order])

    def token_counts(self) -> TokenCounts:
        """No LLM calls: indexing and scoring are lexical."""
        return TokenCounts()

    def snapshot(self) -> str:
        """Every stored turn, oldest first (the index is derived from them)."""
        return "\n".join(self._lines)

    def _ids(self, words: list[str], *, grow: bool) -> list[int]:
        ids: list[int] = []
        for word in words:
            term_id = self._vocabulary.get(word)
            if term_id is None:
                if not grow:
                    continue
                term_id = len(self._vocabulary)
                self._vocabulary[word] = term_id
            ids.append(term_id)
        return ids

    def _ensure_index(self) -> None:
        if self._retriever is not None and self._indexed_turns == len(self._lines):
            return
        retriever = bm25s.BM25()
        # A copy: bm25s may add its own empty token to the vocabulary it is given.
        retriever.index((self._token_ids, dict(self._vocabulary)), show_progress=False)
        self._retriever = retriever
        self._indexed_turns = len(self._lines)
        self._masks.clear()
        self.rebuilds += 1

    def _mask(self, entity_id: str) -> npt.NDArray[np.bool_]:
        mask = self._masks.get(entity_id)
        if mask is None:
            mask = np.zeros(self._indexed_turns, dtype=bool)
            mask[self._turns_of.get(entity_id, [])] = True
            self._masks[entity_id] = mask
        return mask
