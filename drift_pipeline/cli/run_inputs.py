"""``drift run``'s input, checked into run options before anything runs.

Every check raises :class:`~.errors.CommandError` with one line naming the bad value (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    evaluation_options,
    load_sources,
    parse_arms,
    sources_for_horizons,
    synthesizer_for,
)
from .errors import CommandError
from .places import check_dagster_home, writable_out

if TYPE_CHECKING:
    from drift_pipeline.keys import HorizonName
    from drift_pipeline.memory import Arm
    from drift_pipeline.pipeline import RunOptions
    from drift_pipeline.sources import WorldSource
    from drift_pipeline.storage import StorageRoot


def run_options(
    sources: Sequence[str],
    horizons: Sequence[HorizonName],
    backends: Sequence[str],
    gates: Sequence[str],
    ablations: Sequence[str],
    out: StorageRoot,
    *,
    via: str,
    reader: str,
    judge: str,
    synthesizer: str,
    backend_config_file: Path | None,
    braincore_adapter: str | None,
    call_timeout: float,
    isolate: bool,
    max_consecutive_faults: int,
    max_fault_rate: float,
    jobs: int,
    simulated_clock: bool = True,
    keep_going: bool,
    allow_leaks: Sequence[str] = (),
) -> tuple[list[WorldSource], RunOptions]:
    """The opened sources and the run's options, every input checked before anything runs.

    The sources are those that declare a horizon of ``horizons`` (see
    :func:`.common.sources_for_horizons`).

    Raises:
        CommandError: Invalid input, one line naming it (exit 2).
    """
    from drift_pipeline.memory import LoopConfig
    from drift_pipeline.pipeline import RunOptions

    evaluation = evaluation_options(reader, judge)
    if evaluation.uses_llm and via == "dagster":
        raise CommandError("--reader llm / --judge llm: not available with --via dagster yet")
    if synthesizer == "llm" and via == "dagster":
        raise CommandError("--synthesizer llm: not available with --via dagster yet")
    if via == "dagster":
        check_dagster_home("--via dagster")
    writable_out(out)
    opened = sources_for_horizons(load_sources(sources), horizons)
    arms = run_arms(opened, backends, gates, ablations)
    from drift_pipeline.pipeline import REFERENCE_ARM

    # The reference compressor runs in every run and takes options too (its summariser).
    run = [*(arm.backend for arm in arms), REFERENCE_ARM.backend]
    backend_options = braincore_options(
        backend_config(backend_config_file, run), braincore_adapter, arms
    )
    check_compressor(backend_options, opened[0], via)
    check_arm_options(arms, backend_options, opened[0])
    check_allowed_leaks(arms, allow_leaks)
    return opened, RunOptions(
        arms=arms,
        horizons=tuple(horizons),
        out=out,
        loop=LoopConfig(
            call_timeout=call_timeout,
            isolate=isolate,
            max_consecutive_faults=max_consecutive_faults,
            max_fault_rate=max_fault_rate,
            simulated_clock=simulated_clock,
        ),
        backend_options=backend_options,
        evaluation=evaluation,
        synthesizer=synthesizer_for(synthesizer, out),
        jobs=jobs,
        keep_going=keep_going,
        allow_leaks=tuple(dict.fromkeys(allow_leaks)),
    )


def run_arms(
    sources: Sequence[WorldSource],
    backends: Sequence[str],
    gates: Sequence[str],
    ablations: Sequence[str],
) -> list[Arm]:
    """The arms of ``drift run``: backend × gate, and the named ablations' arms.

    An ablation is read from the ``ablations.yaml`` beside the scenario files among ``sources``.
    """
    from drift_pipeline.pipeline import AblationError, ablation_arms, find_ablations

    arms = parse_arms(backends, gates) if backends or gates or not ablations else []
    if not ablations:
        return arms
    try:
        scenarios = [source.origin for source in sources if source.kind == "scenario"]
        extra = ablation_arms(find_ablations(scenarios), list(ablations))
    except AblationError as error:
        raise CommandError(f"--ablation: {error}") from error
    return [*arms, *(arm for arm in extra if arm not in arms)]


def backend_config(path: Path | None, backends: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per-backend constructor options from a YAML mapping ``backend: {option: value}``.

    Every key must name one of ``backends``, the backends the command runs: a misspelt name
    would otherwise leave its backend on its defaults without a word.
    """
    import yaml

    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise CommandError(
            f"{path}: cannot read backend config: {str(error).splitlines()[0]}"
        ) from error
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise CommandError(f"{path}: expected a mapping of backend name to a mapping of options")
    run = list(dict.fromkeys(backends))
    for name in data:
        if name not in run:
            raise CommandError(
                f"{path}: {str(name)!r} names no backend of this run "
                f"(backends run: {', '.join(run)})"
            )
    return {str(k): dict(v) for k, v in data.items()}


def braincore_options(
    backend_options: dict[str, dict[str, Any]], adapter: str | None, arms: Sequence[Arm]
) -> dict[str, dict[str, Any]]:
    """The braincore backend's adapter fixed against this folder."""
    if adapter is not None and not any(arm.backend == "braincore" for arm in arms):
        raise CommandError(
            "--braincore-adapter names the adapter of --backend braincore, which is not given"
        )
    if adapter is None and "braincore" not in backend_options:
        return backend_options
    from drift_pipeline.braincore import BrainCoreError, caller_options

    try:
        fixed = caller_options(backend_options.get("braincore", {}), adapter, Path.cwd())
    except BrainCoreError as error:
        raise CommandError(str(error)) from error
    return {**backend_options, "braincore": fixed}


def check_arm_options(
    arms: Sequence[Arm], backend_options: dict[str, dict[str, Any]], source: WorldSource
) -> None:
    """Every arm's backend can be given its options (a model it needs has its endpoint set)."""
    from drift_pipeline.pipeline import backend_options_for

    for arm in arms:
        try:
            backend_options_for(arm, source, backend_options)
        except ValueError as error:
            raise CommandError(str(error)) from error


def check_allowed_leaks(arms: Sequence[Arm], allow_leaks: Sequence[str]) -> None:
    """Every ``--allow-leak`` names the backend of an arm the conformance check would check."""
    from drift_pipeline.memory.backends import built_in

    backends = dict.fromkeys(arm.backend for arm in arms)
    checked = [backend for backend in backends if not built_in(backend)]
    for name in allow_leaks:
        if name not in checked:
            found = ", ".join(checked) or "none"
            raise CommandError(
                f"--allow-leak {name}: not a checked backend of this run (the package's own "
                f"backends are never checked; checked here: {found})"
            )


def check_compressor(
    backend_options: dict[str, dict[str, Any]], source: WorldSource, via: str
) -> None:
    """The reference compressor's LLM summariser, if asked for, has an endpoint."""
    from drift_pipeline.pipeline import REFERENCE_ARM, backend_options_for

    if backend_options.get(REFERENCE_ARM.backend, {}).get("summariser") != "llm":
        return
    if via == "dagster":
        raise CommandError(
            "reference_compressor summariser llm: not available with --via dagster yet"
        )
    try:
        backend_options_for(REFERENCE_ARM, source, backend_options)
    except ValueError as error:
        raise CommandError(str(error)) from error
