"""What the reader keeps between readings, and letting it go once a cell is read."""

from __future__ import annotations

import sys

from drift_pipeline._bounded import BoundedCache

__all__ = ["release_kept"]

_PACKAGE = __name__.rpartition(".")[0]


def release_kept() -> None:
    """Empty every cache the reader's modules keep between readings.

    The reader keeps work on the texts it read last (a full-context memory's text runs to
    megabytes, its preparation to several times that) and on their lines, so that the probes of
    one checkpoint share it. Once every probe of a cell is read that work serves no other
    cell: the next arm's memory returned other texts. Releasing it keeps what a run holds to
    one cell's reading instead of piling the next cell's metrics on top of it. Readings are
    unchanged: every cache here is of a pure step, and is filled again on demand.
    """
    prefix = _PACKAGE + "."
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, BoundedCache):
                value.clear()
            elif str(getattr(value, "__module__", None) or "").startswith(prefix) and callable(
                getattr(value, "cache_clear", None)
            ):
                value.cache_clear()
