from __future__ import annotations

import random

from drift_pipeline.memory.backends._line_sum import LineSum
from drift_pipeline.tokens import count_tokens_lines


def test_the_sum_is_the_count_of_the_joined_lines_through_any_changes() -> None:
    # Blank lines, lines with breaks inside or at their end, merging punctuation, non-ASCII.
    pieces = ["", "\n", "\n\n", " ", ".", ".\n", "Hello world", "é", "x\n\ny", "  \n", "日本"]
    rng = random.Random(3)
    lines: list[str] = []
    tally = LineSum()
    assert tally.count("") == 0
    for step in range(400):
        action = rng.randrange(3) if lines else 0
        new = "".join(rng.choice(pieces) for _ in range(rng.randrange(4)))
        if action == 0:
            lines.insert(rng.randrange(len(lines) + 1), new)
            tally.add(new)
        elif action == 1:
            tally.remove(lines.pop(rng.randrange(len(lines))))
        else:
            at = rng.randrange(len(lines))
            tally.replace(lines[at], new)
            lines[at] = new
        expected = count_tokens_lines("\n".join(lines))
        assert tally.count(lines[-1] if lines else "") == expected, (step, lines)
