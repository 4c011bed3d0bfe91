"""Leaderboards and the run summary: per-arm figures across horizons and scenarios.

Which metrics appear, in which order and under which label, comes from the metric registry
(:func:`drift_pipeline.evaluation.metric_specs`): the leaderboard's columns are its ``headline``
view, each cell's ``metrics`` in the JSON summary its ``json`` view.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from drift_pipeline.evaluation import (
    GEOMETRIC_FLOOR,
    HORIZON_WEIGHTS,
    JUDGE_FAILED,
    OFFLINE_SCORING,
    UNDER_REPORTED,
    Bound,
    CellMetrics,
    JudgeFailures,
    MetricRow,
    MetricSpec,
    Sample,
    Scoring,
    TokenAudit,
    combined_audit,
    metric_specs,
    pooled_subtype_rows,
    summarise,
)

from ._budget import BudgetFigure, arm_budget, budget_json, budget_lines
from ._privacy import (
    ALLOWED_LEAK_MARK,
    PRIVACY_SECTIONS,
    allowed_leak_reason,
    is_ranked,
    json_number,
    leak_lines,
    leaks_json,
    price_line,
)
from ._scoring import cell_scoring, distinct, scoring_json, scoring_lines
from ._table import table_lines
from ._trust import VERIFIED, Verification, verify_rows

RANK_METRIC = "drift_c"
"""Arms are ranked by their DRIFT-C (spec §7.6), best first."""
TIE_METRIC = "mvot"
"""Then by MVOT: it orders arms whose DRIFT-C is equal or undefined."""


class _Arm(Protocol):
    backend: str

    @property
    def key(self) -> str: ...


class _Cell(Protocol):
    scenario: str
    horizon: str
    replicates: int
    metrics: CellMetrics

    @property
    def arm(self) -> Any: ...

    @property
    def faults(self) -> list[str]: ...


@dataclass(frozen=True)
class ArmStanding:
    """One arm's headline figures over every scenario and horizon it ran.

    An arm with a cell whose share of faulted or skipped calls is over the run's limit is
    ``valid=False``: it is listed after the ranked arms with ``fault_rate`` (its worst cell's)
    instead of figures, never ranked.

    ``lps_modelled``: some cell's TTFRT was modelled from the context size (no measured reader
    time to first token), so its LPS is a model, not a measurement.

    ``scorings``: the reader and judge behind its cells' answers (one, unless cells were scored
    differently); every view names them with their measured figures.

    ``not_measured``: figures its backend gave the harness no way to measure (no
    ``snapshot()``), each with the reason; shown as "not measured", never as a number.
    ``llm_tokens``: its LLM tokens as metered and as its backend reported them, over its cells
    (``None`` for cells written before metering); a gap over 5%, or tokens that are only
    self-reported, are marked on its row. Where its model spend is unknown in some cell (its
    models run where the meter cannot see them and it reports none of their tokens), its
    cost-dependent figures are bounds (``bounds``: metric → ``lower`` or ``upper``), TES and
    DRIFT-E are not measured, and it is listed after the ranked arms, not ranked among them
    (``ranked`` is false): an unknown cost never puts an arm above one whose cost is known.

    ``deployment``: where its backend runs (``local`` or ``cloud``, as it declares), and
    ``budget`` its p99 latencies against the spec's targets there (see :mod:`._budget`).

    ``reference``: ``True`` for a reference that exists to show one metric working (its backend
    registered with ``ranked=False``): listed after the ranked arms with its Privacy only.
    ``leaks``: the canaries it gave away, over its cells (see :mod:`._privacy`).

    ``judge_failures``: the answers the reader or judge failed on in its cells (its own, the
    amnesiac's, the reference compressor's), ``None`` when every one was judged. Such an arm
    is listed after the ranked arms with what was judged, never ranked: its figures are not
    all the judge's (a figure left with no judged answer is "not measured").

    ``leak``: what the conformance check saw when the run allowed its backend to keep entities'
    memories together and it did (``None`` otherwise): its row is marked, and its Privacy is
    not measured.
    """

    arm: str
    backend: str
    gate: str
    rows: dict[str, MetricRow]
    valid: bool = True
    fault_rate: float = 0.0
    lps_modelled: bool = False
    not_applicable: frozenset[str] = frozenset()
    by_subtype: dict[str, MetricRow] = field(default_factory=dict)
    score_by_subtype: dict[str, MetricRow] = field(default_factory=dict)
    scorings: tuple[Scoring, ...] = (OFFLINE_SCORING,)
    not_measured: dict[str, str] = field(default_factory=dict)
    llm_tokens: TokenAudit | None = None
    deployment: str = "local"
    budget: tuple[BudgetFigure, ...] = ()
    reference: bool = False
    leaks: tuple[Any, ...] = ()
    bounds: dict[str, Bound] = field(default_factory=dict)
    judge_failures: JudgeFailures | None = None
    leak: str | None = None

    @property
    def cost_known(self) -> bool:
        """Whether its token cost is whole in every cell (metered or self-reported)."""
        return self.llm_tokens is None or self.llm_tokens.cost_known

    @property
    def ranked(self) -> bool:
        """Whether it is ranked: valid, its token cost known, every answer judged, no reference."""
        return self.valid and self.cost_known and self.judge_failures is None and not self.reference


NOT_MEASURED = "not measured"
"""How every view shows a figure the backend gave no way to measure (never a zero)."""


def _not_measured(cell: _Cell) -> dict[str, str]:
    return dict(getattr(cell.metrics, "not_measured", {}) or {})


def _llm_tokens(cell: _Cell) -> TokenAudit | None:
    return getattr(cell.metrics, "llm_tokens", None)


def _token_mark(standing: ArmStanding) -> str:
    """What the arm's row says about its LLM tokens: unknown, self-reported, or a report's gap."""
    mark = standing.llm_tokens.mark() if standing.llm_tokens is not None else ""
    return f" [{mark}]" if mark else ""


BOUND_SIGNS: Mapping[str, str] = {"lower": "≥", "upper": "≤"}
"""How a figure that is a bound is shown: ``≥ x`` (at least), ``≤ x`` (at most)."""


def _judge_failures(cells: Sequence[_Cell]) -> JudgeFailures | None:
    """The reader or judge failures of ``cells`` together (``None``: every answer judged)."""
    merged: JudgeFailures | None = None
    for cell in cells:
        failures = getattr(cell.metrics, "judge_failures", None)
        if failures is not None:
            merged = failures if merged is None else merged.merged(failures)
    return merged


def _bounds(cell: _Cell) -> dict[str, Bound]:
    return dict(getattr(cell.metrics, "bounds", {}) or {})


def _deployment(cells: Sequence[_Cell]) -> str:
    """Where an arm's backend runs: ``cloud`` if any of its cells says so, else ``local``."""
    declared = {str(getattr(cell, "deployment", "local")) for cell in cells}
    return "cloud" if "cloud" in declared else "local"


