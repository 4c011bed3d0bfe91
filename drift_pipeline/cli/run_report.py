"""What ``drift run`` prints once the run is done, and the status it exits with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import EXIT_BACKEND_START, EXIT_FAILURE, EXIT_INVALID_ARM

if TYPE_CHECKING:
    from drift_pipeline.pipeline import RunOptions, RunResult
    from drift_pipeline.sources import WorldSource

FAULTS_SHOWN = 20
"""Faults listed by name; the rest are counted (every one is in the tables)."""


def report_run(
    result: RunResult,
    opened: Sequence[WorldSource],
    options: RunOptions,
    elapsed: float,
    json_path: Path | None,
    fail_on_error: bool,
    via: str = "direct",
) -> int:
    """Print the leaderboard, the run's totals, faults and invalid arms; write the JSON summary.

    Returns:
        The exit status: 4 when a backend could not start, 5 when an arm failed the
        conformance check, 1 with ``fail_on_error`` and any fault, 5 when an arm is invalid
        somewhere, else 0.
    """
    from drift_pipeline.report import render_board, render_subtype_recall, standings, summary_json

    from .run_records import record_in_dagster, record_run, stored_audits

    table = standings(result.cells)
    limit = options.loop.max_fault_rate
    audits = stored_audits(options.out, opened, result)
    click.echo(render_board(result.cells, limit, audits))
    if any(source.kind != "scenario" for source in opened):
        # Imported datasets report per question category: their categories are the subtypes.
        click.echo("\nrecall by probe subtype (pooled over questions):")
        click.echo(render_subtype_recall(table))
        if options.evaluation.uses_llm:
            click.echo("\ngraded score by probe subtype (LoCoMo: its token F1):")
            click.echo(render_subtype_recall(table, "score"))
    click.echo(
        f"\n{len(result.cells)} cells ({len(opened)} scenarios × horizons × "
        f"{len(options.arms)} arms), {result.generated_worlds} worlds generated, "
        f"{len(result.faults)} faults, isolation: {', '.join(result.manifest['isolation'])}, "
        f"{elapsed:.1f} s → {options.out}"
    )
    _echo_checks(result)
    describe = getattr(options.synthesizer, "describe_usage", None)
    if result.generated_worlds and describe is not None:
        click.echo(describe())
    if result.llm_usage:
        _echo_llm_usage(result)
    for fault in result.faults[:FAULTS_SHOWN]:
        click.echo(f"  fault: {fault}")
    if len(result.faults) > FAULTS_SHOWN:
        click.echo(
            f"  … and {len(result.faults) - FAULTS_SHOWN} more "
            "(column `error` of memory_snapshots / retrievals)"
        )
    payload = summary_json(result.cells, [source.id for source in opened], limit, audits)
    record = record_run(options.out, payload, result.manifest)
    if record is not None:
        click.echo(f"run record (signed): {record}")
        for row in (*payload["arms"], *(r for rows in payload["horizons"].values() for r in rows)):
            row["record"] = record.name
    if via == "direct":
        # The Dagster path materialises its assets itself; a direct run reports its own.
        record_in_dagster(options.out, result, payload, audits, record)
    if json_path is not None:
        if result.checks.reports:
            payload["conformance"] = {n: r.to_json() for n, r in result.checks.reports.items()}
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    invalid = [cell for cell in result.cells if not cell.valid]
    for cell in invalid:
        click.echo(
            f"  invalid: {cell.arm.key} on {cell.scenario}/{cell.horizon}: "
            f"{cell.fault_rate:.1%} of its calls faulted or were skipped "
            f"(limit {options.loop.max_fault_rate:.1%}, --max-fault-rate); not ranked"
        )
    for failure in result.start_failures:
        click.echo(f"{failure} (no rows written for it)", err=True)
    for failure in result.check_failures:
        click.echo(failure, err=True)
    if result.start_failures:
        return EXIT_BACKEND_START
    if result.check_failures:
        return EXIT_INVALID_ARM
    if fail_on_error and result.faults:
        return EXIT_FAILURE
    return EXIT_INVALID_ARM if invalid else 0


def _echo_checks(result: RunResult) -> None:
    """Each checked backend that passed: its check's figures and what it runs against."""
    for name, report in sorted(result.checks.reports.items()):
        if not report.passed:
            continue  # said on stderr at the end, with the arms it kept from being scored
        click.echo(report.line())
        service = dict(report.capabilities.get("service") or {})
        if service:
            click.echo(
                f"  {name} runs: " + "; ".join(f"{k} {v}" for k, v in sorted(service.items()))
            )


def _echo_llm_usage(result: RunResult) -> None:
    usage = result.llm_usage
    errors = sum(
        int(row.value or 0)
        for cell in result.cells
        for row in cell.metrics.rows
        if row.metric == "judge_errors" and row.checkpoint is None
    )
    click.echo(
        f"reader/judge LLM: {usage['requests']} requests, {usage['cache_hits']} cache hits, "
        f"{usage['prompt_tokens'] + usage['completion_tokens']} tokens sent, "
        f"{errors} judge errors (left out of the metrics)"
    )
