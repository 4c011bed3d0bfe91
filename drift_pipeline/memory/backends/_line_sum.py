r"""The storage count of a snapshot whose lines are added, replaced and removed in place.

A memory that rewrites itself (a fact updated, redated or deleted, an edge closed) cannot use
:class:`~drift_pipeline.tokens.LineTally`, which only appends. Its snapshot is still
``"\n".join(lines)``, and :func:`~drift_pipeline.tokens.count_tokens_lines` counts such a text
as the sum of its lines' counts, each line with the break after it, except the last line,
which has none. So the count is a running sum of ``count(line + "\n")`` over the lines, kept
where the memory changes, corrected for whichever line is last when it is asked for.
"""

from __future__ import annotations

from drift_pipeline.tokens import count_tokens_lines

__all__ = ["LineSum"]


class LineSum:
    r"""``count_tokens_lines("\n".join(lines))``, kept as the lines change.

    The lines may come in any order and may themselves contain breaks; the memory tells it
    which line its snapshot ends with when it asks for the count. Each change costs one line's
    count (through the shared line cache, so a line counted before is a lookup), never the
    snapshot's size.
    """

    __slots__ = ("_lines", "_total")

    def __init__(self) -> None:
        self._total = 0  # every line's tokens with the break after it
        self._lines = 0

    def add(self, line: str) -> None:
        """One more line in the snapshot."""
        self._total += count_tokens_lines(line + "\n")
        self._lines += 1

    def remove(self, line: str) -> None:
        """A line that was added leaves the snapshot."""
        self._total -= count_tokens_lines(line + "\n")
        self._lines -= 1

    def replace(self, old: str, new: str) -> None:
        """A line of the snapshot now reads ``new``."""
        if old != new:
            self._total += count_tokens_lines(new + "\n") - count_tokens_lines(old + "\n")

    def count(self, last: str) -> int:
        """Token count of the snapshot, which ends with the line ``last`` (one of those added)."""
        if not self._lines:
            return 0
        # Nothing follows the last line: the break counted after it is not in the snapshot.
        end = last[last.rfind("\n") + 1 :]
        return self._total - count_tokens_lines(end + "\n") + count_tokens_lines(end)
