"""A bounded cache: the last few values a process computed, the least recently used dropped.

For results that are pure functions of a large input (a world's session marks, a text's phrase
occurrences) where only the last few inputs come back: ``functools.lru_cache`` keys on the call's
arguments, which here are big tables or texts better fingerprinted once by the caller.

A cache that holds the work on one unit (one long text a reader read) is marked with
:func:`per_unit`; :func:`release_caches` empties those once the unit is done and keeps the rest
(what a question, a candidate list or a rules table gives), which the next unit asks for again.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache", "is_per_unit", "per_unit", "release_caches"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
C = TypeVar("C")

_PER_UNIT = "__per_unit_cache__"


class BoundedCache(Generic[K, V]):
    """At most ``keep`` values by key; a look-up that hits makes its key the most recent.

    Safe to share between threads: each operation holds the cache's lock, and a value is built
    outside it (two threads missing the same key may both build it; the first one stored is
    kept and returned to both).

    Args:
        keep: How many values to keep (at least 1).
    """

    def __init__(self, keep: int) -> None:
        if keep < 1:
            raise ValueError(f"a bounded cache keeps at least 1 value, not {keep}")
        self.keep = keep
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept under ``key``, or ``None``."""
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` under ``key`` (the most recent), dropping the oldest beyond ``keep``."""
        with self._lock:
            self._store(key, value)
            return value

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The value under ``key``, built by ``build()`` and kept if there is none yet."""
        value = self.get(key)
        if value is not None:
            return value
        built = build()
        with self._lock:
            value = self._values.get(key)
            if value is None:
                value = built
            self._store(key, value)  # another thread's value, if it stored one meanwhile
            return value

    def _store(self, key: K, value: V) -> None:
        self._values[key] = value
        self._values.move_to_end(key)
        while len(self._values) > self.keep:
            self._values.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._values

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._values.clear()


def per_unit(cache: C) -> C:
    """Mark ``cache`` as holding one unit's work: :func:`release_caches` empties it.

    ``cache`` is a :class:`BoundedCache` or a ``functools`` cached function (as a decorator,
    above ``@lru_cache``). Mark the caches whose entries are a whole unit (a long text and what
    was built from it): they are what makes a process's memory grow with the unit, and no other
    unit asks for them again.
    """
    setattr(cache, _PER_UNIT, True)
    return cache


def is_per_unit(cache: object) -> bool:
    """Whether ``cache`` was marked with :func:`per_unit`."""
    return getattr(cache, _PER_UNIT, False) is True


def release_caches(package: str) -> None:
    """Empty the caches marked :func:`per_unit` that the modules of ``package`` keep.

    Each :class:`BoundedCache` and each ``functools`` cache of a function defined there is found
    by what it is rather than by name, and emptied when it is marked. Those caches hold the
    work on one unit (the long texts of one cell a reader read): once that unit is done they
    serve nothing else, and dropping them keeps what a process holds to one unit's work. The
    unmarked caches (what a question, a candidate list or a rules table gives) are kept,
    bounded by their own size, since the next unit asks for the same entries again.
    Results are unchanged either way, as every cache is filled again on demand.
    """
    prefix = package + "."
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix):
            continue
        for value in list(vars(module).values()):
            if not is_per_unit(value):
                continue
            if isinstance(value, BoundedCache):
                value.clear()
            elif str(getattr(value, "__module__", None) or "").startswith(prefix) and callable(
                getattr(value, "cache_clear", None)
            ):
                value.cache_clear()
