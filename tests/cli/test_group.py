"""The ``drift`` group: one module per command, each added by one line, loaded when asked for."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from memory.plugins import _support

import drift_pipeline.cli
from drift_pipeline.cli import COMMANDS, CommandError, main
from drift_pipeline.cli import group as group_module

CLI_FOLDER = Path(drift_pipeline.cli.__file__).parent
MAX_LINES = 300
HEAVY = ("dagster", "polars", "duckdb", "pyarrow", "pandas")
"""Libraries that listing the commands or parsing a light command must not import."""


def _modules() -> list[Path]:
    return sorted(CLI_FOLDER.glob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.name)
def test_no_module_of_the_command_is_over_the_bound(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name}: {lines} lines (at most {MAX_LINES})"


def test_every_command_is_added_by_exactly_one_line() -> None:
    source = Path(group_module.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "COMMANDS"
    )
    assert isinstance(table, ast.Dict)
    lines = [key.lineno for key in table.keys if key is not None]
    assert len(lines) == len(set(lines)) == len(COMMANDS)
    assert all(
        key.lineno == value.lineno and key.end_lineno == value.end_lineno
        for key, value in zip(table.keys, table.values, strict=True)
        if key is not None
    ), "each entry is one line: name and module"


def test_every_command_module_is_registered_once_under_its_own_name() -> None:
    declaring = set()
    for path in _modules():
        if path.stem == "__main__":  # runs the command when imported
            continue
        module = importlib.import_module(f"drift_pipeline.cli.{path.stem}")
        if isinstance(getattr(module, "command", None), click.Command):
            declaring.add(path.stem)
    assert sorted(COMMANDS.values()) == sorted(declaring)
    for name, module_name in COMMANDS.items():
        command = importlib.import_module(f"drift_pipeline.cli.{module_name}").command
        assert command.name == name


def test_help_lists_every_command_in_order() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == sorted(COMMANDS)


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command 'no-such-command'" in result.output


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


def test_listing_the_commands_imports_no_heavy_library() -> None:
    code = (
        "from click.testing import CliRunner\n"
        "from drift_pipeline.cli import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0\n"
    )
    assert _imported_after(code) == []


def test_a_light_command_imports_no_heavy_library(tmp_path: Path) -> None:
    code = (
        "from click.testing import CliRunner\n"
        "from drift_pipeline.cli import main\n"
        "result = CliRunner().invoke(main, ['run', '--help'])\n"
        "assert result.exit_code == 0\n"
        f"result = CliRunner().invoke(main, ['validate', {str(tmp_path)!r}])\n"
        "assert result.exit_code == 2, result.output\n"
    )
    assert _imported_after(code) == []


def test_a_direct_run_that_records_nothing_in_dagster_never_imports_it(tmp_path: Path) -> None:
    # Its worlds' audit, leaderboard and record are Dagster-free; only recording needs it.
    scenario = _support.write_scenario(tmp_path, "group-direct")
    argv = ["run", str(scenario), "--backend", "bm25", "--out", str(tmp_path / "data")]
    code = (
        "import os\n"
        "os.environ['DRIFT_DAGSTER_RECORD'] = '0'\n"
        "from click.testing import CliRunner\n"
        "from drift_pipeline.cli import main\n"
        f"result = CliRunner().invoke(main, {argv!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'bm25@hard' in result.output, result.output\n"
    )
    assert "dagster" not in _imported_after(code)


def test_a_command_error_prints_its_lines_and_exits_with_its_status() -> None:
    @click.command()
    def failing() -> None:
        raise CommandError.lines(["a.yaml:3: seed: expected an integer", "b.yaml: not found"], 6)

    result = CliRunner().invoke(failing, [])
    assert result.exit_code == 6
    assert result.stderr == "a.yaml:3: seed: expected an integer\nb.yaml: not found\n"
    assert result.stdout == ""


def test_a_reported_status_prints_nothing_more() -> None:
    @click.command()
    def finished() -> None:
        click.echo("leaderboard")
        raise CommandError.reported(5)

    result = CliRunner().invoke(finished, [])
    assert (result.exit_code, result.stdout, result.stderr) == (5, "leaderboard\n", "")


@pytest.mark.parametrize(
    "entry",
    [
        [sys.executable, "-m", "drift_pipeline"],
        [sys.executable, "-m", "drift_pipeline.cli"],
        [str(Path(sys.executable).with_name("drift"))],
    ],
    ids=["python -m drift_pipeline", "python -m drift_pipeline.cli", "drift"],
)
def test_every_entry_point_runs_the_group(entry: list[str]) -> None:
    done = subprocess.run(
        [*entry, "schema"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["title"] == "DRIFT scenario"
