"""``drift braincore`` (and ``python -m drift_pipeline.braincore``): the BrainCore evaluator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from ._adapter import DEFAULT_TOP_K, BrainCoreAdapter, DriftBackendAdapter, load_adapter
from ._dataset import BrainCoreError, load_dataset
from ._synthetic import write_synthetic_dataset

__all__ = ["braincore_command"]

_EXIT_INVALID = 2
"""Invalid input (dataset, adapter, options); 1 is a failure while the adapter runs."""


@click.command(name="braincore", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--adapter",
    metavar="MODULE[:Class]",
    help="A BrainCore adapter: a module (or FILE.py) and optionally its class.",
)
@click.option(
    "--backend",
    metavar="NAME|module:Class",
    help="A DRIFT memory backend instead of an adapter (bm25, full_context, …).",
)
@click.option(
    "--dataset",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The BrainCore JSONL dataset.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the result JSON (nothing is written when the run fails).",
)
@click.option(
    "--top-k",
    type=click.IntRange(min=1),
    default=DEFAULT_TOP_K,
    show_default=True,
    help="top_k of every retrieve call.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also render the results into the results template, as Markdown, here.",
)
@click.option(
    "--write-dataset",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.jsonl",
    help="Write the synthetic 100-record dataset here (byte-identical every time) and stop.",
)
def braincore_command(
    adapter: str | None,
    backend: str | None,
    dataset: Path | None,
    output: Path | None,
    top_k: int,
    report: Path | None,
    write_dataset: Path | None,
) -> None:
    """Run a BrainCore memory adapter (or a DRIFT backend) over a BrainCore dataset.

    Calls ingest once per record with its memories, then retrieve per query, and writes the six
    metrics (exact_match, semantic_placeholder_score, temporal_order_score,
    contradiction_resolution_score, latency_ms, storage_bytes), overall and per query type with
    95% bootstrap intervals, to --output.
    """
    if write_dataset is not None:
        click.echo(f"wrote {write_synthetic_dataset(write_dataset)}")
        return
    # The evaluator and its scoring load only for a run: listing the commands needs neither.
    from ._evaluate import evaluate, write_result
    from ._report import render_results

    if (adapter is None) == (backend is None):
        _fail("give exactly one of --adapter MODULE[:Class] and --backend NAME")
    if dataset is None or output is None:
        _fail("--dataset and --output are required")
    try:
        loaded = load_dataset(dataset)
        built, name = _build(adapter, backend)
    except BrainCoreError as error:
        _fail(str(error))
    try:
        result = evaluate(built, loaded, adapter_name=name, top_k=top_k)
    except BrainCoreError as error:
        click.echo(str(error), err=True)
        sys.exit(1)
    finally:
        if isinstance(built, DriftBackendAdapter):
            built.close()
    write_result(result, output)
    overall = result.figures()
    click.echo(
        f"{name} on {loaded.path}: {len(loaded.records)} records, {loaded.queries} queries → "
        f"{output}"
    )
    for metric, figure in overall.items():
        if figure.value is None:
            shown = "not measured" if metric == "storage_bytes" else "n/a"
        elif metric == "storage_bytes":
            shown = f"{figure.value:.0f}"
        else:
            shown = f"{figure.value:.4f} [{figure.ci_low:.4f}, {figure.ci_high:.4f}]"
        click.echo(f"  {metric}: {shown}")
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(render_results(result.to_dict()), encoding="utf-8")


def _build(adapter: str | None, backend: str | None) -> tuple[BrainCoreAdapter, str]:
    if adapter is not None:
        return load_adapter(adapter), adapter
    assert backend is not None
    from drift_pipeline.memory.backends import load_backend

    try:
        built = load_backend(backend)
    except ValueError as error:
        raise BrainCoreError(str(error).splitlines()[0]) from None
    except Exception as error:
        # A constructor's own failure, as one line like every other input problem.
        raise BrainCoreError(
            f"backend {backend!r}: building it raised {type(error).__name__}: {error}"
        ) from None
    return DriftBackendAdapter(built, backend), f"backend:{backend}"


def _fail(message: str) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(_EXIT_INVALID)
