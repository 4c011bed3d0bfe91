"""Recall per probe subtype: the share of a cell's scored probes of each subtype answered right.

An imported dataset reports its figures per question category (LoCoMo's single-hop, temporal,
adversarial…), and its categories are the probes' subtypes, so this is the figure a replay is
set beside published numbers with. It is computed like the suite's probe rates: per replicate
the mean of ``correct`` over scored rows, then the mean over replicates; the 95% interval
resamples probes within each replicate (every imported replay has a single replicate, so a
replicate draw would add nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from ._bootstrap import MetricRow, Sample, summarise

__all__ = ["pooled_subtype_rows", "subtype_recall"]


def subtype_recall(
    answers: pa.Table, *, column: str = "correct", n_boot: int = 1000, seed: int = 0
) -> dict[str, Sample]:
    """Recall per ``subtype`` of ``answers`` (``replicate, subtype, correct[, judge_error]``).

    Rows whose ``correct`` is null or whose reader or judge call failed are not scored. The
    result is ordered by subtype name: each sample's value, bootstrap draws and ``n`` (the
    probes scored). With ``column="score"`` it is the mean graded score per subtype instead
    (LoCoMo's token F1 under an LLM reader).
    """
    if answers.num_rows == 0:
        return {}
    replicate = np.asarray(answers.column("replicate").to_pylist())
    subtype = np.asarray(answers.column("subtype").to_pylist(), dtype=object)
    raw = answers.column(column).to_pylist()
    scored = np.array([value is not None for value in raw], dtype=bool)
    if "judge_error" in answers.column_names:
        failed = [bool((e or "").strip()) for e in answers.column("judge_error").to_pylist()]
        scored &= ~np.asarray(failed, dtype=bool)
    correct = np.array([float(value or 0.0) for value in raw], dtype=np.float64)
    rng = np.random.default_rng(seed)
    out: dict[str, Sample] = {}
    for name in sorted({str(s) for s in subtype}):
        groups = [
            correct[(subtype == name) & scored & (replicate == r)] for r in np.unique(replicate)
        ]
        groups = [g for g in groups if g.size]
        n = sum(g.size for g in groups)
        if not groups:
            out[name] = Sample(None, np.zeros(0), 0)
            continue
        point = float(np.mean([g.mean() for g in groups]))
        draws = (
            np.mean(
                [g[rng.integers(0, g.size, size=(n_boot, g.size))].mean(axis=1) for g in groups],
                axis=0,
            )
            if n_boot
            else np.full(0, point)
        )
        out[name] = Sample(point, draws, n)
    return out


def pooled_subtype_rows(
    cells: Sequence[Mapping[str, Sample]], level: float = 0.95, metric: str = "recall"
) -> dict[str, MetricRow]:
    """Recall per subtype over several cells (an arm on every conversation of a dataset).

    Pooled over questions, as datasets report their categories: each cell weighs by the probes
    it scored, value and bootstrap draws alike (the cells' worlds are independent).
    """
    names = sorted({name for cell in cells for name in cell})
    rows: dict[str, MetricRow] = {}
    for name in names:
        parts = [cell[name] for cell in cells if name in cell and cell[name].value is not None]
        total = sum(p.n for p in parts)
        if not parts or total == 0:
            rows[name] = MetricRow(f"{metric}:{name}", None, None, None, None, 0)
            continue
        value = sum(float(p.value or 0.0) * p.n for p in parts) / total
        sized = [p for p in parts if p.draws.size]
        width = min((p.draws.size for p in sized), default=0)
        draws = (
            np.sum([p.draws[:width] * p.n for p in sized], axis=0) / sum(p.n for p in sized)
            if sized and len(sized) == len(parts)
            else np.zeros(0)
        )
        rows[name] = summarise(f"{metric}:{name}", None, value, draws, total, level)
    return rows
