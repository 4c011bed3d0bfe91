"""Reading scenario files: YAML with line numbers, then schema, then cross-field rules."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ._errors import Problem, ScenarioError, problems_from_validation
from ._semantics import semantic_problems
from ._spec import ScenarioSpec


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _mapping_without_duplicates,  # type: ignore[arg-type]
)


@dataclass(frozen=True)
class LoadedScenario:
    """A validated scenario with where it came from.

    Attributes:
        spec: The validated scenario.
        source: The file it was read from (or a label for in-memory text).
        sha256: Hash of the file's bytes, recorded in manifests so results name their input.
    """

    spec: ScenarioSpec
    source: str
    sha256: str


def parse_scenario(data: Any, source: str = "<scenario>") -> ScenarioSpec:
    """Validate already-parsed YAML data.

    Raises:
        ScenarioError: Listing every problem found.
    """
    if data is None:
        raise ScenarioError(
            source, [Problem("", "empty scenario file; expected a mapping with id, paradigm, "
                             "horizon, noise_ratio, entities")]
        )
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ScenarioError(source, [Problem("", f"top level must be a mapping of fields, got {kind}")])
    try:
        spec = ScenarioSpec.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(source, problems_from_validation(error, ScenarioSpec, data)) from None
    problems = semantic_problems(spec)
    if problems:
        raise ScenarioError(source, problems)
    return spec


def parse_scenario_text(text: str, source: str = "<scenario>") -> ScenarioSpec:
    """Parse and validate scenario YAML text.

    Raises:
        ScenarioError: For YAML syntax errors (with line) and every validation problem.
    """
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        line = mark.line + 1 if mark is not None else None
        column = f", column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError(source, [Problem("", f"YAML syntax error{column}: {problem}", line)]) from None
    return parse_scenario(data, source)


def load_scenario(path: str | Path) -> LoadedScenario:
    """Read and validate one scenario file.

    Raises:
        ScenarioError: If the file cannot be read or is invalid.
    """
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise ScenarioError(source, [Problem("", f"cannot read file: {error.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(source, [Problem("", "file is not UTF-8 text")]) from None
    spec = parse_scenario_text(text, source)
    return LoadedScenario(spec=spec, source=source, sha256=hashlib.sha256(raw).hexdigest())


def scenario_files(paths: list[str | Path]) -> list[Path]:
    """Expand files and folders (their ``*.yaml``/``*.yml`` files, sorted) into scenario files."""
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml")
                                and p.name != "ablations.yaml"))
        else:
            found.append(path)
    return found
