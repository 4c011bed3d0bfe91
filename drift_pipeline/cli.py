"""The ``drift`` command: quick local runs of the DRIFT pipeline without Dagster."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import click
import duckdb
import yaml
from tqdm import tqdm

from drift_pipeline.braincore._cli import braincore_command
from drift_pipeline.keys import CellKey
from drift_pipeline.llm import LLMError
from drift_pipeline.memory import Arm, BackendStartError, Gate, IsolationError, LoopConfig
from drift_pipeline.memory.backends import backend_names, backend_needs, default_backend_names
from drift_pipeline.pipeline import (
    AblationError,
    EvaluationOptions,
    RunOptions,
    RunResult,
    ablation_arms,
    cell_exists,
    compare_stored,
    connect,
    find_ablations,
    run_benchmark,
    world_is_current,
)
from drift_pipeline.report import (
    comparison_lines,
    render_leaderboard,
    render_subtype_recall,
    render_world_summaries,
    standings,
    summary_json,
)
from drift_pipeline.scenario import (
    HORIZON_NAMES,
    HorizonName,
    ScenarioError,
    json_schema,
    load_scenario,
    scenario_files,
)
from drift_pipeline.sources import (
    SourceError,
    WorldSource,
    open_sources,
    source_prefixes,
    write_worlds,
)
from drift_pipeline.storage import RootBusy, StorageRoot
from drift_pipeline.world.synthesis import Synthesizer

EXIT_INVALID = 2
"""Exit code for invalid input (scenario files, options); 1 is left for runtime failures."""
EXIT_ISOLATION = 3
"""``drift run``: sandboxed workers cannot start on this machine; nothing was run."""
EXIT_BACKEND_START = 4
"""``drift run``: a backend could not start (no rows for it; with --keep-going the rest ran)."""
EXIT_INVALID_ARM = 5
"""``drift run``: a requested arm faulted on more calls than --max-fault-rate allows somewhere
(it is listed, not ranked)."""
EXIT_ROOT_BUSY = 6
"""``drift run``: another run is writing to the same output folder; nothing was run."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="drift-pipeline")
def main() -> None:
    """DRIFT: a budget-gated benchmark for agent memory systems."""


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate(files: tuple[Path, ...]) -> None:
    """Validate scenario FILES (or folders of them); print one line per problem."""
    bad = 0
    found = scenario_files(list(files))
    if not found:
        click.echo(f"no scenario files found in {', '.join(map(str, files))}", err=True)
        sys.exit(EXIT_INVALID)
    for path in found:
        try:
            loaded = load_scenario(path)
        except ScenarioError as error:
            bad += 1
            for line in error.lines():
                click.echo(line, err=True)
            continue
        click.echo(f"{path}: ok ({loaded.spec.id} v{loaded.spec.version})")
    if bad:
        sys.exit(EXIT_INVALID)


@main.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))


SOURCES_HELP = (
    "SOURCES are scenario files or folders of them, or PREFIX:PATH for data read by a "
    "registered importer (a plain path is a scenario file): locomo:FILE.json, "
    "longmemeval:FILE.json, or an installed importer's prefix. PREFIX:PATH?NAME=VALUE passes "
    "an option to the importer (locomo:FILE.json?midpoint=true)."
)


def _load_all(texts: tuple[str, ...]) -> list[WorldSource]:
    """Open every source and check it can be written, or exit 2 with one line per problem."""
    try:
        sources = open_sources(texts)
        for source in sources:
            source.check()
    except SourceError as error:
        for line in error.lines():
            click.echo(line, err=True)
        sys.exit(EXIT_INVALID)
    except ValueError as error:  # GenerationUnsupported: a paradigm without a generator
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    return sources


HORIZON_OPTION = click.option(
    "--horizon",
    "horizons",
    multiple=True,
    type=click.Choice(HORIZON_NAMES),
    help="Only these horizons (repeatable); default: every horizon each scenario declares.",
)