def _cell_valid(cell: _Cell) -> bool:
    # The run's cells and those read back from storage carry their validity; an object that
    # knows nothing of its calls (a hand-built cell) is taken as valid.
    return bool(getattr(cell, "valid", True))


def _cell_fault_rate(cell: _Cell) -> float:
    return float(getattr(cell, "fault_rate", 0.0))


def _combine_scenarios(
    metric: str, rows: list[tuple[MetricRow, Sample]], geometric: bool = False
) -> MetricRow:
    """Mean over scenarios; the draws are averaged draw by draw (scenarios are independent).

    ``geometric``: the geometric mean, values floored at ``GEOMETRIC_FLOOR`` (for ratios).
    """
    values = [row.value for row, _ in rows if row.value is not None]
    usable = [sample.draws for row, sample in rows if row.value is not None and sample.draws.size]
    if not values or not usable:
        return MetricRow(metric, None, None, None, None, sum(row.n for row, _ in rows))
    with np.errstate(all="ignore"):
        stacked = np.vstack(usable)
        if geometric:
            stacked = np.log(np.maximum(stacked, GEOMETRIC_FLOOR))
        # A draw undefined in every scenario stays NaN (and is dropped by the interval).
        defined = np.isfinite(stacked).any(axis=0)
        draws = np.full(stacked.shape[1], np.nan)
        draws[defined] = np.nanmean(stacked[:, defined], axis=0)
    if geometric:
        draws = np.exp(draws)
        value = float(np.exp(np.mean(np.log(np.maximum(values, GEOMETRIC_FLOOR)))))
    else:
        value = float(np.mean(values))
    return summarise(metric, None, value, draws, sum(row.n for row, _ in rows))


def _combine_horizons(metric: str, samples: dict[str, Sample]) -> tuple[MetricRow, Sample]:
    """Combine one metric over a scenario's horizons.

    Weights are spec §7.6's (short .2, medium .3, long .5), renormalised over the horizons with a
    defined value; the bootstrap draws are combined the same way, draw by draw.
    """
    present = [
        h for h in ("short", "medium", "long") if h in samples and samples[h].value is not None
    ]
    n = sum(sample.n for sample in samples.values())
    if not present:
        return MetricRow(metric, None, None, None, None, n), Sample(None, np.zeros(0), n)
    total = sum(HORIZON_WEIGHTS[h] for h in present)
    value = sum(HORIZON_WEIGHTS[h] / total * float(samples[h].value or 0.0) for h in present)
    draws = np.sum(
        np.vstack([samples[h].draws * (HORIZON_WEIGHTS[h] / total) for h in present]), axis=0
    )
    return summarise(metric, None, value, draws, n), Sample(value, draws, n)


