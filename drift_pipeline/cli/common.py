"""Option bundles and input checks that several ``drift`` commands share.

Listing the commands (``drift --help``) imports every command module, so this module and the
command modules import the pipeline's packages inside the functions that use them: a command
loads the tables, backends or Dagster only when it runs and needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from drift_pipeline.keys import HORIZON_NAMES

from .errors import CommandError
from .places import writable_file

if TYPE_CHECKING:
    from drift_pipeline.keys import HorizonName
    from drift_pipeline.memory import Arm
    from drift_pipeline.pipeline import EvaluationOptions
    from drift_pipeline.sources import WorldSource
    from drift_pipeline.storage import StorageRoot
    from drift_pipeline.world.synthesis import Synthesizer

F = TypeVar("F", bound=Callable[..., Any])

SOURCES_HELP = (
    "SOURCES are scenario files or folders of them, or PREFIX:PATH for data read by a "
    "registered importer (a plain path is a scenario file): locomo:FILE.json, "
    "longmemeval:FILE.json, or an installed importer's prefix. PREFIX:PATH?NAME=VALUE passes "
    "an option to the importer (locomo:FILE.json?midpoint=true)."
)
"""Epilog of the commands that take SOURCES."""

SOURCES_ARGUMENT = click.argument("sources", nargs=-1, required=True, metavar="SOURCES...")

HORIZON_OPTION = click.option(
    "--horizon",
    "horizons",
    multiple=True,
    type=click.Choice(HORIZON_NAMES),
    help="Only these horizons (repeatable); default: every horizon each scenario declares. "
    "A scenario declaring none of them is left out (named on stderr); exit 2 when none does.",
)


def _storage_root(ctx: click.Context, param: click.Parameter, value: str) -> StorageRoot:
    """``--out``: a local folder or ``s3://bucket/prefix`` (credentials from the environment)."""
    from drift_pipeline.storage import StorageRoot

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

CALL_TIMEOUT_OPTION = click.option(
    "--call-timeout", type=click.FloatRange(min=0.01), default=30.0, show_default=True
)
"""``--call-timeout`` without help (``drift run`` says more about it)."""

REAL_CLOCK_OPTION = click.option(
    "--real-clock",
    is_flag=True,
    help="Backends' clocks read the real time; by default, during each store and retrieve, "
    "time.time(), datetime.now() and the like read the simulated time of its session.",
)
"""``--real-clock``: the backends' clocks are not moved to the sessions' simulated time."""

ALLOW_LEAK_OPTION = click.option(
    "--allow-leak",
    "allow_leaks",
    multiple=True,
    metavar="NAME|module:Class",
    help="Let this backend keep entities' memories together (repeatable): the conformance "
    "check reports the leak instead of refusing the arm, the run manifest records it, and "
    "the arm's row is marked as leaking, its Privacy not measured.",
)
"""``--allow-leak NAME``: the user accepts a backend that leaks across entities (recorded)."""


def _writable_json(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None:
        writable_file(value, "--json")
    return value


def json_option(help_text: str) -> Callable[[F], F]:
    """``--json FILE`` (into ``json_path``): where a command also writes its figures."""
    return click.option(
        "--json",
        "json_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        callback=_writable_json,
        help=help_text,
    )


def sources_for_horizons(
    opened: Sequence[WorldSource], horizons: Sequence[HorizonName]
) -> list[WorldSource]:
    """The sources that declare a horizon of ``--horizon`` (all of them without it).

    A source declaring none of them is left out, one declaring some is run at those only;
    either is said on stderr, one line each. Nothing is ever run at a horizon not asked for.

    Raises:
        CommandError: No source declares any horizon asked for, one line per source (exit 2).
    """
    from drift_pipeline.pipeline import HorizonNotDeclared, select_horizons

    try:
        selection = select_horizons(opened, horizons)
    except HorizonNotDeclared as error:
        raise CommandError.lines(error.lines) from error
    for note in selection.notes:
        click.echo(note, err=True)
    return selection.sources


def load_sources(texts: Sequence[str]) -> list[WorldSource]:
    """Open every source and check it can be written.

    Raises:
        CommandError: One line per problem (exit 2).
    """
    from drift_pipeline.sources import SourceError, open_sources

    try:
        sources = open_sources(tuple(texts))
        for source in sources:
            source.check()
    except SourceError as error:
        raise CommandError.lines(error.lines()) from error
    except ValueError as error:  # GenerationUnsupported: a paradigm without a generator
        raise CommandError(str(error)) from error
    return sources


def synthesizer_for(name: str, out: StorageRoot) -> Synthesizer | None:
    """The synthesizer of ``--synthesizer`` (None: the template default).

    Raises:
        CommandError: The LLM synthesizer has no endpoint configured (exit 2).
    """
    if name == "template":
        return None
    from drift_pipeline.llm import LLMError
    from drift_pipeline.pipeline import llm_cache_location
    from drift_pipeline.world.synthesis import synthesizer_from_env

    try:
        return synthesizer_from_env(llm_cache_location(out))
    except LLMError as error:
        raise CommandError(f"--synthesizer llm: {error}") from error


def evaluation_options(reader: str, judge: str) -> EvaluationOptions:
    """Reader and judge from the switches and the environment.

    Raises:
        CommandError: An LLM reader or judge without its endpoint, or an LLM judge without an
            LLM reader (exit 2).
    """
    from drift_pipeline.llm import LLMError
    from drift_pipeline.pipeline import EvaluationOptions

    try:
        return EvaluationOptions.from_env(reader, judge)  # type: ignore[arg-type]
    except (LLMError, ValueError) as error:
        raise CommandError(str(error)) from error


def parse_arms(
    backends: Sequence[str], gates: Sequence[str], option: str = "--backend"
) -> list[Arm]:
    """Backend × gate arms (default: the built-in backends under the hard gate).

    Args:
        backends: Backend names or ``package.module:Class``.
        gates: Gate specs.
        option: The option that gave ``backends``, as errors name it.

    Raises:
        CommandError: Naming the bad ``--backend`` (``option``) or ``--gate`` value (exit 2).
    """
    from drift_pipeline.memory import Arm, Gate
    from drift_pipeline.memory.backends import default_backend_names

    arms: list[Arm] = []
    for backend in backends or default_backend_names():
        _check_backend(backend, option)
        for gate in gates or ("hard",):
            try:
                arm = Arm(backend, Gate.parse(gate))
            except ValueError as error:
                raise CommandError(f"--gate: {error}") from error
            if arm not in arms:
                arms.append(arm)
    return arms


def _check_backend(backend: str, option: str) -> None:
    """A built-in (or installed) backend name whose needs are met, or ``package.module:Class``."""
    from drift_pipeline.memory.backends import backend_names, backend_needs

    if ":" in backend:
        module, _, cls = backend.partition(":")
        if not module or not cls or not all(p.isidentifier() for p in [*module.split("."), cls]):
            raise CommandError(
                f"{option} {backend!r}: expected a built-in name or package.module:Class"
            )
        return
    try:  # an installed package's clashing entry point, or a package a backend lacks
        known = backend_names()
        if backend in known:
            backend_needs(backend).check(backend)
    except ValueError as error:
        raise CommandError(f"{option} {backend!r}: {error}") from error
    if backend not in known:
        raise CommandError(
            f"{option} {backend!r}: unknown backend; "
            f"built-ins: {', '.join(known)}, or package.module:Class"
        )
