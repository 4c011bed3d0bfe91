"""A content-addressed store of completions, so reruns and resumed runs send no request.

One JSON file per call at ``<cache>/<key[:2]>/<key>.json``. A local cache is written with a temp
file and a rename (a crash never leaves half an entry); an ``s3://`` cache goes through the
storage root's filesystem, where each object appears whole. Entries hold the reply and its
measurements, never the request's credentials.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from drift_pipeline.storage import StorageRoot

_log = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Bumped when an entry's layout changes (old entries then read as misses)."""


def cache_key(
    *,
    model: str,
    messages: Sequence[Mapping[str, str]],
    parameters: Mapping[str, Any],
    prompt_version: str,
) -> str:
    """sha256 hex of everything that decides a reply (never the key or the endpoint's address).

    The endpoint is left out on purpose: the same model behind another URL (a proxy, a new
    port) gives the same answer, and a cache must survive such moves.
    """
    payload = {
        "format": CACHE_FORMAT,
        "model": model,
        "messages": [dict(message) for message in messages],
        "parameters": dict(parameters),
        "prompt_version": prompt_version,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CompletionCache:
    """Completions by cache key, under a local folder or an ``s3://`` prefix."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self._root = StorageRoot.from_url(location)

    def __repr__(self) -> str:
        return f"CompletionCache({self._root.url!r})"

    @staticmethod
    def _relative(key: str) -> str:
        return f"{key[:2]}/{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or ``None`` on a miss (an unreadable entry is a logged miss)."""
        relative = self._relative(key)
        try:
            text = self._root.read_text(relative)
        except FileNotFoundError:
            return None
        try:
            entry = json.loads(text)
        except json.JSONDecodeError:
            _log.warning("LLM cache entry %s is not JSON; calling the model again", relative)
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return None
        return entry

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store one entry atomically (readers see the old state or the whole new entry)."""
        text = json.dumps(
            {"format": CACHE_FORMAT, **entry}, sort_keys=True, ensure_ascii=False, indent=1
        )
        relative = self._relative(key)
        local = self._root.local_path
        if local is None:
            self._root.write_text(relative, text)
            return
        target = local / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".partial-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
