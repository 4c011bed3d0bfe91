"""``drift run``: the benchmark in one command, directly or as Dagster runs.

The command checks its input into :class:`~drift_pipeline.pipeline.RunOptions`
(:func:`.run_inputs.run_options`), runs it (:func:`run_exec`:
:func:`drift_pipeline.pipeline.run_benchmark`, or :mod:`.via_dagster`) and prints the result
(:mod:`.run_report`), whose status it exits with.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .common import (
    ALLOW_LEAK_OPTION,
    HORIZON_OPTION,
    OUT_OPTION,
    REAL_CLOCK_OPTION,
    SOURCES_ARGUMENT,
    SOURCES_HELP,
    SYNTHESIZER_OPTION,
    json_option,
)
from .errors import (
    EXIT_BACKEND_START,
    EXIT_FAILURE,
    EXIT_INVALID_ARM,
    EXIT_ISOLATION,
    EXIT_ROOT_BUSY,
    CommandError,
)
from .places import unusable_out
from .run_inputs import run_options
from .run_report import report_run

if TYPE_CHECKING:
    from drift_pipeline.keys import HorizonName
    from drift_pipeline.pipeline import RunOptions, RunResult
    from drift_pipeline.sources import WorldSource
    from drift_pipeline.storage import StorageRoot


@click.command("run", epilog=SOURCES_HELP)
@SOURCES_ARGUMENT
@HORIZON_OPTION
@click.option(
    "--backend",
    "backends",
    multiple=True,
    metavar="NAME|module:Class",
    help=(
        "Memory system to run (repeatable); default: the six built-in references and the "
        "sentence_log floor."
    ),
)
@click.option(
    "--gate",
    "gates",
    multiple=True,
    metavar="hard|soft:K|summary:N",
    help="Budget gate (repeatable); each backend × gate pair is an arm. Default: hard.",
)
@click.option(
    "--ablation",
    "ablations",
    multiple=True,
    metavar="NAME",
    help="Run this ablation's arms (repeatable), from ablations.yaml beside the scenarios; "
    "alone it replaces the default arms, with --backend/--gate it adds to them.",
)
@OUT_OPTION
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=0.01),
    default=30.0,
    show_default=True,
    help="Seconds before a store/retrieve call is recorded as a timeout (a hung coroutine is "
    "cancelled in the worker a little earlier; a blocked worker is restarted).",
)
@click.option(
    "--max-consecutive-faults",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="After this many faulted calls of one kind (store, retrieve) in a row in one "
    "replicate, that replicate's remaining calls of that kind are recorded as skipped instead "
    "of being made (0: never skip).",
)
@click.option(
    "--max-fault-rate",
    type=click.FloatRange(min=0.0, max=1.0),
    default=0.05,
    show_default=True,
    help="Share of a cell's calls that may fault or be skipped; past it the arm is invalid "
    f"there: listed with its fault rate, never ranked (exit status {EXIT_INVALID_ARM}); a "
    "replicate whose faults of one kind alone pass it skips its remaining calls of that kind.",
)
@REAL_CLOCK_OPTION
@ALLOW_LEAK_OPTION
@click.option("--fail-on-error", is_flag=True, help="Exit 1 when any backend call faulted.")
@click.option(
    "--backend-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="YAML mapping backend name → constructor options.",
)
@click.option(
    "--braincore-adapter",
    metavar="MODULE[:Class]|FILE.py[:Class]",
    default=None,
    help="The BrainCore adapter the braincore backend runs (with --backend braincore); a "
    "relative file or a module is found from the folder drift run is called in.",
)
@json_option("Write the summary as JSON to this file.")
@click.option(
    "--via",
    type=click.Choice(["direct", "dagster"]),
    default="direct",
    show_default=True,
    help="direct: in this process; dagster: as Dagster runs against the instance at "
    "DAGSTER_HOME (materializations visible in `dagster dev`), same tables and figures.",
)
@click.option(
    "--reader",
    type=click.Choice(["context", "llm"]),
    default="context",
    show_default=True,
    help="context: the deterministic context judge reads the retrieved text; llm: the pinned "
    "LLM reader answers from it (DRIFT_LLM_BASE_URL, DRIFT_LLM_MODEL or DRIFT_READER_MODEL, "
    "key in DRIFT_LLM_API_KEY); its measured time to first token enters TTFRT.",
)
@click.option(
    "--judge",
    type=click.Choice(["rule", "llm"]),
    default="rule",
    show_default=True,
    help="rule: the context judge's rules; llm: the pinned LLM judge (DRIFT_JUDGE_MODEL or "
    "DRIFT_LLM_MODEL; needs --reader llm). Failed reader or judge calls are counted, never "
    f"guessed or ranked (exit status {EXIT_FAILURE}).",
)
@SYNTHESIZER_OPTION
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Worlds run at once, each in its own process (direct runs only). Answers and "
    "figures are the same, except that latencies (and LPS) are measured under the extra load.",
)
@click.option(
    "--no-isolation",
    is_flag=True,
    hidden=True,
    help="Debugging only: run backends without the sandbox (recorded in the manifest).",
)
@click.option(
    "--keep-going",
    is_flag=True,
    help=f"A backend that cannot start is reported and skipped while the other arms run "
    f"(exit status {EXIT_BACKEND_START} still); without it the run stops at that arm.",
)
def command(
    sources: tuple[str, ...],
    horizons: tuple[HorizonName, ...],
    backends: tuple[str, ...],
    gates: tuple[str, ...],
    ablations: tuple[str, ...],
    out: StorageRoot,
    call_timeout: float,
    max_consecutive_faults: int,
    max_fault_rate: float,
    real_clock: bool,
    allow_leaks: tuple[str, ...],
    fail_on_error: bool,
    backend_config: Path | None,
    braincore_adapter: str | None,
    json_path: Path | None,
    via: str,
    reader: str,
    judge: str,
    synthesizer: str,
    jobs: int,
    no_isolation: bool,
    keep_going: bool,
) -> None:
    """Run the benchmark: generate (or reuse) worlds, run every arm, score, print a leaderboard."""
    opened, options = run_options(
        sources,
        horizons,
        backends,
        gates,
        ablations,
        out,
        via=via,
        reader=reader,
        judge=judge,
        synthesizer=synthesizer,
        backend_config_file=backend_config,
        braincore_adapter=braincore_adapter,
        call_timeout=call_timeout,
        isolate=not no_isolation,
        max_consecutive_faults=max_consecutive_faults,
        max_fault_rate=max_fault_rate,
        jobs=jobs,
        keep_going=keep_going,
        simulated_clock=not real_clock,
        allow_leaks=allow_leaks,
    )
    started = time.perf_counter()
    result = run_exec(sources, opened, options, via)
    status = report_run(
        result, opened, options, time.perf_counter() - started, json_path, fail_on_error, via
    )
    if status:
        raise CommandError.reported(status)


def run_exec(
    sources: Sequence[str], opened: Sequence[WorldSource], options: RunOptions, via: str
) -> RunResult:
    """Run the benchmark in this process (``direct``) or as Dagster runs (``dagster``).

    Raises:
        CommandError: With the documented status: an LLM call the run needs failing (1;
            replies so far stay cached, so the same command resumes), no sandbox here (3), a backend
            that could not start (4), another run holding ``--out`` (6).
    """
    from tqdm import tqdm

    from drift_pipeline.llm import LLMError
    from drift_pipeline.memory import BackendStartError, IsolationError
    from drift_pipeline.pipeline import run_benchmark
    from drift_pipeline.storage import RootBusy, RootUnusable

    bars: list[tqdm[Any]] = []

    def progress(label: str, total: int) -> Callable[[int], None]:
        bar = tqdm(total=total, unit="session", desc=label, disable=None, leave=False)
        bars.append(bar)

        def advance(n: int) -> None:
            bar.update(n)
            if bar.n >= total:
                bar.close()

        return advance

    try:
        if via == "dagster":
            from .via_dagster import run_via_dagster

            return run_via_dagster(tuple(sources), options)
        return run_benchmark(opened, options, progress)
    except LLMError as error:
        raise CommandError(str(error), EXIT_FAILURE) from error
    except IsolationError as error:
        raise CommandError(str(error), EXIT_ISOLATION) from error
    except RootBusy as error:
        raise CommandError(str(error), EXIT_ROOT_BUSY) from error
    except RootUnusable as error:
        raise unusable_out(error) from error
    except BackendStartError as error:
        # --keep-going is the direct run's: through Dagster the run stops at the failed step.
        hint = "; --keep-going runs the other arms" if via == "direct" else ""
        raise CommandError(f"{error} (no rows written for it{hint})", EXIT_BACKEND_START) from error
    finally:
        for bar in bars:
            bar.close()
