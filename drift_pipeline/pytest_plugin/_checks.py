"""What fails a test: an invalid cell, a bound not met, a regression against the baseline.

Every problem is one line that names the metric and the figures; a regression also lists the
probes whose verdict changed since the baseline (by replicate, id, type and question).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

    from drift_pipeline.evaluation import CellMetrics, MetricRow
    from drift_pipeline.pipeline import CellResult
    from drift_pipeline.sources import SourceWorld

    from ._record import RunRecord
    from ._suite import DriftSuite

__all__ = ["GateFailure", "cell_problems"]

SHOWN_PROBES = 5
"""Probes listed per direction of change; the rest are counted."""
SHOWN_FAULTS = 3


class GateFailure(AssertionError):
    """A test's failure: the lines that say which figures failed and why."""


def _figure(row: MetricRow) -> str:
    if row.value is None:
        return "undefined"
    if row.ci_low is None or row.ci_high is None:
        return f"{row.value:.3f}"
    return f"{row.value:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"


def _whole(metrics: CellMetrics, name: str) -> MetricRow | None:
    try:
        return metrics.get(name)
    except KeyError:
        return None


def cell_problems(suite: DriftSuite, world: SourceWorld, cell: CellResult) -> list[str]:
    """Everything wrong with one cell, one line (or block) per problem; empty: it passes."""
    problems: list[str] = []
    if not cell.valid:
        faults = "; ".join(cell.faults[:SHOWN_FAULTS])
        problems.append(
            f"  not valid: {cell.fault_rate:.1%} of its backend calls faulted or were skipped "
            f"(limit {suite.options.max_fault_rate:.1%}); first: {faults}"
        )
        return problems  # figures of an invalid cell are not to be judged
    problems += _bound_problems(suite, cell)
    if suite.baseline is not None:
        problems += _baseline_problems(suite, world, cell)
    return problems


def _undefined(cell: CellResult, name: str) -> str:
    reason = dict(getattr(cell.metrics, "not_measured", {}) or {}).get(name)
    if reason:
        return f"not measured: {reason}"
    if name in (getattr(cell.metrics, "not_applicable", ()) or ()):
        return "not applicable to this world"
    return "undefined for this cell"


def _bound_problems(suite: DriftSuite, cell: CellResult) -> list[str]:
    problems = []
    thresholds = suite.options.thresholds
    for name, bound, below in [
        *((n, b, True) for n, b in thresholds.minimum.items()),
        *((n, b, False) for n, b in thresholds.maximum.items()),
    ]:
        row = _whole(cell.metrics, name)
        if row is None or row.value is None:
            problems.append(
                f"  {name}: no figure to check against {bound:g}: {_undefined(cell, name)}"
            )
        elif (row.value < bound) if below else (row.value > bound):
            side = "below the minimum" if below else "above the maximum"
            problems.append(f"  {name} {_figure(row)} is {side} {bound:g}")
        elif cell.metrics.bounds.get(name) == ("upper" if below else "lower"):
            # A bound on the passing side shows nothing: the model spend behind it is unknown.
            most = "at most" if below else "at least"
            problems.append(
                f"  {name} is {most} {_figure(row)} (its model tokens are unknown), so it "
                f"cannot show the {'minimum' if below else 'maximum'} {bound:g} is met"
            )
    return problems


