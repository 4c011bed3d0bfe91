"""``drift generate``: a summary for good scenarios, one clear line and no output for bad ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import CODING, COMMUTER, HABIT_LOOP, TWO_DESKS, table_files, write_scenario

from drift_pipeline.cli import main
from drift_pipeline.report import render_world_summaries
from drift_pipeline.storage import PART_FILE, WORLD_TABLES
from drift_pipeline.world import WorldSummary

DRIFT = str(Path(sys.executable).with_name("drift"))

BAD = {
    "unknown_key.yaml": HABIT_LOOP.replace("replicates: 2", "replicates: 2\nreplicats: 3"),
    "bad_ratio.yaml": HABIT_LOOP.replace("noise_ratio: 0.40", "noise_ratio: 0.60"),
    "syntax.yaml": HABIT_LOOP.replace("horizon:\n", "horizon: [\n"),
    "empty.yaml": "",
    "unknown_event.yaml": HABIT_LOOP.replace("habit_form: 0.50", "hobby_form: 0.50"),
}


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_good_scenarios_print_the_summary_table(tmp_path: Path):
    folder = tmp_path / "scenarios"
    for text in (COMMUTER, TWO_DESKS):
        write_scenario(folder, text)
    out = tmp_path / "out"
    code, stdout, stderr = _run("generate", str(folder), "--out", str(out))
    assert code == 0, stderr
    lines = stdout.strip().splitlines()
    assert lines[0].split()[:4] == ["scenario", "horizon", "reps", "sessions"]
    rows = [line.split() for line in lines[2:-2]]
    assert [(row[0], row[1], row[2], row[3]) for row in rows] == [
        ("test-commuter-a", "short", "3", "120"),
        ("test-commuter-a", "medium", "3", "480"),
        ("test-two-desks-b", "medium", "2", "600"),
    ]
    noise = {(row[0], row[1]): float(row[4]) for row in rows}
    assert noise[("test-commuter-a", "medium")] == pytest.approx(0.55, abs=0.05)
    assert noise[("test-two-desks-b", "medium")] == pytest.approx(0.80, abs=0.05)
    assert lines[-1].startswith("3 worlds, 1200 sessions, ")
    assert "sessions/s" in lines[-1] and str(out) in lines[-1]
    assert len([p for p in table_files(out) if p.name == PART_FILE]) == 3 * len(WORLD_TABLES)


def test_horizon_option_limits_the_worlds(tmp_path: Path):
    scenario = write_scenario(tmp_path, COMMUTER)
    out = tmp_path / "out"
    code, stdout, _ = _run("generate", str(scenario), "--horizon", "short", "--out", str(out))
    assert code == 0
    assert "1 worlds, 120 sessions" in stdout
    assert {p.parent.name for p in table_files(out) if p.name == PART_FILE} == {"horizon=short"}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_scenario_exits_2_and_writes_nothing(tmp_path: Path, name: str):
    good = write_scenario(tmp_path / "scenarios", COMMUTER)
    bad = write_scenario(tmp_path / "scenarios", BAD[name], name=name)
    out = tmp_path / "out"
    code, stdout, stderr = _run("generate", str(good), str(bad), "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert stderr.strip() and str(bad) in stderr
    assert "Traceback" not in stderr
    assert not out.exists()  # not even the good scenario's worlds


def test_a_missing_file_or_an_empty_folder_exits_2(tmp_path: Path):
    out = tmp_path / "out"
    code, _, stderr = _run("generate", str(tmp_path / "nope.yaml"), "--out", str(out))
    assert code == 2 and "cannot read file" in stderr
    (tmp_path / "empty").mkdir()
    code, _, stderr = _run("generate", str(tmp_path / "empty"), "--out", str(out))
    assert code == 2 and "no scenario files found" in stderr
    assert not out.exists()


def test_duplicate_scenario_ids_exit_2(tmp_path: Path):
    first = write_scenario(tmp_path, HABIT_LOOP, name="one.yaml")
    second = write_scenario(tmp_path, HABIT_LOOP, name="two.yaml")
    out = tmp_path / "out"
    code, _, stderr = _run("generate", str(first), str(second), "--out", str(out))
    assert code == 2
    assert stderr.strip() == (
        f"scenario id 'test-habit-loop-c' is used by more than one file: {first}, {second}"
    )
    assert not out.exists()


def test_the_same_file_given_twice_is_named(tmp_path: Path):
    scenario = write_scenario(tmp_path, HABIT_LOOP)
    out = tmp_path / "out"
    code, _, stderr = _run("generate", str(scenario), str(scenario), "--out", str(out))
    assert code == 2
    assert stderr.strip() == f"{scenario}: given more than once (scenario id 'test-habit-loop-c')"
    assert not out.exists()


def test_a_coding_agent_scenario_is_valid_but_not_generated(tmp_path: Path):
    scenario = write_scenario(tmp_path, CODING)
    out = tmp_path / "out"
    code, stdout, _ = _run("validate", str(scenario))
    assert code == 0 and "ok (test-coding-x v1)" in stdout
    code, stdout, stderr = _run("generate", str(scenario), "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert len(stderr.strip().splitlines()) == 1
    assert "coding_agent" in stderr and "test-coding-x" in stderr
    assert not out.exists()


def test_the_real_command_prints_no_traceback(tmp_path: Path):
    bad = write_scenario(tmp_path, BAD["bad_ratio.yaml"], name="bad.yaml")
    coding = write_scenario(tmp_path, CODING)
    out = tmp_path / "out"
    for scenario in (bad, coding):
        result = subprocess.run(
            [DRIFT, "generate", str(scenario), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2
        assert result.stdout == ""
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not out.exists()


def test_validate_accepts_the_test_scenarios(tmp_path: Path):
    for text in (COMMUTER, TWO_DESKS, HABIT_LOOP):
        write_scenario(tmp_path, text)
    code, stdout, stderr = _run("validate", str(tmp_path))
    assert code == 0, stderr
    assert sorted(line.split(": ")[1] for line in stdout.strip().splitlines()) == [
        "ok (test-commuter-a v1)",
        "ok (test-habit-loop-c v1)",
        "ok (test-two-desks-b v2)",
    ]


def test_the_summary_has_one_aligned_row_per_world_and_totals():
    summaries = [
        WorldSummary(
            scenario="s-1",
            horizon="short",
            replicates=2,
            sessions=60,
            tiers={"noise": 42, "signal": 6, "soft": 12},
            turns=400,
            distinct_turn_share=0.9,
            facts=30,
            probes=50,
            checkpoints=[10, 30],
            probes_per_checkpoint={10: 20, 30: 30},
            seconds=0.1,
        ),
        WorldSummary(
            scenario="s-1",
            horizon="long",
            replicates=2,
            sessions=2000,
            tiers={"noise": 1800, "signal": 200},
            turns=14000,
            distinct_turn_share=0.7,
            facts=900,
            probes=300,
            checkpoints=[1000],
            probes_per_checkpoint={1000: 300},
            seconds=0.9,
        ),
    ]
    text = render_world_summaries(summaries, 2.0, Path("/data"))
    lines = text.splitlines()
    assert len(lines) == 6
    assert len({len(line) for line in lines[:4]}) == 1  # header, rule and rows line up
    assert lines[2].split() == [
        "s-1",
        "short",
        "2",
        "60",
        "0.70",
        "0.10",
        "0.20",
        "400",
        "0.90",
        "50",
        "2",
    ]
    assert lines[3].split()[4:7] == ["0.90", "0.10", "0.00"]
    assert lines[-1] == (
        "2 worlds, 2060 sessions, 14400 turns, 350 probes in 2.00 s (1,030 sessions/s) → /data"
    )
