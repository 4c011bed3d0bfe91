"""What ``drift run`` prints once the run is done, and the status it exits with."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import EXIT_BACKEND_START, EXIT_FAILURE, EXIT_INVALID_ARM, EXIT_NOT_RECORDED

if TYPE_CHECKING:
    from drift_pipeline.pipeline import CellResult, RunOptions, RunResult
    from drift_pipeline.sources import WorldSource


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

    When no arm asked for was scored (each failed the conformance check or could not start),
    only the reasons are printed and nothing is written.

    Returns:
        The exit status: 1 when the reader or judge failed on any answer (a harness failure:
        those arms are listed, not ranked), 4 when a backend could not start, 5 when an arm
        failed the conformance check, 1 with ``fail_on_error`` and any fault, 7 when the
        Dagster instance did not record the run, 5 when an arm is invalid somewhere, else 0.
    """
    from drift_pipeline.report import (
        allowed_leaks,
        render_board,
        render_subtype_recall,
        standings,
        summary_json,
    )

    from .run_records import record_in_dagster, record_run, stored_audits

    if not result.cells and (result.start_failures or result.check_failures):
        return _nothing_scored(result)
    # Backends allowed to leak across entities that the check saw leaking: marked on every row.
    leaks = allowed_leaks(result.manifest.get("conformance"))
    table = standings(result.cells, None, leaks)
    limit = options.loop.max_fault_rate
    audits = stored_audits(options.out, opened, result)
    click.echo(render_board(result.cells, limit, audits, leaks))
    if any(source.kind != "scenario" for source in opened):
        # Imported datasets report per question category: their categories are the subtypes.
        click.echo("\nrecall by probe subtype (pooled over questions):")
        click.echo(render_subtype_recall(table))
        if options.evaluation.uses_llm:
            click.echo("\ngraded score by probe subtype (LoCoMo: its token F1):")
            click.echo(render_subtype_recall(table, "score"))
    worlds = len({(cell.scenario, cell.horizon) for cell in result.cells})
    arms = len({cell.arm for cell in result.cells})
    click.echo(
        f"\n{_count(len(result.cells), 'cell')} ({_count(worlds, 'world')} × "
        f"{_count(arms, 'arm')}), {result.generated_worlds} worlds generated, "
        f"{len(result.faults)} faults, isolation: {', '.join(result.manifest['isolation'])}, "
        f"{elapsed:.1f} s → {options.out}"
    )
    _echo_checks(result)
    describe = getattr(options.synthesizer, "describe_usage", None)
    if result.generated_worlds and describe is not None:
        click.echo(describe())
    if result.llm_usage:
        _echo_llm_usage(result)
    _echo_faults(result.cells)
    _echo_time_to_queryable(result.cells)
    payload = summary_json(result.cells, [source.id for source in opened], limit, audits, leaks)
    record = record_run(options.out, payload, result.manifest)
    if record is not None:
        click.echo(f"run record (signed): {record}")
        for row in (*payload["arms"], *(r for rows in payload["horizons"].values() for r in rows)):
            row["record"] = record.name
    recorded = True
    if via == "direct":
        # The Dagster path materialises its assets itself; a direct run reports its own.
        recorded = record_in_dagster(options.out, result, payload, audits, record)
    if json_path is not None:
        conformance = result.conformance_summary()
        if conformance:
            payload["conformance"] = conformance
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
    if _echo_judge_failures(result.cells):
        return EXIT_FAILURE
    if result.start_failures:
        return EXIT_BACKEND_START
    if result.check_failures:
        return EXIT_INVALID_ARM
    if fail_on_error and result.faults:
        return EXIT_FAILURE
    if not recorded:
        return EXIT_NOT_RECORDED
    return EXIT_INVALID_ARM if invalid else 0


JUDGE_FAILURE_LINES = 5
"""Cells named one by one on stderr when reader or judge calls failed; the rest are counted."""


