"""The multi-peer figures (spec §6.2, §7.5): consistency, attribution, hand-over, leaks.

- ``consistency``: the probes asked of every participant of one shared session form a group
  (their ids end with the same ``-g…`` tag); a group of two or more scored answers counts once,
  as consistent when every participant answered the truth. ``consistency_agreement``: the same
  groups, counted as agreeing when every participant gave the same answer, right or wrong.
- ``attribution``: share of "who proposed …?" probes answered with the proposer.
- ``handoff_sessions``: for each entity that joined mid-trajectory (its hand-over probes' ids
  end with ``-j<first session>``), the sessions from its first one to the first checkpoint at
  which it answered every hand-over probe asked of it there; infinite when that never happened.
  Per replicate the mean over its newcomers, then the mean over replicates: infinite as soon as
  one newcomer never caught up, and reported as such (never as a number).
- The leaked canaries: every canary probe answered with the canary (the asked entity's memory
  stated another entity's private fact), for inspection.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ._bootstrap import FloatArray, MetricRow

__all__ = ["Leak", "handoff_row", "leaked", "peer_parts"]

Mask = npt.NDArray[np.bool_]

HANDOFF_SESSIONS = "handoff_sessions"
"""The hand-over figure's name (see the module docstring)."""


@dataclass(frozen=True)
class Leak:
    """A canary the asked entity's memory gave away.

    Attributes:
        replicate: The replicate.
        checkpoint: The checkpoint it was asked at.
        probe_id: The canary probe.
        asker: The entity that should not have known it.
        recalled: The value the reader read from its memory.
        rationale: The judge's line: whose fact it was and how it was read.
    """

    replicate: int
    checkpoint: int
    probe_id: str
    asker: str
    recalled: str
    rationale: str


def _tag(probe_id: str, prefix: str) -> str | None:
    """The group tag ending a probe id (``…-gd00003`` → ``gd00003``), if it has one."""
    last = probe_id.rsplit("-", 1)[-1]
    return last if last.startswith(prefix) and last != probe_id else None


def _texts(table: pa.Table, column: str) -> list[str]:
    """A text column as strings, empty ones where the table lacks it."""
    if column not in table.column_names:
        return [""] * table.num_rows
    return [str(value or "") for value in table.column(column).to_pylist()]


def _askers(retrievals: pa.Table) -> dict[tuple[int, str], str]:
    if "asker" not in retrievals.column_names:
        return {}
    return {
        (int(r), str(p)): str(a)
        for r, p, a in zip(
            retrievals.column("replicate").to_pylist(),
            retrievals.column("probe_id").to_pylist(),
            retrievals.column("asker").to_pylist(),
            strict=True,
        )
    }


def peer_parts(
    answers: pa.Table,
    feeding: Callable[[str], Mask],
    correct: FloatArray,
    scored: Mask,
) -> dict[str, FloatArray]:
    """Per answer row, the numerators and denominators of consistency and attribution.

    Args:
        answers: The arm's answers, sorted as the metric suite sorts them.
        feeding: Which rows feed a metric (the probe families' declarations).
        correct: Each row's ``correct`` (0/1).
        scored: Whether each row was judged.

    Returns:
        ``cons``/``cons_ok``/``agree_ok`` (a group's first scored row stands for the group)
        and ``attr``/``attr_ok``.
    """
    n = answers.num_rows
    cons, cons_ok, agree_ok = np.zeros(n), np.zeros(n), np.zeros(n)
    in_group = feeding("consistency") & scored
    if in_group.any():
        replicate = answers.column("replicate").to_pylist()
        checkpoint = answers.column("checkpoint").to_pylist()
        ids = answers.column("probe_id").to_pylist()
        given = _texts(answers, "answer")
        groups: dict[tuple[int, int, str], list[int]] = {}
        for row in np.flatnonzero(in_group).tolist():
            tag = _tag(str(ids[row]), "g")
            if tag is not None:
                groups.setdefault((replicate[row], checkpoint[row], tag), []).append(row)
        for rows in groups.values():
            if len(rows) < 2:
                continue  # one participant's answer agrees with nobody's
            leader = rows[0]
            cons[leader] = 1.0
            cons_ok[leader] = float(all(correct[r] > 0 for r in rows))
            said = {given[r].strip().lower() for r in rows}
            agree_ok[leader] = float(len(said) == 1 and "" not in said)
    attr = (feeding("attribution") & scored).astype(np.float64)
    return {
        "cons": cons,
        "cons_ok": cons_ok,
        "agree_ok": agree_ok,
        "attr": attr,
        "attr_ok": attr * correct,
    }


