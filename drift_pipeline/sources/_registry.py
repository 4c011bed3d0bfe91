"""The source registry: ``PREFIX:PATH`` names an importer, a plain path a scenario file or folder.

``drift run locomo:data/locomo10.json`` opens the file with the importer registered under
``locomo``; ``drift run scenarios/`` (or ``scenario:scenarios/``) opens the scenario files there.
An importer is a function ``(path: str) -> WorldSource | Sequence[WorldSource]``, registered
lazily by import path, in-process (:func:`register_source`) or from an installed package through
the ``drift_pipeline.sources`` entry-point group::

    [project.entry-points."drift_pipeline.sources"]
    locomo = "my_package.locomo:open_locomo"
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast
from urllib.parse import parse_qsl

from drift_pipeline._lazy import Registry, RegistryError, callable_entry
from drift_pipeline.scenario import ScenarioError, scenario_files

from ._base import SourceError, WorldSource
from ._scenario import ScenarioSource

__all__ = [
    "SOURCE_GROUP",
    "SourceLoader",
    "data_path",
    "imported_source_name",
    "names_imported_data",
    "open_scenarios",
    "open_source",
    "open_sources",
    "register_source",
    "source_prefixes",
    "unregister_source",
]

SOURCE_GROUP = "drift_pipeline.sources"
"""Entry-point group through which installed packages register importers."""

SourceLoader = Callable[..., "WorldSource | Sequence[WorldSource]"]
"""An importer: opens the path after its prefix and returns the source(s) found there. Options
given as ``PREFIX:PATH?name=value`` arrive as keyword arguments, their values as text."""

_PREFIX = re.compile(r"^(?P<prefix>[a-z][a-z0-9_]+):(?P<path>.+)$")
"""``name:path``; one-letter prefixes are left to drive letters (``C:\\data``)."""

SCENARIO_PREFIX = "scenario"


def _loader(name: str, value: object) -> SourceLoader:
    return cast(SourceLoader, callable_entry(name, value))


# One-letter prefixes are left to drive letters.
_SOURCES: Registry[SourceLoader] = Registry(
    "source",
    SOURCE_GROUP,
    _loader,
    name_pattern=re.compile(r"[a-z][a-z0-9_]+"),
    name_rule="lower-case [a-z][a-z0-9_]+",
)
_SOURCES.register(SCENARIO_PREFIX, "drift_pipeline.sources._registry:open_scenarios")
# Built-in importers of published datasets: imported only when their prefix is first used.
_SOURCES.register("locomo", "drift_pipeline.sources.replays.locomo:open_locomo")
_SOURCES.register("longmemeval", "drift_pipeline.sources.replays.longmemeval:open_longmemeval")
_SOURCES.register("braincore", "drift_pipeline.braincore._source:open_braincore")


def register_source(prefix: str, loader: str | SourceLoader) -> None:
    """Register an importer under ``prefix`` (``drift run PREFIX:PATH``).

    Args:
        prefix: Lower-case name, ``[a-z][a-z0-9_]+`` (two characters at least).
        loader: The importer, or its import path ``"package.module:function"`` (imported when
            a source with that prefix is first opened).

    Raises:
        RegistryError: The prefix or import path is malformed, or the prefix is taken by
            another importer.
    """
    _SOURCES.register(prefix, loader)


def unregister_source(prefix: str) -> None:
    """Forget the importer under ``prefix`` (tests; missing is fine)."""
    _SOURCES.unregister(prefix)


def source_prefixes() -> list[str]:
    """Every registered prefix, installed importers included, sorted."""
    return sorted(_SOURCES.names())


def open_scenarios(path: str) -> list[WorldSource]:
    """The scenario file at ``path``, or every scenario file in the folder ``path``.

    Raises:
        SourceError: One line per invalid file, or naming the folder that holds none.
    """
    sources: list[WorldSource] = []
    problems: list[str] = []
    for file in scenario_files([path]):
        try:
            sources.append(ScenarioSource.load(file))
        except ScenarioError as error:
            problems.extend(error.lines())
    if problems:
        raise SourceError(problems[0], problems[1:])
    if not sources:
        raise SourceError(f"no scenario files found in {path}")
    return sources


def names_imported_data(text: str) -> bool:
    """Whether ``text`` is ``PREFIX:PATH`` for an importer rather than a scenario path.

    The prefix need not be registered (opening it then says so); ``scenario:`` and paths that
    exist as written (a folder named ``a:b``, say) are scenario paths.
    """
    match = _PREFIX.match(text)
    return match is not None and match["prefix"] != SCENARIO_PREFIX and not Path(text).exists()


def data_path(text: str) -> Path:
    """The file or folder that ``PREFIX:PATH[?options]`` reads (``text`` itself otherwise)."""
    if not names_imported_data(text):
        return Path(text)
    path = text.partition(":")[2]
    if not Path(path).exists() and "?" in path:
        path = path.rpartition("?")[0]
    return Path(path)


def imported_source_name(text: str) -> tuple[str, str] | None:
    """``(prefix, path)`` when ``text`` names data of a registered importer, else ``None``.

    A scenario file or folder that exists under that name, and the ``scenario:`` prefix, are
    not imported data.
    """
    match = _PREFIX.match(text)
    if match is None or Path(text).exists():
        return None
    prefix = match["prefix"]
    if prefix == SCENARIO_PREFIX or prefix not in _SOURCES:
        return None
    return prefix, match["path"]


def open_source(text: str) -> list[WorldSource]:
    """The source(s) named by ``text``: ``PREFIX:PATH``, or a scenario file or folder.

    Raises:
        SourceError: An unknown prefix (listing the known ones), a missing file, or what the
            importer found wrong, one line per problem.
    """
    match = _PREFIX.match(text)
    if match is None or Path(text).exists():
        return open_scenarios(text)
    prefix, path = match["prefix"], match["path"]
    options: dict[str, str] = {}
    if not Path(path).exists() and "?" in path:
        # PREFIX:PATH?name=value&flag passes options to the importer (a path that really
        # holds a '?' is taken as it is).
        path, _, query = path.rpartition("?")
        options = {name: value or "true" for name, value in parse_qsl(query, True)}
    if prefix not in _SOURCES:
        raise SourceError(
            f"source {text!r}: unknown prefix {prefix!r} "
            f"(known: {', '.join(source_prefixes())}; a plain path is a scenario file)"
        )
    if not Path(path).exists():
        raise SourceError(f"source {text!r}: no such file or folder {path}")
    try:
        loader = _SOURCES.get(prefix)
    except RegistryError as error:
        raise SourceError(str(error)) from None
    try:
        opened = loader(path, **options) if options else loader(path)
    except SourceError:
        raise
    except TypeError as error:
        if not options:
            raise
        raise SourceError(
            f"source {text!r}: importer {prefix!r} does not take these options "
            f"({', '.join(sorted(options))}): {error}"
        ) from None
    except (OSError, ValueError) as error:
        raise SourceError(f"source {text!r}: {str(error).splitlines()[0]}") from None
    found = [opened] if isinstance(opened, WorldSource) else list(opened)
    if not found or not all(isinstance(s, WorldSource) for s in found):
        raise SourceError(f"source {text!r}: importer {prefix!r} returned no WorldSource")
    return found


def open_sources(texts: Sequence[str | Path]) -> list[WorldSource]:
    """Every source named by ``texts`` (see :func:`open_source`), ids unique.

    Raises:
        SourceError: Every problem found, one line each (nothing is opened half-way).
    """
    sources: list[WorldSource] = []
    problems: list[str] = []
    for text in texts:
        try:
            sources.extend(open_source(str(text)))
        except SourceError as error:
            problems.extend(error.lines())
    if problems:
        raise SourceError(problems[0], problems[1:])
    ids = [source.id for source in sources]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        first, *more = _duplicate_lines(sources, duplicates)
        raise SourceError(first, more)
    return sources


def _duplicate_lines(sources: Sequence[WorldSource], duplicates: Sequence[str]) -> list[str]:
    """One line per id that more than one source declares, naming where each was read."""
    lines: list[str] = []
    for scenario_id in duplicates:
        origins = list(dict.fromkeys(s.origin for s in sources if s.id == scenario_id))
        if len({os.path.realpath(origin) for origin in origins}) == 1:
            lines.append(f"{origins[0]}: given more than once (scenario id {scenario_id!r})")
        else:
            lines.append(
                f"scenario id {scenario_id!r} is used by more than one file: {', '.join(origins)}"
            )
    return lines
