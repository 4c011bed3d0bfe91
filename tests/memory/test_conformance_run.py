"""``drift run`` checks arms that are not built-ins first, and watches snapshots while it scores.

One run, as a user starts it (a subprocess, the backends on ``PYTHONPATH``): a built-in, a
backend that stores nothing, one whose snapshot hides what it retrieves, an honest one, and one
that pools every entity's memory, accepted with ``--allow-leak``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from finished_run import FinishedRun, drift_run

from drift_pipeline.memory import CheckScript, check_script
from drift_pipeline.pipeline import CHECK_ENV, check_seed
from drift_pipeline.sources import open_scenarios
from memory.plugins import _support

pytestmark = pytest.mark.slow  # a whole run through the sandbox

PLUGIN = "plugins.conformance"
FORGETFUL, UNDER, HONEST, LEAKY, MASKED = (
    f"{PLUGIN}:{name}"
    for name in ("Forgetful", "UnderReporting", "Honest", "Leaky", "MaskedValues")
)


SCENARIO = "conformance-run-t"


def run_check(finished: FinishedRun, backend: str) -> CheckScript:
    """What the run's check of ``backend`` stored and asked (drawn from the run's seed)."""
    sources = open_scenarios(str(finished.out.parent / "scenarios" / f"{SCENARIO}.yaml"))
    return check_script(check_seed(sources, backend))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    folder = tmp_path_factory.mktemp("conformance-run")
    scenario = _support.write_scenario(folder / "scenarios", SCENARIO)
    backends = ("bm25", FORGETFUL, UNDER, HONEST, LEAKY, MASKED)
    arms = [arg for backend in backends for arg in ("--backend", backend)]
    return drift_run(
        scenario,
        folder,
        [*arms, "--allow-leak", LEAKY],
        {"PYTHONPATH": str(_support.PLUGINS_ROOT), CHECK_ENV: "1"},
    )


def test_an_arm_that_fails_the_check_is_not_scored_and_the_run_says_why(
    finished: FinishedRun,
) -> None:
    assert finished.code == 5, finished.stderr
    refused = [line for line in finished.stderr.splitlines() if "conformance" in line]
    script = run_check(finished, FORGETFUL)
    a, asked = script.entities[0], script.fact_a.asked
    assert refused == [
        f"{FORGETFUL}@hard: not scored: failed the conformance check: it stores nothing: the "
        f"fact stored for {a} was not returned to {a} ({asked!r}) once queryable, nor 2s later"
    ]
    arms = {row["arm"] for row in finished.query("select distinct arm from {memory_snapshots}")}
    assert arms == {
        "reference_compressor@hard",
        "bm25@hard",
        f"{UNDER}@hard",
        f"{HONEST}@hard",
        f"{LEAKY}@hard",
        f"{MASKED}@hard",
    }
    manifest = json.loads((finished.out / "_manifests" / "run.json").read_text())
    conformance = manifest["conformance"]
    # Built-ins are not checked.
    assert set(conformance) == {FORGETFUL, UNDER, HONEST, LEAKY, MASKED}
    assert not conformance[FORGETFUL]["passed"] and conformance[HONEST]["passed"]
    # The refused arm is named, not only missing from the scored arms.
    assert f"{FORGETFUL}@hard" not in manifest["arms"]
    assert manifest["not_scored"] == {f"{FORGETFUL}@hard": refused[0].split(": not scored: ", 1)[1]}
    # What it runs against is recorded once, by the run's cells, not again by the check.
    assert manifest["services"][HONEST]["sdk_version"] == "0.1"
    assert FORGETFUL not in manifest["services"]
    assert f"{HONEST}: passed the conformance check" in finished.stdout
    assert f"  {HONEST} runs: sdk_version 0.1; service a log kept" in finished.stdout


def test_a_snapshot_that_hides_what_is_retrieved_marks_the_storage_under_reported(
    finished: FinishedRun,
) -> None:
    marked = finished.query(
        "select arm, count(unreported) as n from {retrievals} group by arm order by arm"
    )
    assert {row["arm"]: row["n"] > 0 for row in marked} == {
        "bm25@hard": False,
        f"{HONEST}@hard": False,
        "reference_compressor@hard": False,
        f"{UNDER}@hard": True,
        f"{LEAKY}@hard": False,
        # Its snapshot shows every line it hands over, each value masked: caught by the values.
        f"{MASKED}@hard": True,
    }
    rows = {row["arm"]: row for row in finished.summary["arms"]}
    reason = rows[f"{UNDER}@hard"]["not_measured"]["selectivity"]
    assert reason.startswith("storage under-reported: retrieve() returned text its snapshot()")
    assert "selectivity" not in rows[f"{HONEST}@hard"]["not_measured"]
    assert rows[f"{UNDER}@hard"]["valid"]  # ranked, without the figures it hid
    board = finished.stdout.splitlines()
    under = next(line for line in board if line.startswith(f"{UNDER}@hard "))
    honest = next(line for line in board if line.startswith(f"{HONEST}@hard "))
    assert "under-reported" in under and "under-reported" not in honest


def test_a_leak_the_user_accepted_is_scored_and_recorded(finished: FinishedRun) -> None:
    verdict = finished.manifest()["conformance"][LEAKY]
    assert verdict["passed"] and verdict["leak_allowed"] and verdict["reason"] is None
    # The run's check drew its agents and facts from the run's worlds, not the fixed ones.
    script = run_check(finished, LEAKY)
    (a, b), token = script.entities, script.fact_b.token
    assert script != check_script() and not a.startswith("conformance")
    assert verdict["leak"] == (
        f"it leaks across entities: a fact stored for {b} ({token}) was returned to {a}"
    )
    assert not finished.manifest()["conformance"][HONEST]["leak_allowed"]
    line = next(line for line in finished.stdout.splitlines() if line.startswith(f"{LEAKY}: "))
    assert line.endswith(
        f"returned to {a}, allowed: its row is marked and its Privacy not measured)"
    )
    assert finished.summary["conformance"][LEAKY]["leak_allowed"] is True
    # Its row says so in the leaderboard and the JSON summary: its Privacy is not measured.
    board = finished.stdout.splitlines()
    row = next(line for line in board if line.startswith(f"{LEAKY}@hard "))
    assert "[leaks across entities, allowed]" in row
    summary_row = next(r for r in finished.summary["arms"] if r["backend"] == LEAKY)
    assert summary_row["leak_allowed"] == verdict["leak"] and summary_row["privacy"] is None
    assert summary_row["not_measured"]["privacy"].startswith("leaks across entities, allowed")
    honest = next(r for r in finished.summary["arms"] if r["backend"] == HONEST)
    assert honest["leak_allowed"] is None


def test_an_allowed_leak_must_name_a_backend_the_run_checks(tmp_path: Path) -> None:
    scenario = _support.write_scenario(tmp_path / "scenarios", "conformance-allow-t")
    refused = drift_run(scenario, tmp_path, ["--backend", "bm25", "--allow-leak", "bm25"], {})
    assert refused.code == 2
    assert refused.stderr.strip().splitlines() == [
        "--allow-leak bm25: not a checked backend of this run (the package's own backends are "
        "never checked; checked here: none)"
    ]
    assert not refused.out.exists()


def test_a_run_whose_only_arm_fails_the_check_records_nothing(tmp_path: Path) -> None:
    scenario = _support.write_scenario(tmp_path / "scenarios", "conformance-only-t")
    refused = drift_run(
        scenario,
        tmp_path,
        ["--backend", FORGETFUL],
        {"PYTHONPATH": str(_support.PLUGINS_ROOT), CHECK_ENV: "1"},
    )
    assert refused.code == 5, refused.stderr
    assert refused.stdout == ""  # no empty leaderboard
    reason, last = refused.stderr.strip().splitlines()
    # The check's agents and facts are drawn from the run's seed: the line's shape is fixed.
    assert re.fullmatch(
        rf"{re.escape(FORGETFUL)}@hard: not scored: failed the conformance check: it stores "
        r"nothing: the fact stored for (\S+) was not returned to \1 \('[^']+\?'\) once "
        r"queryable, nor 2s later",
        reason,
    ), reason
    assert last == (
        "no arm was scored, so nothing was recorded (no leaderboard, record or --json summary)"
    )
    # No record to become the folder's latest, no manifest, no world: only the run's lock.
    assert [path.name for path in refused.out.iterdir()] == [".drift-run.lock"]
    assert refused.summary == {}
