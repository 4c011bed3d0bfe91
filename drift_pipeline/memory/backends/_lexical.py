"""A small incremental inverted index scored by IDF-weighted term overlap.

The summary and fact backends hold at most a few thousand short items that change one at a time
(a fact is replaced, a summary is added), so they need add/remove without a rebuild; turn-level
retrieval over tens of thousands of turns uses ``bm25s`` instead (see ``bm25.py``).
"""

from __future__ import annotations

import math

from drift_pipeline.memory.backends._text import terms

__all__ = ["LexicalIndex"]


class LexicalIndex:
    """Map integer document ids to their content terms and score queries by shared terms.

    A query scores each document by the sum, over the distinct query terms it contains, of
    ``log(1 + N / df)``: rare shared words count more than common ones.
    """

    def __init__(self) -> None:
        self._postings: dict[str, set[int]] = {}
        self._doc_terms: dict[int, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self._doc_terms)

    def add(self, doc_id: int, text: str) -> None:
        """Index ``text`` under ``doc_id`` (replacing what that id held before)."""
        if doc_id in self._doc_terms:
            self.remove(doc_id)
        doc_terms = frozenset(terms(text))
        self._doc_terms[doc_id] = doc_terms
        for term in doc_terms:
            self._postings.setdefault(term, set()).add(doc_id)

    def remove(self, doc_id: int) -> None:
        """Forget ``doc_id``; unknown ids are ignored."""
        doc_terms = self._doc_terms.pop(doc_id, frozenset())
        for term in doc_terms:
            posting = self._postings.get(term)
            if posting is None:
                continue
            posting.discard(doc_id)
            if not posting:
                del self._postings[term]

    def scores(self, query: str) -> dict[int, float]:
        """Return the overlap score of every document sharing at least one term with ``query``."""
        total = len(self._doc_terms)
        result: dict[int, float] = {}
        for term in sorted(set(terms(query))):
            posting = self._postings.get(term)
            if not posting:
                continue
            weight = math.log(1.0 + total / len(posting))
            for doc_id in posting:
                result[doc_id] = result.get(doc_id, 0.0) + weight
        return result
