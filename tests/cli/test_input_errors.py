"""A user's mistake in what to run or where to write: one line, a documented status, nothing
written (horizons a scenario does not declare, output paths that cannot be written, a missing
Dagster instance, options named as the user typed them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from memory.plugins import _support

from drift_pipeline.cli.group import main

MEDIUM_ONLY = "  medium: { sessions: 20, session_gap_hours: 7 }\n"


def _scenarios(folder: Path) -> tuple[Path, Path]:
    """A scenario declaring short only, and one declaring medium only."""
    short = _support.write_scenario(folder, "mistake-short")
    medium = _support.write_scenario(folder, "mistake-medium")
    text = medium.read_text(encoding="utf-8")
    medium.write_text(
        text.replace("  short: { sessions: 16, session_gap_hours: 7 }\n", MEDIUM_ONLY),
        encoding="utf-8",
    )
    return short, medium


def _drift(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner(env=env).invoke(main, list(args))
    # Anything but the command's own exit would be a traceback in a user's terminal.
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _one_line(code: int, stdout: str, stderr: str) -> str:
    assert code == 2, stderr
    assert stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# --- a horizon the scenario does not declare ---------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--backend", "amnesiac", "--jobs", "2"],
        ["run", "--backend", "amnesiac", "--via", "dagster"],
        ["generate"],
        ["compare", "--backend-a", "amnesiac", "--backend-b", "bm25"],
    ],
)
def test_an_undeclared_horizon_is_one_line_and_writes_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    _, medium = _scenarios(tmp_path / "scenarios")
    out = tmp_path / "data"
    env = {"DAGSTER_HOME": str(tmp_path)}
    code, stdout, stderr = _drift(
        *command[:1], str(medium), *command[1:], "--horizon", "short", "--out", str(out), env=env
    )
    line = _one_line(code, stdout, stderr)
    assert line == f"{medium}: mistake-medium declares no short horizon (declared: medium)"
    assert not out.exists()


def test_generate_leaves_out_a_scenario_without_the_horizon_and_says_so(tmp_path: Path) -> None:
    short, medium = _scenarios(tmp_path / "scenarios")
    out = tmp_path / "data"
    code, stdout, stderr = _drift(
        "generate", str(short), str(medium), "--horizon", "short", "--out", str(out)
    )
    assert code == 0, stderr
    assert "mistake-short" in stdout and "mistake-medium" not in stdout
    assert stderr.strip().splitlines() == [
        f"{medium}: mistake-medium declares no short horizon (declared: medium); left out"
    ]
    written = {path.name for path in (out / "probes").iterdir()}
    assert written == {"scenario=mistake-short"}
    assert {path.name for path in (out / "probes" / "scenario=mistake-short").iterdir()} == {
        "horizon=short"
    }


# --- output paths that cannot be written -----------------------------------------------


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("mine\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--backend", "amnesiac"],
        ["generate"],
        ["compare", "--backend-a", "amnesiac", "--backend-b", "bm25"],
    ],
)
@pytest.mark.parametrize("below", ["", "sub"])
def test_an_out_with_a_file_in_the_way_is_one_line(
    tmp_path: Path, afile: Path, command: list[str], below: str
) -> None:
    short, _ = _scenarios(tmp_path / "scenarios")
    out = afile / below if below else afile
    code, stdout, stderr = _drift(*command[:1], str(short), *command[1:], "--out", str(out))
    assert _one_line(code, stdout, stderr) == f"--out {out}: {afile} is a file, not a folder"
    assert afile.read_text(encoding="utf-8") == "mine\n"


def test_import_names_an_out_with_a_file_in_the_way(tmp_path: Path, afile: Path) -> None:
    data = tmp_path / "conversations.json"
    data.write_text("[]", encoding="utf-8")
    code, stdout, stderr = _drift("import", "locomo", str(data), "--out", str(afile / "sub"))
    assert (
        _one_line(code, stdout, stderr) == f"--out {afile / 'sub'}: {afile} is a file, not a folder"
    )


@pytest.mark.parametrize("command", [["run", "--backend", "amnesiac"], ["generate"]])
def test_an_out_the_system_cannot_create_is_one_line(tmp_path: Path, command: list[str]) -> None:
    short, _ = _scenarios(tmp_path / "scenarios")
    out = "/proc/drift-no-such-folder"  # /proc takes no new folder, even from root
    code, stdout, stderr = _drift(*command[:1], str(short), *command[1:], "--out", out)
    assert _one_line(code, stdout, stderr).startswith(f"--out {out}: cannot create it (")


def test_a_json_file_under_a_file_is_refused_before_the_run(tmp_path: Path, afile: Path) -> None:
    short, _ = _scenarios(tmp_path / "scenarios")
    out, summary = tmp_path / "data", afile / "summary.json"
    code, stdout, stderr = _drift(
        "run", str(short), "--backend", "amnesiac", "--out", str(out), "--json", str(summary)
    )
    assert _one_line(code, stdout, stderr) == f"--json {summary}: {afile} is a file, not a folder"
    assert not out.exists()


def test_a_report_output_under_a_file_is_one_line(tmp_path: Path, afile: Path) -> None:
    page = afile / "x.html"
    code, stdout, stderr = _drift("report", str(tmp_path), "--output", str(page))
    assert _one_line(code, stdout, stderr) == f"--output {page}: {afile} is a file, not a folder"


@pytest.mark.parametrize(("name", "problem"), [("nodir", "no such folder"), ("afile", "a file")])
def test_query_names_an_out_that_is_not_a_folder(
    tmp_path: Path, afile: Path, name: str, problem: str
) -> None:
    out = tmp_path / name
    code, stdout, stderr = _drift("query", "select * from probes", "--out", str(out))
    assert _one_line(code, stdout, stderr).startswith(f"--out {out}: {problem}")


# --- the Dagster instance --------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (
            ["run", "SCENARIO", "--backend", "amnesiac", "--via", "dagster", "--out", "OUT"],
            "--via dagster",
        ),
        (["backfill", "--dry-run"], "drift backfill"),
    ],
)
def test_a_dagster_home_that_is_no_folder_is_one_line(
    tmp_path: Path, command: list[str], says: str
) -> None:
    short, _ = _scenarios(tmp_path / "scenarios")
    home, out = tmp_path / "no-such-home", tmp_path / "data"
    given = {"SCENARIO": str(short), "OUT": str(out)}
    args = [given.get(arg, arg) for arg in command]
    code, stdout, stderr = _drift(*args, env={"DAGSTER_HOME": str(home)})
    line = _one_line(code, stdout, stderr)
    assert line.startswith(f"{says} needs DAGSTER_HOME to be an existing folder: {home} ")
    assert not out.exists() and not home.exists()


def test_a_dagster_instance_that_cannot_be_loaded_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("run_storage: [\n", encoding="utf-8")
    code, stdout, stderr = _drift("backfill", "--dry-run", env={"DAGSTER_HOME": str(home)})
    line = _one_line(code, stdout, stderr)
    assert line.startswith(f"the Dagster instance at DAGSTER_HOME={home} cannot be loaded: ")
    assert f"{home}/dagster.yaml:2:1: " in line


# --- options named as given ------------------------------------------------------------


@pytest.mark.parametrize("option", ["--backend-a", "--backend-b"])
def test_compare_names_the_option_of_an_unknown_backend(tmp_path: Path, option: str) -> None:
    short, _ = _scenarios(tmp_path / "scenarios")
    backends = {"--backend-a": "amnesiac", "--backend-b": "bm25", option: "bm52"}
    code, stdout, stderr = _drift(
        "compare",
        str(short),
        *(x for pair in backends.items() for x in pair),
        "--out",
        str(tmp_path / "data"),
    )
    assert _one_line(code, stdout, stderr).startswith(f"{option} 'bm52': unknown backend")