def _storage_root(ctx: click.Context, param: click.Parameter, value: str) -> StorageRoot:
    """``--out``: a local folder or ``s3://bucket/prefix`` (credentials from the environment)."""
    try:
        return StorageRoot.from_url(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from error


OUT_OPTION = click.option(
    "--out",
    type=str,
    default="data",
    show_default=True,
    callback=_storage_root,
    metavar="FOLDER|s3://BUCKET/PREFIX",
    help="Storage root for the Parquet tables: a folder or an s3:// URL.",
)


SYNTHESIZER_OPTION = click.option(
    "--synthesizer",
    type=click.Choice(["template", "llm"]),
    default="template",
    show_default=True,
    help="template: offline and deterministic; llm: an OpenAI-compatible model writes each "
    "session (DRIFT_LLM_BASE_URL, DRIFT_LLM_MODEL or DRIFT_SYNTHESIZER_MODEL, key in "
    "DRIFT_LLM_API_KEY), verified, cached under --out's llm_cache; sessions that fail "
    "verification are templated and listed in the synthesis_fallbacks table.",
)


def _synthesizer(name: str, out: StorageRoot) -> Synthesizer | None:
    """The synthesizer of ``--synthesizer`` (None: the template default), or exit 2 in one line."""
    if name == "template":
        return None
    from drift_pipeline.pipeline import llm_cache_location
    from drift_pipeline.world.synthesis import synthesizer_from_env

    try:
        return synthesizer_from_env(llm_cache_location(out))
    except LLMError as error:
        click.echo(f"--synthesizer llm: {error}", err=True)
        sys.exit(EXIT_INVALID)


@main.command(epilog=SOURCES_HELP)
@click.argument("sources", nargs=-1, required=True, metavar="SOURCES...")
@HORIZON_OPTION
@OUT_OPTION
@SYNTHESIZER_OPTION
def generate(
    sources: tuple[str, ...],
    horizons: tuple[HorizonName, ...],
    out: StorageRoot,
    synthesizer: str,
) -> None:
    """Write the worlds of SOURCES as Parquet tables under --out."""
    opened = _load_all(sources)
    writer = _synthesizer(synthesizer, out)
    total = sum(
        world.source.sessions(world.horizon) * world.source.replicates
        for source in opened
        for world in source.worlds(horizons)
    )
    started = time.perf_counter()
    with tqdm(total=total, unit="session", desc="generate", disable=None, leave=False) as bar:

        def advance(n: int) -> None:
            bar.update(n)

        try:
            summaries = write_worlds(opened, out, horizons, writer, progress=advance)
        except LLMError as error:
            # Replies received so far stay cached: the same command resumes from there.
            click.echo(f"--synthesizer llm: {error}", err=True)
            sys.exit(1)
    elapsed = time.perf_counter() - started
    click.echo(render_world_summaries(summaries, elapsed, str(out)))
    if (describe := getattr(writer, "describe_usage", None)) is not None:
        click.echo(describe())


@main.command("import")
@click.argument("kind", metavar="KIND")
@click.argument("path", metavar="PATH")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="An option of the importer (repeatable), e.g. midpoint=true for locomo.",
)
@OUT_OPTION
def import_(kind: str, path: str, options: tuple[str, ...], out: StorageRoot) -> None:
    """Write the worlds the KIND importer reads from PATH, without running anything.

    KIND is any registered importer (locomo, longmemeval, or one an installed package
    registers); "drift run KIND:PATH" runs the same worlds.
    """
    importers = [p for p in source_prefixes() if p != "scenario"]
    if kind not in importers:
        click.echo(f"unknown importer {kind!r} (known: {', '.join(importers)})", err=True)
        sys.exit(EXIT_INVALID)
    for option in options:
        if "=" not in option or not option.partition("=")[0]:
            click.echo(f"--option {option!r} is not NAME=VALUE", err=True)
            sys.exit(EXIT_INVALID)
    query = "&".join(options)
    opened = _load_all((f"{kind}:{path}" + (f"?{query}" if query else ""),))
    started = time.perf_counter()
    summaries = write_worlds(opened, out)
    click.echo(render_world_summaries(summaries, time.perf_counter() - started, str(out)))


