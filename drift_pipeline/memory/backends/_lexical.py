"""Small incremental inverted indexes scored by IDF-weighted term overlap.

The fact backends hold a few hundred short items that change one at a time (a fact is
replaced), so they need add/remove without a rebuild (:class:`LexicalIndex`). The summary
backend only ever adds, one item per session, thousands over a long horizon, and scores every
item at once with numpy (:class:`AppendOnlyLexicalIndex`). Turn-level BM25 over tens of
thousands of turns is ``_bm25_index``.
"""

from __future__ import annotations

import math
from array import array

import numpy as np
import numpy.typing as npt

from drift_pipeline.memory.backends._text import terms

__all__ = ["AppendOnlyLexicalIndex", "LexicalIndex"]


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


class AppendOnlyLexicalIndex:
    """:class:`LexicalIndex` scoring for documents that are only ever added (ids 0, 1, 2…).

    Scores come back as one array over all documents (0 where nothing is shared), summed over
    the query's terms in the same (sorted) order as :meth:`LexicalIndex.scores`, so both give
    the same floats.
    """

    def __init__(self) -> None:
        self._postings: dict[str, array[int]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, text: str) -> int:
        """Index ``text`` as the next document; returns its id."""
        doc_id = self._count
        for term in set(terms(text)):
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = array("i")
            posting.append(doc_id)
        self._count += 1
        return doc_id

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """The overlap score of every document with ``query``."""
        total = self._count
        result = np.zeros(total, dtype=np.float64)
        for term in sorted(set(terms(query))):
            posting = self._postings.get(term)
            if not posting:
                continue
            weight = math.log(1.0 + total / len(posting))
            # A view of the posting, dropped before anything can append to it again.
            result[np.frombuffer(posting, dtype=np.int32)] += weight
        return result
