"""An append-only BM25 index over integer term ids, updated in place as documents arrive.

``bm25`` indexes every turn of a long horizon (tens of thousands) and is asked a burst of
questions after each checkpoint. Rebuilding a static index (``bm25s``) on the first question
after new turns cost ~100 ms at 1000 sessions and grew with the horizon; here each stored turn
only appends to the postings of its terms, and a query scores the postings of its own terms.

Scores are Lucene's BM25 (Kamphuis et al., ECIR 2020), computed in the same precision and order
as ``bm25s`` with ``method="lucene"`` (the library this replaces), so the two agree bit for bit:
``idf = log(1 + (N - df + 0.5) / (df + 0.5))`` rounded to float32, the term-frequency part
``tf / (k1 * (1 - b + b * len / avg_len) + tf)`` in float64, their product rounded to float32,
summed over query terms in ascending id order in float32. N, df and ``avg_len`` are those of
every document indexed so far, so a query always sees the current collection.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter

import numpy as np
import numpy.typing as npt

__all__ = ["BM25Index", "GrowableArray"]


class GrowableArray:
    """A numpy array that grows in place (capacity doubles), with a zero-copy view."""

    __slots__ = ("_data", "size")

    def __init__(self, dtype: type[np.generic]) -> None:
        self._data: npt.NDArray[np.generic] = np.zeros(8, dtype=dtype)
        self.size = 0

    def resize(self, size: int) -> None:
        """Grow to ``size`` elements; the new ones are zero."""
        if size > self._data.size:
            grown = np.zeros(max(size, 2 * self._data.size), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self.size = max(self.size, size)

    def view(self) -> npt.NDArray[np.generic]:
        """The elements, without copying (valid until the next resize)."""
        return self._data[: self.size]


class _Postings:
    """The documents one term occurs in (ascending) and how often it occurs in each.

    Stdlib arrays: appending is a C call, and numpy reads them in place (``frombuffer``).
    """

    __slots__ = ("documents", "frequencies")

    def __init__(self) -> None:
        self.documents = array("i")
        self.frequencies = array("f")


class BM25Index:
    """Documents are lists of term ids, added in order and never changed.

    Args:
        k1: Term-frequency saturation.
        b: Document-length normalisation.

    """

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[int, _Postings] = {}
        self._lengths = array("q")
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, term_ids: list[int]) -> int:
        """Index one document; returns its id (0, 1, 2… in the order added)."""
        document = len(self._lengths)
        for term_id, frequency in Counter(term_ids).items():
            postings = self._postings.get(term_id)
            if postings is None:
                postings = self._postings[term_id] = _Postings()
            postings.documents.append(document)
            postings.frequencies.append(frequency)
        self._lengths.append(len(term_ids))
        self._total_length += len(term_ids)
        return document

    def scores(self, query_ids: list[int]) -> npt.NDArray[np.float32]:
        """BM25 score of every document for the distinct, sorted ``query_ids`` (0 if no match)."""
        count = len(self)
        scores = np.zeros(count, dtype=np.float32)
        if count == 0:
            return scores
        # The same float64 mean numpy computes for bm25s (an exact integer sum, one division).
        average = np.float64(self._total_length) / np.float64(count)
        # Views into the stdlib arrays: they must not outlive this call (an array with a live
        # view cannot grow), so nothing below returns or keeps them.
        lengths = np.frombuffer(self._lengths, dtype=np.int64)
        for term_id in query_ids:
            postings = self._postings.get(term_id)
            if postings is None:
                continue
            documents = np.frombuffer(postings.documents, dtype=np.int32)
            frequencies = np.frombuffer(postings.frequencies, dtype=np.float32)
            found = documents.size
            idf = np.float32(math.log(1 + (count - found + 0.5) / (found + 0.5)))
            saturation = frequencies / (
                self.k1 * ((1 - self.b) + self.b * lengths[documents] / average) + frequencies
            )
            # Each document occurs once per term, so a fancy-indexed add is exact.
            scores[documents] += (idf * saturation).astype(np.float32)
        return scores