def _parse_arms(backends: tuple[str, ...], gates: tuple[str, ...]) -> list[Arm]:
    """Backend × gate arms, or exit 2 naming the bad value."""
    names = backends or tuple(default_backend_names())
    arms: list[Arm] = []
    for backend in names:
        if ":" in backend:
            module, _, cls = backend.partition(":")
            if (
                not module
                or not cls
                or not all(p.isidentifier() for p in [*module.split("."), cls])
            ):
                click.echo(
                    f"--backend {backend!r}: expected a built-in name or package.module:Class",
                    err=True,
                )
                sys.exit(EXIT_INVALID)
        else:
            try:  # an installed package's clashing entry point, or a package a backend lacks
                known = backend_names()
                if backend in known:
                    backend_needs(backend).check(backend)
            except ValueError as error:
                click.echo(f"--backend {backend!r}: {error}", err=True)
                sys.exit(EXIT_INVALID)
            if backend not in known:
                click.echo(
                    f"--backend {backend!r}: unknown backend; "
                    f"built-ins: {', '.join(known)}, or package.module:Class",
                    err=True,
                )
                sys.exit(EXIT_INVALID)
        for gate in gates or ("hard",):
            try:
                arm = Arm(backend, Gate.parse(gate))
            except ValueError as error:
                click.echo(f"--gate: {error}", err=True)
                sys.exit(EXIT_INVALID)
            if arm not in arms:
                arms.append(arm)
    return arms


def _run_arms(
    sources: Sequence[WorldSource],
    backends: tuple[str, ...],
    gates: tuple[str, ...],
    ablations: tuple[str, ...],
) -> list[Arm]:
    """The arms of ``drift run``: backend × gate, and the named ablations' arms.

    An ablation is read from the ``ablations.yaml`` beside the scenario files among ``sources``.
    """
    arms = _parse_arms(backends, gates) if backends or gates or not ablations else []
    if not ablations:
        return arms
    try:
        scenarios = [source.origin for source in sources if source.kind == "scenario"]
        extra = ablation_arms(find_ablations(scenarios), list(ablations))
    except AblationError as error:
        click.echo(f"--ablation: {error}", err=True)
        sys.exit(EXIT_INVALID)
    return [*arms, *(arm for arm in extra if arm not in arms)]


def _backend_config(path: Path | None) -> dict[str, dict[str, Any]]:
    """Per-backend constructor options from a YAML mapping ``backend: {option: value}``."""
    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        click.echo(f"{path}: cannot read backend config: {str(error).splitlines()[0]}", err=True)
        sys.exit(EXIT_INVALID)
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        click.echo(f"{path}: expected a mapping of backend name to a mapping of options", err=True)
        sys.exit(EXIT_INVALID)
    return {str(k): dict(v) for k, v in data.items()}