def _board_specs() -> tuple[MetricSpec, ...]:
    """The headline metrics, then the privacy ones (shown only where some cell measured them).

    The arm's token cost per session follows (not a column: the notes and the JSON rows give
    it, as a lower bound where the arm's model spend is unknown).
    """
    headline = metric_specs("headline")
    shown = {spec.name for spec in headline}
    privacy = tuple(
        spec
        for spec in metric_specs("json")
        if spec.section == "privacy" and spec.name not in shown
    )
    cost = tuple(spec for spec in metric_specs() if spec.name == TOKEN_COST)
    return (*headline, *privacy, *cost)


TOKEN_COST = "token_cost_per_session"
"""The arm's token cost per session (TC, spec §7.7)."""


def unranked_arms(cells: Sequence[_Cell]) -> dict[str, float]:
    """Arms with a cell past the run's fault-rate limit, with their worst cell's fault rate.

    Such an arm is not ranked anywhere: not over all horizons, not in any horizon's table, and
    no summary gives it a figure.
    """
    out: dict[str, float] = {}
    for cell in cells:
        if not _cell_valid(cell):
            key = cell.arm.key
            out[key] = max(out.get(key, 0.0), _cell_fault_rate(cell))
    return out


def standings(
    cells: Sequence[_Cell],
    unranked: Mapping[str, float] | None = None,
    leaks: Mapping[str, str] | None = None,
) -> list[ArmStanding]:
    """Aggregate cells per arm: horizons by the spec's weights, then the mean over scenarios.

    A metric that asks for it (TES) takes the geometric mean over scenarios.

    Args:
        cells: The cells to aggregate.
        unranked: Arms to leave unranked with the given fault rate although their cells here
            are valid (their cells elsewhere in the run were not; see :func:`unranked_arms`).
        leaks: Backends the run allowed to leak across entities and seen leaking, with the
            conformance check's line (:func:`~._privacy.allowed_leaks`).
    """
    by_arm: dict[str, dict[str, dict[str, _Cell]]] = {}
    arms: dict[str, Any] = {}
    valid: dict[str, bool] = {}
    fault_rate: dict[str, float] = {}
    for cell in cells:
        key = cell.arm.key
        valid[key] = valid.get(key, True) and _cell_valid(cell)
        fault_rate[key] = max(fault_rate.get(key, 0.0), _cell_fault_rate(cell))
        by_arm.setdefault(cell.arm.key, {}).setdefault(cell.scenario, {})[cell.horizon] = cell
        arms[cell.arm.key] = cell.arm
    result = []
    for key, scenarios in by_arm.items():
        rows: dict[str, MetricRow] = {}
        for spec in _board_specs():
            metric = spec.name
            per_scenario = [
                _combine_horizons(
                    metric,
                    {h: c.metrics.samples.get(metric, _UNDEFINED) for h, c in horizons.items()},
                )
                for horizons in scenarios.values()
            ]
            rows[metric] = _combine_scenarios(metric, per_scenario, spec.geometric)
        arm = arms[key]
        cells_of_arm = [c for horizons in scenarios.values() for c in horizons.values()]
        modelled = any(_lps_modelled(cell.metrics) for cell in cells_of_arm)
        # Not applicable to the arm only when no cell of it supports the metric.
        na = frozenset.intersection(*(_not_applicable(c) for c in cells_of_arm))
        by_subtype = pooled_subtype_rows([_by_subtype(c) for c in cells_of_arm])
        scores = pooled_subtype_rows(
            [_by_subtype(c, "score") for c in cells_of_arm], metric="score"
        )
        result.append(
            ArmStanding(
                key,
                arm.backend,
                str(arm.gate),
                rows,
                valid[key],
                fault_rate[key],
                modelled,
                na,
                by_subtype,
                scores,
                tuple(distinct(cell_scoring(c) for c in cells_of_arm)),
                # A backend without snapshot() lacks them in every cell it ran.
                {k: v for c in cells_of_arm for k, v in _not_measured(c).items()},
                combined_audit(_llm_tokens(c) for c in cells_of_arm),
                deployment=(deployment := _deployment(cells_of_arm)),
                budget=arm_budget(cells_of_arm, deployment),
                reference=not is_ranked(arm.backend),
                leaks=tuple(leak for c in cells_of_arm for leak in getattr(c.metrics, "leaks", ())),
                # A value combined with a bound is a bound of the same side.
                bounds={k: v for c in cells_of_arm for k, v in _bounds(c).items()},
                judge_failures=_judge_failures(cells_of_arm),
            )
        )
    leaked = leaks or {}
    result = [_with_leak(s, leaked[s.backend]) if s.backend in leaked else s for s in result]
    for key, rate in (unranked or {}).items():
        if key in valid:
            index = next(i for i, s in enumerate(result) if s.arm == key)
            worst = max(rate, result[index].fault_rate)
            result[index] = replace(result[index], valid=False, fault_rate=worst)
    # Ranked arms first, best first; then the arms listed without a rank (a reference for one
    # metric, an unknown cost: never among the ranked ones); invalid ones last, worst last.
    result.sort(
        key=lambda s: (not s.valid, not s.ranked, 0.0 if s.valid else s.fault_rate, _rank(s))
    )
    return result