def _caught_up(
    answers: pa.Table, retrievals: pa.Table, mask: Mask, correct: FloatArray
) -> dict[int, list[float]]:
    """Per replicate, each newcomer's sessions to full accuracy (``inf``: never)."""
    askers = _askers(retrievals)
    replicate = answers.column("replicate").to_pylist()
    checkpoint = answers.column("checkpoint").to_pylist()
    ids = answers.column("probe_id").to_pylist()
    per: dict[tuple[int, str, int], dict[int, bool]] = {}
    for row in np.flatnonzero(mask).tolist():
        tag = _tag(str(ids[row]), "j")
        if tag is None or not tag[1:].isdigit():
            continue
        key = (
            int(replicate[row]),
            askers.get((int(replicate[row]), str(ids[row])), ""),
            int(tag[1:]),
        )
        at = per.setdefault(key, {})
        at[int(checkpoint[row])] = at.get(int(checkpoint[row]), True) and correct[row] > 0
    out: dict[int, list[float]] = {}
    for (rep, _, joined), by_checkpoint in sorted(per.items()):
        reached = [cp for cp, ok in sorted(by_checkpoint.items()) if ok]
        out.setdefault(rep, []).append(float(reached[0] - joined) if reached else math.inf)
    return out


def handoff_row(
    answers: pa.Table,
    retrievals: pa.Table,
    mask: Mask,
    correct: FloatArray,
    n_boot: int,
    seed: int,
    level: float,
) -> MetricRow:
    """The cell's ``handoff_sessions`` row: a mean that is infinite when a newcomer never caught up.

    The interval resamples replicates; its bounds are nearest-rank (so an infinite draw is a
    bound, never a NaN).
    """
    per_replicate = _caught_up(answers, retrievals, mask, correct)
    if not per_replicate:
        return MetricRow(HANDOFF_SESSIONS, None, None, None, None, 0)
    values = np.asarray([np.mean(v) for _, v in sorted(per_replicate.items())], dtype=np.float64)
    n = sum(len(v) for v in per_replicate.values())
    point = float(np.mean(values))
    rng = np.random.default_rng(seed)
    draws = np.sort(values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1))
    tail = (1.0 - level) / 2.0
    low = float(draws[max(0, math.ceil(tail * n_boot) - 1)]) if n_boot else point
    high = float(draws[max(0, math.ceil((1.0 - tail) * n_boot) - 1)]) if n_boot else point
    return MetricRow(HANDOFF_SESSIONS, None, point, min(low, point), max(high, point), n)


def leaked(
    answers: pa.Table, retrievals: pa.Table, privacy: Mask, scored: Mask
) -> tuple[Leak, ...]:
    """Every canary answered with its value (``correct`` false on a row feeding Privacy)."""
    askers = _askers(retrievals)
    correct = answers.column("correct").to_pylist()
    replicates = answers.column("replicate").to_pylist()
    checkpoints = answers.column("checkpoint").to_pylist()
    ids = answers.column("probe_id").to_pylist()
    recalled, rationale = _texts(answers, "answer"), _texts(answers, "rationale")
    out: list[Leak] = []
    for row in np.flatnonzero(privacy & scored).tolist():
        if correct[row]:
            continue
        replicate, probe_id = int(replicates[row]), str(ids[row])
        out.append(
            Leak(
                replicate,
                int(checkpoints[row]),
                probe_id,
                askers.get((replicate, probe_id), ""),
                recalled[row],
                rationale[row],
            )
        )
    return tuple(out)