@main.command(epilog=SOURCES_HELP)
@click.argument("sources", nargs=-1, required=True, metavar="SOURCES...")
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
    help="After this many faulted calls in a row (a cell's replicates counted together), the "
    "arm's remaining calls in that world are recorded as skipped instead of being made "
    "(0: never skip).",
)
@click.option(
    "--max-fault-rate",
    type=click.FloatRange(min=0.0, max=1.0),
    default=0.05,
    show_default=True,
    help="Share of a cell's calls that may fault or be skipped; past it the arm is invalid "
    f"there: listed with its fault rate, never ranked (exit status {EXIT_INVALID_ARM}), and "
    "its remaining calls there are skipped.",
)
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
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the summary as JSON to this file.",
)
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
    "DRIFT_LLM_MODEL; needs --reader llm). Failed judge calls are counted, never guessed.",
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
def run(
    sources: tuple[str, ...],
    horizons: tuple[HorizonName, ...],
    backends: tuple[str, ...],
    gates: tuple[str, ...],
    ablations: tuple[str, ...],
    out: StorageRoot,
    call_timeout: float,
    max_consecutive_faults: int,
    max_fault_rate: float,
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
    evaluation = _evaluation_options(reader, judge)
    if evaluation.uses_llm and via == "dagster":
        click.echo("--reader llm / --judge llm: not available with --via dagster yet", err=True)
        sys.exit(EXIT_INVALID)
    if synthesizer == "llm" and via == "dagster":
        click.echo("--synthesizer llm: not available with --via dagster yet", err=True)
        sys.exit(EXIT_INVALID)
    opened = _load_all(sources)
    arms = _run_arms(opened, backends, gates, ablations)
    backend_options = _braincore_options(_backend_config(backend_config), braincore_adapter, arms)
    _check_compressor(backend_options, opened[0], via)
    options = RunOptions(
        arms=arms,
        horizons=horizons,
        out=out,
        loop=LoopConfig(
            call_timeout=call_timeout,
            isolate=not no_isolation,
            max_consecutive_faults=max_consecutive_faults,
            max_fault_rate=max_fault_rate,
        ),
        backend_options=backend_options,
        evaluation=evaluation,
        synthesizer=_synthesizer(synthesizer, out),
        jobs=jobs,
        keep_going=keep_going,
    )
    bars: list[tqdm[Any]] = []

    def progress(label: str, total: int) -> Callable[[int], None]:
        bar = tqdm(total=total, unit="session", desc=label, disable=None, leave=False)
        bars.append(bar)

        def advance(n: int) -> None:
            bar.update(n)
            if bar.n >= total:
                bar.close()

        return advance

    started = time.perf_counter()
    try:
        if via == "dagster":
            result = _run_via_dagster(tuple(sources), options)
        else:
            result = run_benchmark(opened, options, progress)
    except LLMError as error:
        # Replies received so far stay cached: the same command resumes from there.
        click.echo(str(error), err=True)
        sys.exit(1)
    except IsolationError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_ISOLATION)
    except RootBusy as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_ROOT_BUSY)
    except BackendStartError as error:
        for bar in bars:
            bar.close()
        # --keep-going is the direct run's: through Dagster the run stops at the failed step.
        hint = "; --keep-going runs the other arms" if via == "direct" else ""
        click.echo(f"{error} (no rows written for it{hint})", err=True)
        sys.exit(EXIT_BACKEND_START)
    for bar in bars:
        bar.close()
    elapsed = time.perf_counter() - started
    table = standings(result.cells)
    click.echo(render_leaderboard(table))
    if any(source.kind != "scenario" for source in opened):
        # Imported datasets report per question category: their categories are the subtypes.
        click.echo("\nrecall by probe subtype (pooled over questions):")
        click.echo(render_subtype_recall(table))
        if evaluation.uses_llm:
            click.echo("\ngraded score by probe subtype (LoCoMo: its token F1):")
            click.echo(render_subtype_recall(table, "score"))
    click.echo(
        f"\n{len(result.cells)} cells ({len(opened)} scenarios × horizons × {len(arms)} arms), "
        f"{result.generated_worlds} worlds generated, {len(result.faults)} faults, "
        f"isolation: {', '.join(result.manifest['isolation'])}, {elapsed:.1f} s → {out}"
    )
    describe = getattr(options.synthesizer, "describe_usage", None)
    if result.generated_worlds and describe is not None:
        click.echo(describe())
    if result.llm_usage:
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
    for fault in result.faults[:20]:
        click.echo(f"  fault: {fault}")
    if len(result.faults) > 20:
        click.echo(
            f"  … and {len(result.faults) - 20} more "
            "(column `error` of memory_snapshots / retrievals)"
        )
    if json_path is not None:
        payload = summary_json(result.cells, [source.id for source in opened])
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    invalid = [cell for cell in result.cells if not cell.valid]
    for cell in invalid:
        click.echo(
            f"  invalid: {cell.arm.key} on {cell.scenario}/{cell.horizon}: "
            f"{cell.fault_rate:.1%} of its calls faulted or were skipped "
            f"(limit {max_fault_rate:.1%}, --max-fault-rate); not ranked"
        )
    for failure in result.start_failures:
        click.echo(f"{failure} (no rows written for it)", err=True)
    if result.start_failures:
        sys.exit(EXIT_BACKEND_START)
    if fail_on_error and result.faults:
        sys.exit(1)
    if invalid:
        sys.exit(EXIT_INVALID_ARM)


