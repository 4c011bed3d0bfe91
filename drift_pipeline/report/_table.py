"""The one renderer of the terminal's and Markdown's tables: a header row and rows of text.

Every table a person reads in a terminal or in Dagster's Markdown metadata (the leaderboards,
the latency budget, recall per subtype, a stored record's board) goes through
:func:`table_lines`, so they all align, pad and mark up their columns the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["table_lines"]


def table_lines(
    header: Sequence[str], body: Sequence[Sequence[str]], markdown: bool = False
) -> list[str]:
    """The lines of a table: fixed-width columns two spaces apart, or a Markdown table.

    Args:
        header: The column titles.
        body: One row of cell texts per line, as many cells as titles.
        markdown: A Markdown table (``| a | b |`` with a ``|---|`` rule) instead.

    Raises:
        ValueError: A row with another number of cells than the header.
    """
    for row in body:
        if len(row) != len(header):
            raise ValueError(f"table row has {len(row)} cells for {len(header)} columns: {row}")
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(row) + " |" for row in body]
    rows = [list(header), *(list(row) for row in body)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(rows[0], widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows[1:]]
    return lines
