"""Which LLM tokens a cell is charged: the meter's count, the backend's own report, or unknown.

One rule, used where the loop books a cell's tokens and wherever its figures are read back:

- **metered**: the harness's meter counted the backend's model calls, and that count is
  charged. The backend's ``token_counts()`` is kept beside it.
- **self-reported**: the backend reports more than :data:`REPORT_TOLERANCE` above what the meter
  counted, so it says it spent tokens the meter did not see (a model called around the meter).
  Its report is charged: an unseen spend must never make an arm cheaper than it says it is.
- **unknown**: the backend's models run where the meter cannot see them (it declares
  ``models_outside_meter``, or its worker saw it call a model endpoint other than the meter) and
  its report does not cover that spend (no report, zero, or no more than the meter saw). The
  metered tokens are only the part of its cost that is known.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "METERED",
    "REPORT_TOLERANCE",
    "SELF_REPORTED",
    "TOKEN_SOURCES",
    "UNKNOWN",
    "token_source",
]

METERED: Final = "metered"
SELF_REPORTED: Final = "self-reported"
UNKNOWN: Final = "unknown"
TOKEN_SOURCES: Final = (METERED, SELF_REPORTED, UNKNOWN)
"""Where a cell's charged LLM tokens come from, from the most to the least trustworthy."""

REPORT_TOLERANCE: Final = 0.05
"""How far a backend's report may sit from the metered count and still agree with it: tokenizers
differ by a few percent. Further off, the gap is shown; further above, the report is charged."""


def token_source(metered: int, reported: int | None, unseen_spend: bool) -> str:
    """Where a cell's charged tokens come from (see the module docstring).

    Args:
        metered: Tokens of the calls that went through the meter.
        reported: What the backend's ``token_counts()`` reported over the same calls; ``None``
            when it did not know for some call.
        unseen_spend: Whether the backend spends on models the meter cannot see (declared, or
            seen by its worker).
    """
    if reported is not None and reported > metered * (1 + REPORT_TOLERANCE):
        return SELF_REPORTED
    return UNKNOWN if unseen_spend else METERED