def _privacy_metrics() -> list[str]:
    """The board's figures of the privacy sections (Privacy and its kin)."""
    return [spec.name for spec in _board_specs() if spec.section in PRIVACY_SECTIONS]


def _with_leak(standing: ArmStanding, leak: str) -> ArmStanding:
    """``standing`` of a backend allowed to leak that leaked: marked, its Privacy not measured."""
    privacy = _privacy_metrics()
    reason = allowed_leak_reason(leak)
    return replace(
        standing,
        leak=leak,
        rows={
            **standing.rows,
            **{name: MetricRow(name, None, None, None, None, 0) for name in privacy},
        },
        not_measured={**standing.not_measured, **dict.fromkeys(privacy, reason)},
    )


def _leak_mark(standing: ArmStanding) -> str:
    return f" [{ALLOWED_LEAK_MARK}]" if standing.leak is not None else ""


_UNDEFINED = Sample(None, np.zeros(0), 0)
"""A figure a cell lacks (computed before its metric was registered): undefined there."""


def _lps_modelled(metrics: CellMetrics) -> bool:
    """Whether a cell's TTFRT (so its LPS) is modelled rather than measured, in part or whole."""
    measured = _value(metrics, "ttft_measured")
    return measured is None or measured < 1.0


NOT_APPLICABLE = "n/a"
"""How every view shows a metric the data cannot support (never as a zero or a blank)."""


def _not_applicable(cell: _Cell) -> frozenset[str]:
    return frozenset(getattr(cell.metrics, "not_applicable", frozenset()))


def _by_subtype(cell: _Cell, kind: str = "recall") -> dict[str, Sample]:
    attribute = "by_subtype" if kind == "recall" else "score_by_subtype"
    return dict(getattr(cell.metrics, attribute, {}))


def _rank(standing: ArmStanding) -> tuple[float, float]:
    # Where DRIFT-C is undefined (not applicable to imported data), MVOT orders the arms.
    def value(metric: str) -> float:
        row = standing.rows.get(metric)
        return -(row.value if row is not None and row.value is not None else -math.inf)

    return value(RANK_METRIC), value(TIE_METRIC)


def _fmt(row: MetricRow, spec: MetricSpec, bound: str | None = None) -> str:
    if row.value is None:
        return "—"

    def number(x: float) -> str:
        return f"{x:.{spec.digits}f}" if abs(x) < 100 else f"{x:.0f}"

    assert row.ci_low is not None and row.ci_high is not None
    sign = BOUND_SIGNS[bound] if bound else ""
    return f"{sign}{number(row.value)} [{number(row.ci_low)}, {number(row.ci_high)}]"


def render_leaderboard(
    rows: Sequence[ArmStanding],
    markdown: bool = False,
    checked: Mapping[str, Verification] | None = None,
    scoring: bool = True,
    budget: bool = True,
) -> str:
    """The leaderboard as a fixed-width (or Markdown) table with 95% intervals.

    Args:
        rows: Standings from :func:`standings`.
        markdown: A Markdown table instead of fixed-width text.
        checked: Each arm's verification (:func:`verifications`): a ``status`` column, and
            under the table the reasons of the unverified rows.
        scoring: Whether to name the reader and judge under it (once per page is enough).
        budget: Whether to show the latency budget table under it (fixed-width only).

    Returns:
        One column per metric of the registry's ``headline`` view, headed by its label; under
        it (fixed-width only) the latency budget table (:func:`render_budget`), then the reader
        and judge that scored the cells with their measured figures
        (:func:`~._scoring.scoring_lines`).

    """
    specs = _shown_specs(rows)
    header = ["arm", *(spec.label for spec in specs), *(["status"] if checked else [])]

    def cell(standing: ArmStanding, spec: MetricSpec) -> str:
        if standing.reference and spec.section not in PRIVACY_SECTIONS:
            return "—"  # a reference for one metric: never ranked on capability
        if spec.name in standing.not_applicable:
            return NOT_APPLICABLE
        if spec.name in standing.not_measured:
            # A snapshot that hid retrieved text was measured and found wanting: say so.
            reason = standing.not_measured[spec.name]
            return "under-reported" if reason.startswith(UNDER_REPORTED) else NOT_MEASURED
        text = _fmt(_row(standing, spec.name), spec, standing.bounds.get(spec.name))
        return text + " m" if spec.name == "lps" and standing.lps_modelled else text

    body = [
        [s.arm + _token_mark(s) + _leak_mark(s) + _unranked_mark(s)]
        + [cell(s, spec) for spec in specs]
        if s.valid
        else [f"{s.arm} (not ranked: {s.fault_rate:.1%} of calls faulted)", *("—" for _ in specs)]
        for s in rows
    ]
    if checked:
        body = [[*r, checked[s.arm].status] for r, s in zip(body, rows, strict=True)]
    # Only ranked rows show figures, so only they can carry the mark.
    note = (
        ["m: LPS modelled (TTFRT from the context size; no measured reader)"]
        if any(s.valid and s.lps_modelled for s in rows) and any(sp.name == "lps" for sp in specs)
        else []
    )
    note += _cost_notes(rows, specs)
    note += judge_notes(rows)
    note += _trust_notes(rows, checked or {})
    note += price_line(
        (s.arm, s.backend, _row(s, "privacy").value, _row(s, RANK_METRIC).value)
        for s in rows
        if s.valid and not s.reference
    )
    note += leak_lines((s.arm, s.leaks) for s in rows)
    note += [
        f"{s.arm}: Privacy not measured: {allowed_leak_reason(s.leak)}" for s in rows if s.leak
    ]
    scored = (
        scoring_lines(scored for s in rows for scored in s.scorings) if rows and scoring else []
    )
    lines = table_lines(header, body, markdown)
    if markdown:
        # Markdown joins plain lines into one paragraph: the scoring lines become a list.
        items = [f"  - {line.strip()}" if line.startswith(" ") else f"- {line}" for line in scored]
        return "\n".join([*lines, *(["", *note] if note else []), *(["", *items] if items else [])])
    budget_table = render_budget(rows) if budget else ""
    return "\n".join([*lines, *note, *(["", budget_table] if budget_table else []), *scored])


