"""``leaky_shared``: one memory for every entity, to show the Privacy Score detects a leak.

It is ``bm25`` with one store for all entities instead of one per entity: every turn of every
session is indexed once and any entity's question searches all of them, so what one entity was
told in private comes back to another. It is a reference for the privacy metric only, never
run by default and never ranked on capability.
"""

from __future__ import annotations

from ._scoped import shared_store
from .bm25 import BM25Backend

__all__ = ["LeakySharedBackend"]

LeakySharedBackend = shared_store(BM25Backend, "leaky_shared", "1")
"""``bm25`` over one store for every entity."""
