"""The terminal leaderboard of a run or a record: one table per horizon, then the composite.

Horizons are not merged before they are shown: each horizon's arms get a table of their own,
and the DRIFT-C composite over horizons (spec §7.6 weights) comes last. Each row carries its
verification status; the reader and judge are named once under the last table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._budget import budget_from_json, budget_lines
from ._leaderboard import (
    _Cell,
    horizon_order,
    horizon_standings,
    record_judge_mark,
    render_leaderboard,
    standings,
    verifications,
)
from ._privacy import ALLOWED_LEAK_MARK
from ._table import table_lines

__all__ = ["render_board", "render_record_board"]

COMPOSITE_TITLE = "all horizons (weighted short .2, medium .3, long .5; spec §7.6)"


def render_board(
    cells: Sequence[_Cell],
    max_fault_rate: float | None = None,
    audits: dict[str, str | None] | None = None,
    leaks: Mapping[str, str] | None = None,
) -> str:
    """The leaderboard of ``cells``: a table per horizon, then over all horizons.

    With one horizon, the one table (it is its own composite). ``leaks``: backends the run
    allowed to leak across entities that did (see :func:`~._privacy.allowed_leaks`).
    """
    per_horizon = horizon_standings(cells, leaks)
    blocks: list[str] = []
    if len(per_horizon) > 1:
        for horizon, rows in per_horizon.items():
            checked = verifications(rows, max_fault_rate, audits)
            # The latency budget is an arm's over all horizons: shown once, under the composite.
            table = render_leaderboard(rows, checked=checked, scoring=False, budget=False)
            blocks.append(f"horizon {horizon}:\n{table}")
        title = f"{COMPOSITE_TITLE}:\n"
    else:
        title = ""
    rows = standings(cells, None, leaks)
    checked = verifications(rows, max_fault_rate, audits)
    blocks.append(title + render_leaderboard(rows, checked=checked))
    return "\n\n".join(blocks)


def render_record_board(record: Mapping[str, Any]) -> str:
    """A stored record's leaderboard again: a table per horizon, then the composite rows."""
    blocks = []
    stored: dict[str, list[dict[str, Any]]] = dict(record.get("horizons", {}))
    horizons = {h: stored[h] for h in sorted(stored, key=horizon_order)}
    if len(horizons) > 1:
        blocks += [f"horizon {h}:\n{_record_table(rows)}" for h, rows in horizons.items()]
        blocks.append(f"{COMPOSITE_TITLE}:\n{_record_table(record['leaderboard'])}")
    else:
        blocks.append(_record_table(record["leaderboard"]))
    # The latency budget, where the record's rows carry one (an arm's, over all horizons).
    budget = budget_lines(
        [
            (str(row["arm"]), *budget_from_json(row["budget"]))
            for row in record["leaderboard"]
            if (row.get("budget") or {}).get("figures")
        ]
    )
    if budget:
        blocks.append("\n".join(budget))
    scoring = record.get("scoring", [])
    who = "; ".join(f"reader {s['reader']}, judge {s['judge']}" for s in scoring)
    commit = record.get("code", {}).get("commit", "unknown")
    blocks.append(f"recorded {record.get('created')} · code {commit[:12]} · {who or 'no scoring'}")
    return "\n\n".join(blocks)


RECORD_COLUMNS = (
    ("DRIFT-C", "drift_c"),
    ("MVOT", "mvot"),
    ("Selectivity", "selectivity"),
    ("Revision", "revision_accuracy"),
    ("Action", "action_alignment"),
    ("TES", "tes"),
)
"""The columns a stored record's board shows (the headline figures a record always holds)."""


def _figure(value: object) -> str:
    if not isinstance(value, dict) or value.get("value") is None:
        return "—"
    low, high = value.get("ci_low"), value.get("ci_high")
    shown = f"{value['value']:.3f}"
    return shown if low is None or high is None else f"{shown} [{low:.3f}, {high:.3f}]"


def _record_table(rows: Sequence[Mapping[str, Any]]) -> str:
    header = ["arm", *(label for label, _ in RECORD_COLUMNS), "status"]
    body = []
    for row in rows:
        name = str(row["arm"])
        if row.get("leak_allowed"):
            name += f" [{ALLOWED_LEAK_MARK}]"
        if not row.get("valid", True):
            name += f" (not ranked: {row.get('fault_rate', 0.0):.1%} of calls faulted)"
        name += record_judge_mark(row)
        status = dict(row.get("verification") or {}).get("status", "unverified")
        body.append([name, *(_figure(row.get(key)) for _, key in RECORD_COLUMNS), status])
    return "\n".join(table_lines(header, body))