def _evaluation_options(reader: str, judge: str) -> EvaluationOptions:
    """Reader and judge from the switches and the environment, or exit 2 in one line."""
    from drift_pipeline.llm import LLMError

    try:
        return EvaluationOptions.from_env(reader, judge)  # type: ignore[arg-type]
    except (LLMError, ValueError) as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)


def _braincore_options(
    backend_options: dict[str, dict[str, Any]], adapter: str | None, arms: Sequence[Arm]
) -> dict[str, dict[str, Any]]:
    """The braincore backend's adapter fixed against this folder, or exit 2 in one line."""
    from drift_pipeline.braincore import BrainCoreError, caller_options

    if adapter is not None and not any(arm.backend == "braincore" for arm in arms):
        click.echo(
            "--braincore-adapter names the adapter of --backend braincore, which is not given",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    if adapter is None and "braincore" not in backend_options:
        return backend_options
    try:
        fixed = caller_options(backend_options.get("braincore", {}), adapter, Path.cwd())
    except BrainCoreError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    return {**backend_options, "braincore": fixed}


def _check_compressor(
    backend_options: dict[str, dict[str, Any]], source: WorldSource, via: str
) -> None:
    """The reference compressor's LLM summariser has an endpoint, or exit 2 in one line."""
    from drift_pipeline.pipeline import REFERENCE_ARM, backend_options_for

    if backend_options.get(REFERENCE_ARM.backend, {}).get("summariser") != "llm":
        return
    if via == "dagster":
        click.echo(
            "reference_compressor summariser llm: not available with --via dagster yet", err=True
        )
        sys.exit(EXIT_INVALID)
    try:
        backend_options_for(REFERENCE_ARM, source, backend_options)
    except ValueError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)


def _run_via_dagster(files: tuple[str, ...], options: RunOptions) -> RunResult:
    """``drift run --via dagster`` on scenario paths or imported data (``PREFIX:PATH``).

    Dagster is imported only when asked for.
    """
    import os

    if not os.environ.get("DAGSTER_HOME"):
        click.echo(
            "--via dagster needs DAGSTER_HOME (the project's instance: "
            'export DAGSTER_HOME="$PWD/.dagster_home" from the project root)',
            err=True,
        )
        sys.exit(EXIT_INVALID)
    import logging

    from drift_pipeline.defs.launch import InstanceUnavailable, run_via_dagster

    retries = _DatabaseRetries()
    logging.getLogger().addFilter(retries)
    result: RunResult | None = None
    failure: BaseException | None = None
    try:
        with _held_stderr() as (terminal, held):
            try:
                result = run_via_dagster(
                    list(files),
                    options.arms,
                    options.horizons,
                    options.out,
                    loop=options.loop,
                    backend_options=options.backend_options,
                    log=lambda line: click.echo(line, file=terminal),
                )
            except BaseException as error:  # reported or raised again below, once restored
                failure = error
    finally:
        logging.getLogger().removeFilter(retries)
    if isinstance(failure, InstanceUnavailable):
        click.echo(str(failure), err=True)
        sys.exit(1)
    # Each of these is one line, printed by the caller; Dagster's account would repeat it.
    if not isinstance(failure, BackendStartError | IsolationError | RootBusy):
        sys.stderr.write(held.getvalue())
    if failure is not None:
        raise failure
    assert result is not None
    return result