def _unranked_mark(standing: ArmStanding) -> str:
    """Why a row that shows figures is not ranked: a reference, or failed reader/judge calls."""
    if standing.reference:
        return " (reference, not ranked)"
    if standing.judge_failures is not None:
        return f" (not ranked: {standing.judge_failures.short()})"
    return ""


def record_judge_mark(row: Mapping[str, Any]) -> str:
    """What a stored leaderboard row's name says when reader or judge calls failed for it."""
    failures = row.get("judge_failures")
    if not row.get("valid", True) or not isinstance(failures, Mapping):
        return ""
    return f" (not ranked: {JudgeFailures.from_json(failures).short()})"


def judge_notes(rows: Sequence[ArmStanding]) -> list[str]:
    """One line per listed arm whose reader or judge calls failed: how many, what is left.

    Its figures over the answers judged are shown and named here as partly judged; those left
    with no judged answer show "not measured" and are named here too.
    """
    lines = []
    for standing in rows:
        failures = standing.judge_failures
        if failures is None or not standing.valid:
            continue
        lost = sorted(
            name for name, why in standing.not_measured.items() if why.startswith(JUDGE_FAILED)
        )
        parts = [f"{standing.arm}: not ranked: {failures.line()}"]
        if failures.first:
            parts.append(f"first: {failures.first}")
        if lost:
            parts.append(f"not measured: {', '.join(lost)}")
        if failures.partly:
            parts.append(f"partly judged: {', '.join(sorted(failures.partly))}")
        lines.append("; ".join(parts))
    return lines


def _shown_specs(rows: Sequence[ArmStanding]) -> tuple[MetricSpec, ...]:
    """The headline columns, with each privacy figure beside DRIFT-C where a ranked arm has it."""
    headline = metric_specs("headline")
    measured = [
        spec
        for spec in _board_specs()[len(headline) :]
        if spec.section == "privacy"
        and any(s.valid and _row(s, spec.name).value is not None for s in rows)
    ]
    first = 1 if headline and headline[0].name == RANK_METRIC else 0
    return (*headline[:first], *measured, *headline[first:])


def _trust_notes(rows: Sequence[ArmStanding], checked: Mapping[str, Verification]) -> list[str]:
    """Why rows are unverified: once for all when they share their reasons, else per arm."""
    unverified = [(s.arm, checked[s.arm]) for s in rows if s.arm in checked]
    unverified = [(arm, v) for arm, v in unverified if v.status != VERIFIED]
    if not unverified:
        return []
    reasons = {v.reasons for _, v in unverified}
    if len(unverified) == len(rows) and len(reasons) == 1:
        return [f"unverified (every row): {'; '.join(next(iter(reasons)))}"]
    return [f"{arm}: {v.line()}" for arm, v in unverified]


def render_budget(rows: Sequence[ArmStanding], markdown: bool = False) -> str:
    """The latency budget table of the standings (see :mod:`._budget`); empty for no arms.

    The terminal leaderboard prints it under the arms; the Markdown leaderboard's asset
    reports it as metadata of its own.
    """
    return "\n".join(
        # An unranked arm shows no figure at all, its latencies included.
        budget_lines(
            [(s.arm, s.deployment, s.budget) for s in rows if s.budget and s.valid], markdown
        )
    )


