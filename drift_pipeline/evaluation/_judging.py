"""Figures resting on answers the reader or judge failed to give: not measured, or partly judged.

A failed reader or judge call is a failure of the harness, not of the memory system, so it never
becomes a score. Its answer is left out of every probe metric (:mod:`._metrics`); this module
says what that leaves of each figure of a cell:

- A figure with no judged answer left, where answers it rests on failed, is **not measured**
  (its row undefined, with the reason), never a default.
- A composite (DRIFT-C and its Lift, TES, DRIFT-E) one of whose judged parts is not measured is
  not measured either: renormalising its weights over the parts that remain (DRIFT-C on
  Selectivity alone, DRIFT-E on LPS alone) would pass off a figure the judge never produced. A
  Revision or Action figure on too few probes to enter DRIFT-C at all leaves it as it is.
- A figure some of whose answers failed keeps its value over the answers judged and is
  **partly judged**, with the count; the cell is not to be ranked (:class:`JudgeFailures`).

A figure rests on its own probes' answers; MVOT, DRIFT-C and Lift also on the amnesiac's
answers to them, TES and DRIFT-E also on the reference compressor's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ._probe_masks import metric_masks

__all__ = ["JUDGE_FAILED", "JudgeFailures", "judge_failures"]

JUDGE_FAILED: Final = "the reader or judge failed on"
"""How every reason for a figure not measured because of failed calls begins."""

_ARM, _AMNESIAC, _REFERENCE = "arm", "amnesiac", "reference"

_RESTS_ON: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    # metric -> (the probe metrics whose answers it reads, whose answers)
    "error_rate": (("error_rate",), (_ARM,)),
    "error_rate_amnesiac": (("error_rate",), (_AMNESIAC,)),
    "mvot": (("error_rate",), (_ARM, _AMNESIAC)),
    "update_correctness": (("revision_accuracy",), (_ARM,)),
    "deprecation_correctness": (("revision_accuracy",), (_ARM,)),
    "revision_accuracy": (("revision_accuracy",), (_ARM,)),
    "revision_persistence": (("revision_persistence",), (_ARM,)),
    "action_alignment": (("action_alignment",), (_ARM,)),
    "privacy": (("privacy",), (_ARM,)),
    "consistency": (("consistency",), (_ARM,)),
    "consistency_agreement": (("consistency",), (_ARM,)),
    "attribution": (("attribution",), (_ARM,)),
}
_COMPOSITES: Final[Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    # composite -> (its judged parts, whose answers it reads); in dependency order.
    "drift_c": (("mvot", "revision_accuracy", "action_alignment"), (_ARM, _AMNESIAC)),
    "drift_c_lift": (("drift_c",), (_ARM, _AMNESIAC)),
    "tes": (("mvot",), (_ARM, _AMNESIAC, _REFERENCE)),
    "drift_e": (("tes",), (_ARM, _AMNESIAC, _REFERENCE)),
}
_COMPOSITE_FEEDS: Final = ("error_rate", "revision_accuracy", "action_alignment")


@dataclass(frozen=True)
class JudgeFailures:
    """The answers of a cell the reader or judge failed on, and the figures they leave partial.

    Attributes:
        answers: The cell's probes (one answer each from the arm, the amnesiac and the
            reference compressor).
        arm: The arm's own answers that failed.
        amnesiac: The amnesiac's answers to the same probes that failed (MVOT, DRIFT-C, Lift).
        reference: The reference compressor's answers that failed (TES, DRIFT-E).
        first: The first failure's message (one line), for the reader of a report.
        partly: Figures kept over the answers judged, each with how many of its answers failed.

    """

    answers: int
    arm: int
    amnesiac: int = 0
    reference: int = 0
    first: str = ""
    partly: Mapping[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Failed answers over the three answer sets."""
        return self.arm + self.amnesiac + self.reference

    def line(self) -> str:
        """``the reader or judge failed on 3 of 59 answers (1 of the amnesiac's)``."""
        sides = ((_AMNESIAC, self.amnesiac), ("reference compressor", self.reference))
        others = [f"{count} of the {whose}'s" for whose, count in sides if count]
        own = f"{self.arm} of its {self.answers} answers"
        return f"{JUDGE_FAILED} {own}" + (f" ({', '.join(others)} as well)" if others else "")

    def short(self) -> str:
        """``judge failed on 3/59 answers`` (the arm's own; else the baselines' count)."""
        if self.arm:
            return f"judge failed on {self.arm}/{self.answers} answers"
        return f"judge failed on {self.amnesiac + self.reference} baseline answers"

    def merged(self, other: JudgeFailures) -> JudgeFailures:
        """The failures of two cells together (an arm over its cells)."""
        return JudgeFailures(
            self.answers + other.answers,
            self.arm + other.arm,
            self.amnesiac + other.amnesiac,
            self.reference + other.reference,
            self.first or other.first,
            {**other.partly, **self.partly},
        )

    def to_json(self) -> dict[str, Any]:
        """Counts, first message and partly judged figures, as the JSON summary holds them."""
        return {
            "answers": self.answers,
            "arm": self.arm,
            "amnesiac": self.amnesiac,
            "reference": self.reference,
            "first": self.first,
            "partly_judged": dict(self.partly),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeFailures:
        """Read what :meth:`to_json` wrote."""
        return cls(
            int(data.get("answers", 0)),
            int(data.get("arm", 0)),
            int(data.get("amnesiac", 0)),
            int(data.get("reference", 0)),
            str(data.get("first", "")),
            dict(data.get("partly_judged") or {}),
        )


def _sorted(table: pa.Table) -> pa.Table:
    keys = ("replicate", "checkpoint", "probe_id")
    return table.take(pc.sort_indices(table, sort_keys=[(k, "ascending") for k in keys]))


def _failed(table: pa.Table | None, rows: int) -> tuple[npt.NDArray[np.bool_], str]:
    """Per answer (sorted as the metric suite sorts them), whether it failed; the first message."""
    if table is None or "judge_error" not in table.column_names:
        return np.zeros(rows, dtype=bool), ""
    errors = [(e or "").strip() for e in _sorted(table).column("judge_error").to_pylist()]
    first = next((e for e in errors if e), "")
    return np.array([bool(e) for e in errors], dtype=bool), first.splitlines()[0] if first else ""


def judge_failures(
    answers: pa.Table,
    amnesiac: pa.Table,
    reference: pa.Table | None,
    values: Mapping[str, float | None],
    probe_metrics: Sequence[str] = (),
    entered: Collection[str] | None = None,
) -> tuple[dict[str, str], JudgeFailures | None]:
    """Which figures of a cell failed reader or judge calls leave not measured or partial.

    Args:
        answers: The arm's answers (``probe_type, subtype`` and optional ``judge_error``).
        amnesiac: The amnesiac's answers to the same probes.
        reference: The reference compressor's answers to them (``None``: fixed figures).
        values: Each figure's whole-cell value as computed over the judged answers.
        probe_metrics: Registered metrics over probes: they may read any answer.
        entered: The judged parts of DRIFT-C that entered it (Revision and Action enter only
            with enough probes, as the metrics counted them); ``None``: every part.

    Returns:
        The figures not measured, each with why, and the cell's failures (``None`` when no
        answer failed).

    """
    n = answers.num_rows
    failed = {
        _ARM: _failed(answers, n),
        _AMNESIAC: _failed(amnesiac, n),
        _REFERENCE: _failed(reference, n),
    }
    counts = {side: int(mask.sum()) for side, (mask, _) in failed.items()}
    if not any(counts.values()):
        return {}, None
    sorted_answers = _sorted(answers)
    feeding = metric_masks(
        np.asarray(sorted_answers.column("probe_type").to_pylist(), dtype=object),
        np.asarray(sorted_answers.column("subtype").to_pylist(), dtype=object),
    )
    not_measured: dict[str, str] = {}
    partly: dict[str, str] = {}

    def account(metric: str, feeds: npt.NDArray[np.bool_], sides: tuple[str, ...]) -> None:
        lost = np.logical_or.reduce([failed[side][0] for side in sides]) & feeds
        k, total = int(lost.sum()), int(feeds.sum())
        if not k:
            return
        if values.get(metric) is None:
            not_measured[metric] = f"{JUDGE_FAILED} {k} of the {total} answers it rests on"
        else:
            partly[metric] = f"{k} of its {total} answers unjudged"

    for metric, (feeds, sides) in _RESTS_ON.items():
        account(metric, np.logical_or.reduce([feeding(f) for f in feeds]), sides)
    for metric in probe_metrics:
        account(metric, np.ones(n, dtype=bool), (_ARM,))
    composite_feeds = np.logical_or.reduce([feeding(f) for f in _COMPOSITE_FEEDS])
    for metric, (parts, sides) in _COMPOSITES.items():
        lost_parts = [
            part
            for part in parts
            if part in not_measured
            and (part in _COMPOSITES or part == "mvot" or entered is None or part in entered)
        ]
        if lost_parts:
            # Never renormalised over the parts left: that would be a figure never judged.
            not_measured[metric] = f"{JUDGE_FAILED} every answer its {lost_parts[0]} rests on"
            continue
        account(metric, composite_feeds, sides)
    first = next((message for mask, message in failed.values() if message), "")
    return not_measured, JudgeFailures(
        n, counts[_ARM], counts[_AMNESIAC], counts[_REFERENCE], first, partly
    )