def _baseline_problems(suite: DriftSuite, world: SourceWorld, cell: CellResult) -> list[str]:
    from drift_pipeline.evaluation import metric_specs
    from drift_pipeline.report import cell_scoring

    assert suite.baseline is not None
    record = suite.baseline.get((world.source.id, cell.horizon, cell.arm.key))
    where = f"{suite.options.baseline}"
    if record is None:
        return [f"  no baseline for this cell in {where}: run with --drift-output to make one"]
    if record.content_hash != world.source.content_hash:
        return [f"  the scenario changed since the baseline in {where}; make a new baseline"]
    scoring = cell_scoring(cell)
    if (record.reader, record.judge) != (scoring.reader, scoring.judge):
        return [
            f"  the baseline was read by {record.reader} / {record.judge}, this run by "
            f"{scoring.reader} / {scoring.judge}: make a new baseline with this version"
        ]
    if not scoring.offline:
        return [
            f"  this run was read by {scoring.reader} / {scoring.judge}, whose verdicts can "
            "differ between runs: a baseline is compared only under the offline reader"
        ]
    diff = _paired(suite, world, cell, record)
    directions = {spec.name: spec.direction for spec in metric_specs()}
    problems = []
    for name in suite.options.baseline_metrics:
        row = _whole(diff, name)
        direction = directions.get(name, "neutral")
        if row is None or row.value is None or row.ci_low is None or row.ci_high is None:
            continue  # undefined in either run: nothing to compare
        worse = row.ci_high < 0 if direction == "higher" else row.ci_low > 0
        if direction == "neutral" or not worse:
            continue
        before = record.metrics.get(name, {}).get("value")
        now = _whole(cell.metrics, name)
        verb = "fell" if direction == "higher" else "rose"
        problems.append(
            f"  {name} {verb} from {_number(before)} (baseline) to "
            f"{_number(now.value if now else None)}: {row.value:+.3f} "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}] paired 95%, worse beyond the interval"
        )
    if problems:
        problems += _changed_probes(suite, world, cell, record)
    return problems


def _number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def _paired(
    suite: DriftSuite, world: SourceWorld, cell: CellResult, record: RunRecord
) -> CellMetrics:
    """Paired differences this run − baseline, on the same probes, sessions and retrievals."""
    import pyarrow as pa

    from drift_pipeline.evaluation import compare_arms, judge_all
    from drift_pipeline.keys import CellKey
    from drift_pipeline.pipeline import REFERENCE_ARM, load_arm
    from drift_pipeline.storage import PROBES, StorageRoot

    root = StorageRoot.from_url(suite.data)
    probes = root.read_table(PROBES, world.key)
    amnesiac = pa.Table.from_pydict(judge_all(probes, {}))
    current = load_arm(root, CellKey(world.key, cell.arm.key))
    reference = load_arm(root, CellKey(world.key, REFERENCE_ARM.key))
    return compare_arms(current, record.arm_data(), amnesiac, reference, world.horizon)


def _verdicts(answers: pa.Table) -> dict[str, bool]:
    return {
        f"{r}/{p}": bool(c)
        for r, p, c in zip(
            answers["replicate"].to_pylist(),
            answers["probe_id"].to_pylist(),
            answers["correct"].to_pylist(),
            strict=True,
        )
        if c is not None
    }


def _changed_probes(
    suite: DriftSuite, world: SourceWorld, cell: CellResult, record: RunRecord
) -> list[str]:
    from drift_pipeline.keys import CellKey
    from drift_pipeline.pipeline import load_arm

    now = _verdicts(load_arm(suite.data, CellKey(world.key, cell.arm.key)).answers)
    before = _verdicts(record.arm_data().answers)
    lost = sorted(k for k, right in before.items() if right and now.get(k) is False)
    gained = sorted(k for k, right in before.items() if not right and now.get(k) is True)
    lines = [f"  probes changed since the baseline: {len(lost)} now wrong, {len(gained)} now right"]
    for label, keys in (("now wrong", lost), ("now right", gained)):
        lines += _probe_lines(label, keys, record.questions)
    return lines


def _probe_lines(label: str, keys: list[str], questions: Mapping[str, str]) -> list[str]:
    lines = []
    for key in keys[:SHOWN_PROBES]:
        replicate, _, probe = key.partition("/")
        lines.append(f"    {label}: replicate {replicate} {probe} ({questions.get(key, '?')})")
    if len(keys) > SHOWN_PROBES:
        lines.append(f"    … and {len(keys) - SHOWN_PROBES} more {label}")
    return lines