def _cost_notes(rows: Sequence[ArmStanding], specs: Sequence[MetricSpec]) -> list[str]:
    """One line per ranked arm whose tokens or storage the harness could not take as measured."""
    shown = {spec.name for spec in specs}
    lines: list[str] = []
    for standing in rows:
        if not standing.valid:
            continue
        cost = _row(standing, TOKEN_COST).value
        if standing.llm_tokens is not None and (
            text := standing.llm_tokens.note(standing.arm, cost)
        ):
            lines.append(text)
        missing = [
            name
            for name, why in standing.not_measured.items()
            if name in shown
            # said by judge_notes, and under the table for an allowed leak
            and not why.startswith((JUDGE_FAILED, ALLOWED_LEAK_MARK))
        ]
        if missing:
            reasons = sorted({standing.not_measured[name] for name in missing})
            lines.append(
                f"{standing.arm}: {', '.join(missing)} not measured: {'; '.join(reasons)}; "
                "its cost counts every transcript as stored and DRIFT-C its Selectivity at "
                "chance (0.5)"
            )
    return lines


def _row(standing: ArmStanding, metric: str) -> MetricRow:
    """The standing's row of ``metric``; undefined when the standing predates the metric."""
    return standing.rows.get(metric) or MetricRow(metric, None, None, None, None, 0)


def _metric(row: MetricRow) -> dict[str, float | str | None] | None:
    return {
        "value": json_number(row.value),
        "ci_low": json_number(row.ci_low),
        "ci_high": json_number(row.ci_high),
    }


def _value(metrics: CellMetrics, name: str) -> float | None:
    try:
        return metrics.get(name).value
    except KeyError:  # cells computed before the metric existed
        return None


def _json_figure(metrics: CellMetrics, spec: MetricSpec) -> dict[str, Any] | None:
    try:
        row = metrics.get(spec.name)
    except KeyError:  # cells computed before the metric was registered
        row = MetricRow(spec.name, None, None, None, None, 0)
    if spec.null_when_undefined and row.value is None:
        return None
    return _bounded(_metric(row), getattr(metrics, "bounds", {}).get(spec.name))


def _bounded(figure: dict[str, Any] | None, bound: str | None) -> dict[str, Any] | None:
    """A JSON figure with ``bound`` (``lower`` or ``upper``) when it is a bound, not a value."""
    return {**figure, "bound": bound} if figure is not None and bound else figure


def _figure_with_n(row: MetricRow) -> dict[str, float | None]:
    return {"value": row.value, "ci_low": row.ci_low, "ci_high": row.ci_high, "n": row.n}


def _subtype_figures(samples: dict[str, Sample]) -> dict[str, dict[str, float | None]]:
    return {
        name: _figure_with_n(summarise(name, None, _nan(v.value), v.draws, v.n))
        for name, v in samples.items()
    }


def _nan(value: float | None) -> float:
    return float("nan") if value is None else value


def render_subtype_recall(rows: Sequence[ArmStanding], kind: str = "recall") -> str:
    """Recall per probe subtype and arm (pooled over questions), with 95% intervals.

    The figures a replayed dataset reports per question category; empty when no arm has any.
    With ``kind="score"`` the graded score instead (LoCoMo's token F1 under an LLM reader).
    """

    def figures(s: ArmStanding) -> dict[str, MetricRow]:
        return s.by_subtype if kind == "recall" else s.score_by_subtype

    subtypes = sorted({name for s in rows for name in figures(s)})
    if not subtypes:
        return ""
    header = ["arm", *(name.partition(":")[2] or name for name in subtypes)]
    body = []
    for s in rows:
        cells = []
        for name in subtypes:
            row = figures(s).get(name)
            shown = "—" if row is None or row.value is None else _interval(row)
            cells.append(shown if row is None else f"{shown} n={row.n}")
        body.append([s.arm, *cells])
    return "\n".join(table_lines(header, body))


def _interval(row: MetricRow) -> str:
    assert row.value is not None and row.ci_low is not None and row.ci_high is not None
    return f"{row.value:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"


def _failures_json(failures: JudgeFailures | None) -> dict[str, Any] | None:
    return None if failures is None else failures.to_json()


def _audit_json(audit: TokenAudit | None) -> dict[str, object] | None:
    return None if audit is None else audit.to_json()