@contextlib.contextmanager
def _held_stderr() -> Iterator[tuple[TextIO, io.StringIO]]:
    """Hold back what is written to stderr, by Python code or by native code (fd 2).

    Yields a stream to the real stderr (for this command's own progress lines) and the buffer
    that receives the rest, complete once the block ends. When the Dagster instance's database
    goes away, Dagster and the PostgreSQL client library write a retry warning per attempt, a
    traceback per failed write and the server's notices; the one line the caller prints says
    it all. Otherwise the caller writes the buffer out as it is.
    """
    held = io.StringIO()
    original = sys.stderr
    original.flush()
    try:
        on_fd2 = original.fileno() == 2
    except (AttributeError, OSError, ValueError):
        on_fd2 = False  # a stream of the caller's (a test runner's capture): write to it as is
    saved = os.dup(2)
    with tempfile.TemporaryFile() as native:
        os.dup2(native.fileno(), 2)
        terminal: TextIO = (
            os.fdopen(os.dup(saved), "w", buffering=1, encoding="utf-8", errors="replace")
            if on_fd2
            else original
        )
        try:
            with contextlib.redirect_stderr(held):
                yield terminal, held
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if on_fd2:
                terminal.close()
            native.seek(0)
            held.write(native.read().decode("utf-8", "replace"))


class _DatabaseRetries:
    """Drops dagster-postgres's warning per connection retry (the outcome is reported)."""

    def filter(self, record: object) -> bool:
        """Keep every record but a retry warning."""
        message = getattr(record, "msg", "")
        return not (isinstance(message, str) and message.startswith("Retrying failed database"))


