"""Reading scenario files: YAML with line numbers, then schema, then cross-field rules."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._errors import Finding, Problem, ScenarioError, findings_from_validation, format_path
from ._semantics import semantic_findings
from ._spec import ScenarioSpec
from ._yaml import YamlDocument, read_yaml

_REQUIRED_FIELDS = ", ".join(
    name for name, field in ScenarioSpec.model_fields.items() if field.is_required()
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

    Values are checked strictly, as a file spells them: ``replicates: yes`` or
    ``sessions: "30"`` are errors, not silently read as numbers.

    Args:
        data: The parsed YAML document.
        source: Label used in error lines (usually the file name).

    Returns:
        The validated scenario.

    Raises:
        ScenarioError: Listing every problem found (without line numbers, which only
            :func:`parse_scenario_text` knows).

    """
    return _validate(data, source, None)


def parse_scenario_text(text: str, source: str = "<scenario>") -> ScenarioSpec:
    """Parse and validate scenario YAML text.

    Args:
        text: The YAML text.
        source: Label used in error lines (usually the file name).

    Returns:
        The validated scenario.

    Raises:
        ScenarioError: For a YAML syntax error, or listing every validation problem, each
            with the line it is on where that can be found.

    """
    document = read_yaml(text)
    if isinstance(document, Problem):
        raise ScenarioError(source, [document])
    return _validate(document.data, source, document)


def load_scenario(path: str | Path) -> LoadedScenario:
    """Read and validate one scenario file.

    Args:
        path: The scenario file.

    Returns:
        The validated scenario with its source and content hash.

    Raises:
        ScenarioError: If the file cannot be read, is not UTF-8, or is invalid.

    """
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise ScenarioError(source, [Problem("", f"cannot read file: {error.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        byte = raw[error.start : error.start + 1].hex()
        problem = Problem("", f"file is not UTF-8 text (byte 0x{byte}); save it as UTF-8", line)
        raise ScenarioError(source, [problem]) from None
    spec = parse_scenario_text(text, source)
    return LoadedScenario(spec=spec, source=source, sha256=hashlib.sha256(raw).hexdigest())


def scenario_files(paths: list[str | Path]) -> list[Path]:
    """Expand files and folders into scenario files.

    Args:
        paths: Files, taken as given, and folders, which contribute their ``*.yaml`` and
            ``*.yml`` files in name order (except ``ablations.yaml``, which is not a scenario).

    Returns:
        The files to validate or run, in the order given.

    """
    found: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found.extend(
                sorted(
                    child
                    for child in path.iterdir()
                    if child.suffix in (".yaml", ".yml") and child.name != "ablations.yaml"
                )
            )
        else:
            found.append(path)
    return found


def _validate(data: Any, source: str, document: YamlDocument | None) -> ScenarioSpec:
    """Check the shape, then the schema, then cross-field rules; raise with every problem."""
    if data is None:
        message = f"empty scenario file; expected a mapping with {_REQUIRED_FIELDS}"
        raise ScenarioError(source, [Problem("", message)])
    if not isinstance(data, dict):
        line = document.root.start_mark.line + 1 if document and document.root else None
        message = f"top level must be a mapping of fields, got {_yaml_kind(data)}"
        raise ScenarioError(source, [Problem("", message, line)])
    try:
        # Strict, because YAML reads `yes`/`on` as booleans and pydantic's lax mode would turn
        # them into 1; the JSON Schema editors use rejects them too.
        spec = ScenarioSpec.model_validate(data, strict=True)
    except ValidationError as error:
        findings = findings_from_validation(error, ScenarioSpec, data)
        raise ScenarioError(source, _placed(findings, document)) from None
    findings = semantic_findings(spec)
    if findings:
        raise ScenarioError(source, _placed(findings, document))
    return spec


def _placed(findings: list[Finding], document: YamlDocument | None) -> list[Problem]:
    """Give each finding its rendered path and, when the node tree is known, its line.

    Problems come back in file order (whole-file problems first), which is the order a reader
    fixes them in; pydantic's own order follows the model, not the file.
    """
    problems = [
        Problem(
            format_path(finding.loc),
            finding.message,
            document.line_of(finding.loc) if document is not None else None,
        )
        for finding in findings
    ]
    return sorted(problems, key=lambda problem: problem.line or 0)


def _yaml_kind(value: object) -> str:
    """Name a YAML value's kind the way a YAML author would."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