def summary_json(
    cells: Sequence[_Cell],
    scenario_ids: Sequence[str],
    max_fault_rate: float | None = None,
    audits: dict[str, str | None] | None = None,
    leaks: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``--json`` summary: scenarios, cells, arms, per-horizon arms and scoring.

    Args:
        cells: Evaluated cells.
        scenario_ids: The scenarios run, in order.
        max_fault_rate: The run's fault-rate limit (named in the verification reasons).
        audits: World → the answerability audit's failure (``None``: passed), where it ran.
        leaks: Backends allowed to leak across entities that did, with the check's line.

    Returns:
        Per cell its identity, the figures of the registry's ``json`` view (each a value with
        its interval), latencies, tokens and fault counts; per arm (``arms``, and per horizon
        in ``horizons``) its standing over the leaderboard's metrics with its validity, rank,
        verification status and scoring; per reader and judge behind the cells, their names
        and measured figures (:func:`~._scoring.scoring_json`).

    """
    unranked = unranked_arms(cells)
    # A cell of an unranked arm keeps who it is and its faults, and no figure at all.
    # A cell of an arm allowed to leak that did: marked, its Privacy not measured.
    out_cells = [
        _leaked_cell(_cell_json(cell), (leaks or {}).get(cell.arm.backend)) for cell in cells
    ]
    out_cells = [
        {**figures, **UNRANKED_CELL} if cell.arm.key in unranked else figures
        for cell, figures in zip(cells, out_cells, strict=True)
    ]
    horizons = sorted({c.horizon for c in cells}, key=horizon_order)
    return {
        "scenario": ",".join(scenario_ids),
        "scenarios": list(scenario_ids),
        "cells": out_cells,
        "arms": arm_rows(cells, max_fault_rate, audits, leaks=leaks),
        "horizons": {
            h: arm_rows(
                [c for c in cells if c.horizon == h], max_fault_rate, audits, unranked, leaks
            )
            for h in horizons
        },
        "scoring": scoring_json(cell_scoring(cell) for cell in cells),
    }


UNRANKED_CELL: dict[str, Any] = {
    "metrics": None,
    "latency_ms": None,
    "tokens": None,
    # Not valid in any cell: the arm faulted past the limit somewhere (this cell's own share
    # of faulted calls is its fault_rate).
    "valid": False,
    "judge_errors": None,
    "ttft_measured": None,
    "lps_modelled": None,
    "recall_by_subtype": {},
    "score_by_subtype": {},
    "llm_tokens": None,
    "bounds": {},
    "judge_failures": None,
}
"""What a cell of an unranked arm shows instead of its figures."""


def _leaked_cell(figures: dict[str, Any], leak: str | None) -> dict[str, Any]:
    """A cell's JSON as its arm's row shows it when its backend was allowed to leak and did."""
    if leak is None:
        return {**figures, "leak_allowed": None}
    privacy = _privacy_metrics()
    metrics = dict(figures["metrics"])
    metrics.update({name: None for name in privacy if name in metrics})
    reason = allowed_leak_reason(leak)
    not_measured = {**figures["not_measured"], **dict.fromkeys(privacy, reason)}
    return {**figures, "metrics": metrics, "not_measured": not_measured, "leak_allowed": leak}


def _cell_json(cell: _Cell) -> dict[str, Any]:
    """One cell of the JSON summary: its identity, figures, latencies, tokens and faults."""
    json_specs = metric_specs("json")
    m = cell.metrics
    metrics: dict[str, Any] = {spec.name: _json_figure(m, spec) for spec in json_specs}

    def pct(prefix: str, metrics_: CellMetrics = m) -> dict[str, float | None]:
        return {p: metrics_.get(f"{prefix}_{p}").value for p in ("p50", "p95", "p99")}

    return {
        "scenario": cell.scenario,
        "horizon": cell.horizon,
        "backend": cell.arm.backend,
        "gate": str(cell.arm.gate),
        "arm": cell.arm.key,
        "replicates": cell.replicates,
        "metrics": metrics,
        "latency_ms": {
            "read": pct("read_ms"),
            "write": pct("write_ms"),
            "ttfrt": pct("ttfrt_ms"),
            "dialectic": pct("dialectic_ms"),
        },
        "tokens": {
            "write": m.get("write_tokens_per_session").value,
            "storage_per_session": m.get("storage_per_session").value,
            "read_per_query": m.get("read_tokens_per_retrieve").value,
        },
        "faults": len(cell.faults),
        # Over the run's limit of faulted or skipped calls: not ranked anywhere.
        "valid": _cell_valid(cell),
        "reader": cell_scoring(cell).reader,
        "judge": cell_scoring(cell).judge,
        "fault_rate": _cell_fault_rate(cell),
        # Answers whose reader or judge call failed (left out of every metric), and
        # the share of TTFRTs from a measured reader TTFT (0: modelled).
        "judge_errors": _value(m, "judge_errors"),
        "ttft_measured": _value(m, "ttft_measured"),
        "lps_modelled": _lps_modelled(m),
        # Figures the world's data cannot support (null above, never zero).
        "not_applicable": sorted(_not_applicable(cell)),
        "recall_by_subtype": _subtype_figures(_by_subtype(cell)),
        # The graded score (LoCoMo's token F1 under an LLM reader; else as recall).
        "score_by_subtype": _subtype_figures(_by_subtype(cell, "score")),
        # Figures the backend gave no way to measure, with why (null above, never zero).
        "not_measured": _not_measured(cell),
        # LLM tokens as metered and as the backend reported them.
        "llm_tokens": _audit_json(_llm_tokens(cell)),
        # Figures that are bounds (an unknown model spend): metric → "lower" or "upper".
        "bounds": _bounds(cell),
        # Answers the reader or judge failed on, and the figures left partly judged (null:
        # every answer judged).
        "judge_failures": _failures_json(_judge_failures([cell])),
    }


def horizon_order(horizon: str) -> tuple[int, str]:
    """Sort key of a horizon name: short, medium, long, then any other by name."""
    order = ("short", "medium", "long")
    return (order.index(horizon) if horizon in order else len(order), horizon)


def horizon_standings(
    cells: Sequence[_Cell], leaks: Mapping[str, str] | None = None
) -> dict[str, list[ArmStanding]]:
    """The standings of each horizon on its own (short, medium, long, then others).

    An arm unranked anywhere in ``cells`` is unranked in every horizon's table; ``leaks`` as
    :func:`standings` takes them.
    """
    horizons = sorted({c.horizon for c in cells}, key=horizon_order)
    unranked = unranked_arms(cells)
    return {h: standings([c for c in cells if c.horizon == h], unranked, leaks) for h in horizons}


def verifications(
    rows: Sequence[ArmStanding],
    max_fault_rate: float | None = None,
    audits: dict[str, str | None] | None = None,
) -> dict[str, Verification]:
    """Each standing's verification status (see :mod:`._trust`), by arm."""
    return verify_rows(rows, max_fault_rate, audits)