@main.command()
@click.option("--horizon", type=click.Choice(HORIZON_NAMES), help="Only worlds of this horizon.")
@click.option(
    "--scenario",
    "scenario_ids",
    multiple=True,
    metavar="ID",
    help="Only this scenario id (repeatable).",
)
@click.option("--ablation", metavar="NAME", help="Only this ablation's arms (ablations.yaml).")
@click.option(
    "--arm", "arm_keys", multiple=True, metavar="BACKEND@GATE", help="Only this arm (repeatable)."
)
@click.option(
    "--launch", is_flag=True, help="Create a backfill for the dagster dev daemon instead."
)
@click.option("--dry-run", is_flag=True, help="Print the selection and the runs only.")
def backfill(
    horizon: str | None,
    scenario_ids: tuple[str, ...],
    ablation: str | None,
    arm_keys: tuple[str, ...],
    launch: bool,
    dry_run: bool,
) -> None:
    """Recompute registered Dagster partitions: a horizon, scenarios, an ablation's arms.

    Runs every selected world (tables if stale, baselines) and cell now, as Dagster runs
    against the instance at DAGSTER_HOME, then the reports; --launch hands the same selection
    to the daemon as one asset backfill. Scenario folders and the storage root come from
    DRIFT_SCENARIOS (default scenarios) and DRIFT_DATA_ROOT (default data), as for dagster dev.
    """
    import os

    if not os.environ.get("DAGSTER_HOME"):
        click.echo(
            'drift backfill needs DAGSTER_HOME: export DAGSTER_HOME="$PWD/.dagster_home" '
            "from the project root",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    from drift_pipeline.defs.launch import backfill as run_backfill

    try:
        run_backfill(
            horizon,
            scenario_ids,
            ablation,
            arm_keys,
            launch=launch,
            dry_run=dry_run,
            echo=click.echo,
        )
    except ValueError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    except RuntimeError as error:
        click.echo(str(error), err=True)
        sys.exit(1)


@main.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option("--backend-a", required=True, metavar="NAME|module:Class")
@click.option("--backend-b", required=True, metavar="NAME|module:Class")
@click.option("--gate", default="hard", show_default=True, help="Gate of both arms.")
@HORIZON_OPTION
@OUT_OPTION
@click.option("--call-timeout", type=click.FloatRange(min=0.01), default=30.0, show_default=True)
def compare(
    scenario: Path,
    backend_a: str,
    backend_b: str,
    gate: str,
    horizons: tuple[HorizonName, ...],
    out: StorageRoot,
    call_timeout: float,
) -> None:
    """Paired differences A − B per metric, with 95% intervals, on the same probes.

    Shows every metric registered with a compare position, in that order.

    Reads the cells of a finished run under --out; arms not run yet are run first.
    """
    opened = _load_all((str(scenario),))
    arms = _parse_arms((backend_a, backend_b), (gate,))
    if len(arms) < 2:
        click.echo("--backend-a and --backend-b name the same arm; nothing to compare", err=True)
        sys.exit(EXIT_INVALID)
    a, b = arms
    source = opened[0]
    worlds = [world.key for world in source.worlds(horizons)]
    wanted = [world.horizon for world in worlds]
    missing = [arm for arm in (a, b) for w in worlds if not cell_exists(out, CellKey(w, arm.key))]
    if missing or not all(world_is_current(out, source, h) for h in wanted):
        run_benchmark(
            opened,
            RunOptions(
                arms=sorted(set(missing) or {a, b}, key=arms.index),
                horizons=tuple(wanted),
                out=out,
                loop=LoopConfig(call_timeout=call_timeout),
            ),
        )
    click.echo(f"{source.id}: {a.key} − {b.key} (paired, 95% bootstrap intervals)")
    for world in worlds:
        horizon = world.horizon
        try:
            diff = compare_stored(out, world, a, b)
        except ValueError as error:  # e.g. cells read by the LLM reader
            click.echo(str(error), err=True)
            sys.exit(EXIT_INVALID)
        click.echo(f"\n{horizon}:")
        for line in comparison_lines(diff):
            click.echo(line)
    click.echo("\n* the interval excludes 0")


@main.command("judge-check")
@click.option(
    "--judge",
    type=click.Choice(["rule", "llm"]),
    default="llm",
    show_default=True,
    help="llm: the pinned LLM judge (DRIFT_LLM_BASE_URL, DRIFT_JUDGE_MODEL or DRIFT_LLM_MODEL); "
    "rule: the offline careful reader and the context judge (default set: labelled contexts).",
)
@click.option(
    "--set",
    "check_set",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="A labelled set of your own (JSON lines; each item an answer or a context); default: "
    "the shipped contexts (--judge rule) or answers (--judge llm).",
)
@click.option(
    "--others",
    is_flag=True,
    help="With --judge rule and no --set: the shipped contexts written by other authors "
    "(eleven sets, 1,658 items) instead of the hand-written ones.",
)
@OUT_OPTION
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the report (rates, categories, every decision) as JSON to this file.",
)
def judge_check(
    judge: str,
    check_set: Path | None,
    others: bool,
    out: StorageRoot,
    json_path: Path | None,
) -> None:
    """How strict are the reader and judge? Accuracy, false accepts and rejects on a labelled set.

    An item carries an answer (scored by the judge) or a context (read by the offline careful
    reader, then scored). The shipped context set covers plain, paraphrased, vague,
    hypothetical, questioned, third-party, sarcastic, negated, retracted and dated statements;
    the shipped answer set holds vague, wrong, paraphrased and plain answers. Targets: accuracy
    at least 90%, false accepts at most 5%. LLM replies are cached under --out's llm_cache.
    """
    from drift_pipeline.evaluation import LLMJudge, RuleJudge, load_check_set, run_judge_check
    from drift_pipeline.llm import LLMClient
    from drift_pipeline.pipeline import llm_cache_location

    try:
        items = load_check_set(check_set, contexts=judge == "rule", others=others)
    except (OSError, ValueError) as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    if judge == "rule":
        report = run_judge_check(RuleJudge(), items)
    else:
        options = _evaluation_options("llm", "llm")
        assert options.judge_llm is not None
        with LLMClient(options.judge_llm, llm_cache_location(out)) as client:
            report = run_judge_check(LLMJudge(client), items)
    click.echo(report.render())
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")


