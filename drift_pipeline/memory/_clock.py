"""The simulated clock of a backend worker: every call reads the simulated time of its session.

Memory libraries that rank by recency, decay what is old or supersede by date read the wall
clock. In a world spanning months, run in seconds, every memory would be seconds old and their
forgetting never exercised. With the simulated clock on (the default; ``LoopConfig``'s
``simulated_clock``, ``drift run --real-clock`` to turn it off) the harness sends each store and
retrieve with the time of its session, and the worker moves its process clocks there with
time-machine: ``time.time``, ``time.time_ns``, ``time.localtime``, ``time.gmtime``,
``datetime.datetime.now``, ``datetime.date.today`` and the like read the session's time, then
tick on in real time. Monotonic clocks (``time.monotonic``, ``time.perf_counter``, asyncio's
loop) are left alone, so timeouts, latencies and the token meter's booking are unaffected.

A session's timestamp without a zone is the local time of the worker: ``datetime.now()`` then
reads exactly the timestamp a backend finds in its messages. The clock never moves backwards:
the probes of a checkpoint, asked at the time of the session they follow, read that time plus
however long the store took.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from typing import Any

_MISSING = object()


def _time_machine() -> Any:
    """Import time-machine without the pytest plugin it loads when pytest is importable.

    time-machine imports pytest (if installed) only to define a fixture; in a worker that costs
    about 0.1 s of CPU at every start. A backend that imports pytest itself still gets it.
    """
    before = sys.modules.get("pytest", _MISSING)
    if before is _MISSING:
        sys.modules["pytest"] = None  # type: ignore[assignment]  # makes `import pytest` fail
    try:
        import time_machine
    finally:
        if before is _MISSING:
            del sys.modules["pytest"]
    return time_machine


def _aware(at: str) -> dt.datetime:
    """``at`` as an aware time; a time without a zone is local time."""
    moment = dt.datetime.fromisoformat(at)
    return moment if moment.tzinfo is not None else moment.astimezone()


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class SimulatedClock:
    """Moves one worker's clocks forward to each call's simulated time (never backwards)."""

    def __init__(self) -> None:
        self._traveller: Any = None
        self._last: str | None = None

    def prepare(self) -> None:
        """Import time-machine now (about 0.1 s), so that no timed call pays for it."""
        _time_machine()

    def advance(self, at: str) -> None:
        """Move the clock to ``at`` (ISO 8601), unless it already reads a later time.

        Raises:
            ValueError: ``at`` is not an ISO 8601 time.
        """
        if at == self._last:  # the reads, store and probes of one session share its time
            return
        target = _aware(at)
        self._last = at
        if self._traveller is None:
            self._traveller = _time_machine().travel(target, tick=True).start()
            return
        # time.time_ns() reads the simulated clock here; shifting forward is cheap (no reset of
        # uuid caches, no time-zone change), where move_to costs several times as much.
        gap = target - _EPOCH - dt.timedelta(microseconds=time.time_ns() // 1000)
        if gap > dt.timedelta(0):
            self._traveller.shift(gap)