def arm_rows(
    cells: Sequence[_Cell],
    max_fault_rate: float | None = None,
    audits: dict[str, str | None] | None = None,
    unranked: Mapping[str, float] | None = None,
    leaks: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The JSON leaderboard rows of ``cells``: one per arm, ranked arms first, best first.

    An unranked arm (past the fault-rate limit in some cell of ``cells``, or named in
    ``unranked``) has ``valid: false``, no rank and no figure: every metric, the per-subtype
    figures, its tokens and its latency budget are null or empty. An arm whose model spend is
    unknown has ``ranked: false`` and no rank, with its figures (the cost-dependent ones bounds,
    each with ``bound``). An arm allowed to leak across entities that did (``leaks``) has the
    check's line in ``leak_allowed`` and no Privacy (``not_measured`` says why).
    """
    ranked = standings(cells, unranked, leaks)
    checked = verify_rows(ranked, max_fault_rate, audits)
    return [_arm_row(s, rank, checked[s.arm]) for rank, s in enumerate(ranked, start=1)]


def _arm_row(s: ArmStanding, rank: int, verification: Verification) -> dict[str, Any]:
    privacy = set(_privacy_metrics())

    # A reference for one metric (leaky_shared, for Privacy) shows that metric only.
    def shown(metric: str, row: MetricRow) -> bool:
        if metric in privacy:  # null, not an object of nulls, where no canary measured it
            return s.valid and row.value is not None
        return s.valid and not s.reference

    figures = {
        metric: _bounded(
            # Not measured in some cell: no figure, not one from the cells that have it.
            _metric(MetricRow(metric, None, None, None, None, 0))
            if metric in s.not_measured
            else _metric(row),
            s.bounds.get(metric),
        )
        if shown(metric, row)
        else None
        for metric, row in s.rows.items()
    }
    return {
        "backend": s.backend,
        "gate": s.gate,
        "arm": s.arm,
        # An arm past the fault-rate limit is not ranked: no rank and no figures to rank it
        # by, exactly as the terminal leaderboard shows it.
        "valid": s.valid,
        "fault_rate": s.fault_rate,
        # A reference for one metric, or an arm whose model spend is unknown, is listed with its
        # figures, not ranked.
        "ranked": s.ranked,
        "reference": s.reference,
        "rank": rank if s.ranked else None,
        **figures,
        # The canaries it gave away (another entity's private fact in its memory).
        "leaks": leaks_json(s.leaks),
        # What the conformance check saw of a leak the run allowed (null: none allowed or seen).
        "leak_allowed": s.leak,
        "lps_modelled": s.lps_modelled,
        "not_applicable": sorted(s.not_applicable),
        "recall_by_subtype": {
            name.removeprefix("recall:"): _figure_with_n(row)
            for name, row in s.by_subtype.items()
            if s.valid
        },
        "score_by_subtype": {
            name.removeprefix("score:"): _figure_with_n(row)
            for name, row in s.score_by_subtype.items()
            if s.valid
        },
        # Figures its backend gave no way to measure, with why; its LLM tokens as metered
        # and as reported.
        "not_measured": dict(s.not_measured),
        "llm_tokens": _audit_json(s.llm_tokens) if s.valid else None,
        "bounds": dict(s.bounds) if s.valid else {},
        # What its row says of its tokens, in a line (null when nothing).
        "cost_note": s.llm_tokens.note(s.arm, _row(s, TOKEN_COST).value)
        if s.valid and s.llm_tokens is not None
        else None,
        # Its p99 latencies against the spec's targets where it runs (pass, fail or
        # not measured).
        "budget": budget_json(s.deployment, s.budget) if s.valid else None,
        # Answers the reader or judge failed on (null: every one judged): not ranked then.
        "judge_failures": _failures_json(s.judge_failures) if s.valid else None,
        # How far to trust the row: sanity arms, fault rate, audit; and who scored it.
        "verification": verification.to_json(),
        "scoring": scoring_json(s.scorings),
    }
