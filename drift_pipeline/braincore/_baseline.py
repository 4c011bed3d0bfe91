"""The keyword baseline: rank memory items by the query words they share, newest first on ties."""

from __future__ import annotations

import json
import re
from typing import Any

from bm25s.stopwords import STOPWORDS_EN_PLUS

__all__ = ["KeywordAdapter"]

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)


def _keywords(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


class KeywordAdapter:
    """Keeps every memory item; retrieves those sharing the most content words with the query.

    Items that share no word with the query are never returned. Ties go to the item ingested
    later, so a revised fact outranks the one it replaces when both match equally.
    ``storage_bytes`` is the size of the kept items as UTF-8 JSON.
    """

    def __init__(self) -> None:
        self._items: list[dict[str, Any]] = []
        self._keywords: list[set[str]] = []

    def ingest(self, raw_memories: list[dict[str, Any]]) -> None:
        """Keep every item of the batch."""
        for item in raw_memories:
            self._items.append(dict(item))
            self._keywords.append(_keywords(str(item.get("content", item.get("text", "")))))

    def retrieve(self, query: str, top_k: int = 1) -> list[dict[str, Any]]:
        """The ``top_k`` items sharing the most keywords with ``query``."""
        wanted = _keywords(query)
        ranked = sorted(
            (
                (len(wanted & words), order)
                for order, words in enumerate(self._keywords)
                if wanted & words
            ),
            reverse=True,
        )
        return [dict(self._items[order]) for _, order in ranked[:top_k]]

    def storage_bytes(self) -> int:
        """UTF-8 bytes of the kept items as JSON."""
        return sum(len(json.dumps(item, sort_keys=True).encode("utf-8")) for item in self._items)