def _echo_judge_failures(cells: Sequence[CellResult]) -> bool:
    """On stderr, each cell whose reader or judge calls failed; whether there was one."""
    failed = [
        (cell, failures) for cell in cells if (failures := cell.metrics.judge_failures) is not None
    ]
    for cell, failures in failed[:JUDGE_FAILURE_LINES]:
        first = f" (first: {failures.first})" if failures.first else ""
        click.echo(
            f"{cell.arm.key} on {cell.scenario}/{cell.horizon}: {failures.line()}{first}; "
            "not ranked",
            err=True,
        )
    if len(failed) > JUDGE_FAILURE_LINES:
        click.echo(f"... and {len(failed) - JUDGE_FAILURE_LINES} more cells", err=True)
    if failed:
        click.echo(
            "reader/judge failure: a figure with no judged answer is not measured, the others "
            "are over the answers judged; the same command retries the calls that got no reply "
            "(answered ones come from the cache)",
            err=True,
        )
    return bool(failed)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _nothing_scored(result: RunResult) -> int:
    """No arm asked for was scored: say why, one line each, and write nothing.

    No leaderboard, record or summary: an empty record would become the folder's latest.
    """
    for line in (*result.start_failures, *result.check_failures):
        click.echo(line, err=True)
    click.echo(
        "no arm was scored, so nothing was recorded (no leaderboard, record or --json summary)",
        err=True,
    )
    return EXIT_BACKEND_START if result.start_failures else EXIT_INVALID_ARM


def _echo_checks(result: RunResult) -> None:
    """Each checked backend that passed: its check's figures and what it ran against."""
    services = result.manifest.get("services") or {}
    for name, report in sorted(result.checks.reports.items()):
        if not report.passed:
            continue  # said on stderr at the end, with the arms it kept from being scored
        click.echo(report.line())
        service = services.get(name) or {}
        if service:
            click.echo(
                f"  {name} runs: " + "; ".join(f"{k} {v}" for k, v in sorted(service.items()))
            )


def _echo_faults(cells: Sequence[CellResult]) -> None:
    """Per faulting arm: its name, faults by call kind, and the first exception with its place.

    The first exception is the first fault (in world, replicate and call order) raised in the
    backend's own code or a library it calls; an arm whose faults are all timeouts, crashes or
    bad return values shows its first fault instead.
    """
    from drift_pipeline.memory import FaultSummary

    by_arm: dict[str, list[CellResult]] = {}
    for cell in cells:
        if cell.faults:  # faulted calls, retries, refused model calls
            by_arm.setdefault(cell.arm.key, []).append(cell)
    if not by_arm:
        return
    click.echo(
        f"faults in {len(by_arm)} arm(s) (each one is in the `error` columns of "
        "memory_snapshots and retrievals, and in the cell manifests):"
    )
    for arm, faulting in by_arm.items():
        summary = FaultSummary.merged([cell.run.fault_summary for cell in faulting])
        calls = sum(cell.run.calls for cell in faulting)
        kinds = summary.by_kind()
        skipped = sum(summary.skipped.values())
        skips = f"; {skipped} of them skipped, not made" if skipped else ""
        retried = sum(summary.retried.values())
        if retried:
            skips += f"; {retried} retries after the service refused"
        click.echo(
            f"  {arm}: {summary.total} of {calls} calls faulted in {len(faulting)} "
            f"world(s) ({kinds}{skips})"
        )
        first = _first_fault(faulting)
        if first is not None:
            click.echo(f"    {first}")
        for other in summary.other[:1]:
            click.echo(f"    also: {other}")


def _echo_time_to_queryable(cells: Sequence[CellResult]) -> None:
    """Per cell of a backend that ingests asynchronously: how long its stores took to be found."""
    waited = [cell for cell in cells if cell.run.time_to_queryable]
    if not waited:
        return
    click.echo("time to queryable after each store (asynchronous ingestion, waited for):")
    for cell in waited:
        figures = cell.run.time_to_queryable or {}
        click.echo(
            f"  {cell.arm.key} on {cell.scenario}/{cell.horizon}: p50 {figures['p50']:.1f} ms, "
            f"p95 {figures['p95']:.1f} ms, max {figures['max']:.1f} ms over "
            f"{int(figures['sessions'])} sessions (column queryable_ms of memory_snapshots)"
        )


def _first_fault(cells: Sequence[CellResult]) -> str | None:
    """The first exception raised in the backend's code over ``cells``, else their first fault."""
    firsts = (("first exception", "first_exception"), ("first fault", "first_error"))
    for label, attribute in firsts:
        for cell in cells:
            call = getattr(cell.run.fault_summary, attribute)
            if call is not None:
                return f"{label} ({cell.scenario}/{cell.horizon}, {call.describe()})"
    return None


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