@main.command()
@click.argument("sql")
@OUT_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
)
def query(sql: str, out: StorageRoot, fmt: str) -> None:
    """Run SQL in DuckDB over a run's tables (one view per table: probes, cell_metrics, …)."""
    con = connect(out)
    try:
        relation = con.sql(sql)
    except duckdb.Error as error:
        click.echo(f"query failed: {str(error).splitlines()[0]}", err=True)
        sys.exit(EXIT_INVALID)
    if relation is None:
        return
    if fmt == "table":
        click.echo(str(relation))
    elif fmt == "csv":
        frame = relation.to_arrow_table()
        click.echo(",".join(frame.column_names))
        for row in zip(*(frame.column(c).to_pylist() for c in frame.column_names), strict=True):
            click.echo(",".join("" if v is None else str(v) for v in row))
    else:
        frame = relation.to_arrow_table()
        click.echo(json.dumps(frame.to_pylist(), default=str, indent=2))


@main.command()
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the figures as JSON to this file.",
)
@click.option(
    "--only",
    default=None,
    metavar="KEY[,KEY]",
    help="Measure only these keys (the others are null / 'not measured').",
)
@click.option(
    "--scenarios",
    "suite",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("scenarios"),
    show_default=True,
    help="The canonical suite folder (holds ua-baseline-001.yaml).",
)
def bench(json_path: Path | None, only: str | None, suite: Path) -> None:
    """Measure the harness's speed and memory against its performance targets; print a table.

    Exits 0 even when figures fall short (it is a measurement); the short ones are listed.
    """
    from drift_pipeline.bench import MeasuredFailure, parse_only, run_bench
    from drift_pipeline.bench._worlds import CANONICAL_FILE

    try:
        keys = parse_only(only)
    except ValueError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    if not (suite / CANONICAL_FILE).is_file():
        click.echo(f"--scenarios {suite}: no {CANONICAL_FILE} there", err=True)
        sys.exit(EXIT_INVALID)
    try:
        report = run_bench(suite, keys, log=lambda line: click.echo(line, err=True))
    except MeasuredFailure as error:
        click.echo(f"bench: a measured command failed: {error}", err=True)
        sys.exit(1)
    click.echo(report.table())
    short = report.short()
    click.echo(
        f"\nshort of target: {', '.join(short)}"
        if short
        else "\nevery measured key is within its target"
    )
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report.json(), indent=2) + "\n", encoding="utf-8")


@main.group()
def audit() -> None:
    """Audits of generated worlds."""


@audit.command("diversity")
@click.argument("worlds", nargs=-1, required=True)
@click.option(
    "--against",
    "against",
    multiple=True,
    metavar="WORLDS",
    help="Another world root (repeatable): report the share of skeletons it already has.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the figures as JSON to this file.",
)
def audit_diversity(
    worlds: tuple[str, ...], against: tuple[str, ...], json_path: Path | None
) -> None:
    """Phrasing diversity of the worlds under WORLDS (storage roots written by drift generate).

    Counts distinct sentence skeletons (values, names, dates and numbers masked) per event type
    and decoy kind, the share a world set given with --against already has, and how much of the
    signal the regex baseline fitted to the public phrasing split keeps.
    """
    from drift_pipeline.world.diversity import diversity_report, read_worlds, render

    try:
        measured = read_worlds(worlds)
        other = read_worlds(against) if against else None
    except FileNotFoundError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_INVALID)
    report = diversity_report(measured, other)
    click.echo(render(report))
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_dict(), indent=2) + "\n")


main.add_command(braincore_command)

if __name__ == "__main__":
    main()
