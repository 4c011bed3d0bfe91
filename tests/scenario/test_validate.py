"""`drift validate` and `drift schema`, run as the installed command a user runs.

The per-file cases (every malformed and every valid fixture) call the same command in this
process, so each costs the check and not an interpreter start; the tests after them run the
installed command on files of every kind (valid, malformed, empty, missing, a folder).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from drift_pipeline.cli import main
from drift_pipeline.entities import entity_types

from .corpus import CANONICAL, MALFORMED, VALID, Expected, expected_line, malformed, valid

DRIFT = Path(sys.executable).parent / "drift"
EXIT_INVALID = 2


def drift(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DRIFT), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def drift_in_process(
    *args: str | Path, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> subprocess.CompletedProcess[str]:
    """The command's exit code and output as :func:`drift` gives them, run in this process."""
    with monkeypatch.context() as patch:
        patch.chdir(cwd)
        result = CliRunner().invoke(main, [*map(str, args)])
    # An exception other than the command's exit would be a traceback in a user's terminal.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory; the tests assert it is still empty afterwards."""
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_corpus_covers_every_kind_the_issue_lists() -> None:
    kinds = {case.kind for case in malformed()}
    required = {
        "out_of_range", "wrong_type", "unknown_key", "unknown_paradigm", "unknown_entity_type",
        "unknown_pattern", "unknown_probe_type", "unknown_event_type", "duplicate_entity_id",
        "undeclared_topology_entity", "unreachable_checkpoint", "empty", "not_a_mapping",
        "yaml_syntax_error", "missing_required_field", "both_session_gaps", "ratios_not_summing",
        "duplicate_yaml_key", "not_utf8", "ua_without_human", "ua_nonlinear_pattern",
        "probe_not_in_paradigm",
    }  # fmt: skip
    assert required <= kinds, f"missing fixtures: {sorted(required - kinds)}"


@pytest.mark.parametrize("case", malformed(), ids=lambda case: case.kind)
def test_malformed_file_is_rejected_naming_the_field(
    case: Expected, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = listing(MALFORMED)

    result = drift_in_process("validate", case.file, cwd=workdir, monkeypatch=monkeypatch)

    assert result.returncode == EXIT_INVALID, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines, "no problem reported"
    assert all(line.startswith(f"{case.file}:") for line in lines), lines
    start = expected_line(case, str(case.file))
    matching = [line for line in lines if line.startswith(start) and case.message in line]
    assert matching, f"expected a line starting {start!r} containing {case.message!r}, got {lines}"
    assert listing(workdir) == [], "validate wrote into the working directory"
    assert listing(MALFORMED) == before, "validate wrote next to its input"


def test_every_problem_of_a_file_is_reported_on_its_own_line(workdir: Path) -> None:
    file = MALFORMED / "unknown_top_level_key.yaml"

    result = drift("validate", file, cwd=workdir)

    assert result.returncode == EXIT_INVALID
    assert result.stderr.splitlines() == [
        f"{file}: horizon: required field is missing",
        f"{file}:7: horizons: unknown key 'horizons'; allowed: id, version, description, "
        "paradigm, seed, replicates, horizon, noise_ratio, signal_ratio, soft_ratio, "
        "soft_signal_mentions, probes_per_checkpoint, entities, principal, topology, checkpoints, "
        "memory_reads",
    ]


def test_zero_byte_file_is_rejected(tmp_path: Path, workdir: Path) -> None:
    file = tmp_path / "zero.yaml"
    file.write_bytes(b"")

    result = drift("validate", file, cwd=workdir)

    assert result.returncode == EXIT_INVALID
    assert result.stderr.startswith(f"{file}: empty scenario file; expected a mapping with id, ")
    assert listing(workdir) == []


def test_missing_file_is_rejected_without_traceback(tmp_path: Path, workdir: Path) -> None:
    missing = tmp_path / "nowhere.yaml"

    result = drift("validate", missing, cwd=workdir)

    assert result.returncode == EXIT_INVALID
    assert result.stderr == f"{missing}: cannot read file: No such file or directory\n"


@pytest.mark.parametrize("file", valid(), ids=lambda file: file.name)
def test_valid_file_passes(file: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = drift_in_process("validate", file, cwd=workdir, monkeypatch=monkeypatch)

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    spec_id = yaml.safe_load(file.read_text())["id"]
    assert result.stdout.startswith(f"{file}: ok ({spec_id} v")
    assert listing(workdir) == []


def test_folder_and_mixed_arguments(workdir: Path) -> None:
    bad = MALFORMED / "out_of_range.yaml"

    result = drift("validate", VALID, bad, CANONICAL, cwd=workdir)

    # Valid files are still confirmed; one bad file makes the whole run fail.
    assert result.returncode == EXIT_INVALID
    ok_lines = result.stdout.splitlines()
    assert len(ok_lines) == len(list(VALID.glob("*.yaml"))) + 1
    assert all(": ok (" in line for line in ok_lines)
    assert [line.split(":")[0] for line in result.stderr.splitlines()] == [str(bad)]


def test_relative_paths_are_reported_as_given() -> None:
    relative = Path("tests/fixtures/scenarios/malformed/unknown_paradigm.yaml")
    result = drift("validate", relative, cwd=MALFORMED.parents[3])

    assert result.stderr.startswith(f"{relative}:6: paradigm: unknown value 'chat_bot'")


# --- drift schema ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = subprocess.run([str(DRIFT), "schema"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def test_schema_describes_the_top_level(schema: dict[str, Any]) -> None:
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    fields = {"id", "paradigm", "horizon", "noise_ratio", "entities", "topology", "checkpoints"}
    assert fields <= set(schema["properties"])
    assert schema["properties"]["paradigm"]["enum"] == [
        "user_assistant", "coding_agent", "crawler_agent", "multi_peer",
    ]  # fmt: skip
    # Files write `version: 2`; the schema must not flag what the validator accepts.
    assert sorted(schema["properties"]["version"]["type"]) == ["number", "string"]


def test_schema_lists_every_registered_entity_type(schema: dict[str, Any]) -> None:
    mapping = schema["properties"]["entities"]["items"]["discriminator"]["mapping"]
    assert set(mapping) == {entity_type.name for entity_type in entity_types()}


@pytest.mark.parametrize("file", valid(), ids=lambda file: file.name)
def test_schema_accepts_valid_files(schema: dict[str, Any], file: Path) -> None:
    # jsonschema is not a dependency; check the structure a schema-aware editor checks first:
    # required keys present, no key outside properties, entity types and literals allowed.
    data = yaml.safe_load(file.read_text())
    properties = schema["properties"]
    assert set(schema["required"]) <= set(data)
    assert set(data) <= set(properties)
    assert data["paradigm"] in properties["paradigm"]["enum"]
    mapping = properties["entities"]["items"]["discriminator"]["mapping"]
    for entity in data["entities"]:
        model = schema["$defs"][mapping[entity["type"]].rsplit("/", 1)[1]]
        assert set(model["required"]) <= set(entity)
        assert set(entity) <= set(model["properties"])
    assert set(data["horizon"]) <= set(schema["$defs"]["Horizons"]["properties"])
