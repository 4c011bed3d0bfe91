"""``drift run`` whose LLM reader fails: never a score or a rank, said where it shows, exit 1.

The reader is a real OpenAI-compatible server on loopback (``tests/llm_server.py``, answering as
``tests/scripted_llm.py``) that refuses every reader call, or the same few reader calls on every
run; the run is the installed command, as a user starts it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import scripted_llm
from click.testing import CliRunner
from finished_run import FinishedRun, drift_run
from llm_server import FakeOpenAIServer
from memory.plugins import _support

from drift_pipeline.cli import main
from drift_pipeline.evaluation import JUDGE_FAILED

ARM = "bm25@hard"
ENV = {
    "DRIFT_LLM_API_KEY": "sk-test-judge-failures",
    "DRIFT_LLM_MODEL": "scripted-model",
    "DRIFT_LLM_MAX_RETRIES": "0",
}


def _reader_call(body: dict[str, Any]) -> str | None:
    """The user message of a reader request (``None`` for any other request)."""
    messages = body.get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    if system != scripted_llm.READER:
        return None
    return next(str(m["content"]) for m in messages if m.get("role") == "user")


def _every_reader_call(body: dict[str, Any]) -> int:
    return 503 if _reader_call(body) is not None else 0


def _some_reader_calls(body: dict[str, Any]) -> int:
    # The same calls fail on every run: about one reader call in five, chosen by its text.
    user = _reader_call(body)
    return 503 if user is not None and hashlib.sha256(user.encode()).digest()[0] % 5 == 0 else 0


def _run(folder: Path, fails: Any) -> FinishedRun:
    scenario = _support.write_scenario(folder / "scenarios", "cli-judge-t")
    with FakeOpenAIServer(scripted_llm.respond, fails=fails) as server:
        env = {**ENV, "DRIFT_LLM_BASE_URL": server.base_url}
        return drift_run(scenario, folder, ["--backend", "bm25", "--reader", "llm"], env)


@pytest.fixture(scope="module")
def every_call(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    return _run(tmp_path_factory.mktemp("judge-every"), _every_reader_call)


@pytest.fixture(scope="module")
def some_calls(tmp_path_factory: pytest.TempPathFactory) -> FinishedRun:
    return _run(tmp_path_factory.mktemp("judge-some"), _some_reader_calls)


def _board_row(run: FinishedRun) -> str:
    return next(line for line in run.stdout.splitlines() if line.startswith(ARM))


def _failed(run: FinishedRun) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The arm's cell, its row and the cell's failures, once the run is seen to exit 1."""
    assert run.code == 1, run.stderr
    cell = next(c for c in run.summary["cells"] if c["arm"] == ARM)
    arm = next(a for a in run.summary["arms"] if a["arm"] == ARM)
    rows = run.query("select count(judge_error) as e from {probe_answers} where arm = ?", ARM)
    # The failures the cell counts are the answers stored with their failure.
    assert cell["judge_failures"]["arm"] == rows[0]["e"] > 0
    return cell, arm, cell["judge_failures"]


def test_a_reader_failing_every_call_gives_no_figure_no_rank_and_exit_1(
    every_call: FinishedRun,
) -> None:
    run = every_call
    cell, arm, failures = _failed(run)
    assert failures["arm"] == failures["answers"]
    for metric in ("drift_c", "drift_c_lift", "drift_e", "mvot", "tes"):
        assert cell["metrics"][metric]["value"] is None, metric
        assert cell["not_measured"][metric].startswith(JUDGE_FAILED), metric
        assert arm[metric]["value"] is None, metric
    assert arm["rank"] is None and arm["ranked"] is False
    assert arm["verification"]["checks"]["judged"] is False
    # The leaderboard row says why it has no rank and no DRIFT-C: no number stands in for one.
    row = _board_row(run)
    assert f"(not ranked: judge failed on {failures['arm']}/{failures['answers']} answers)" in row
    drift_c = re.split(r"\s{2,}", row)[1]
    assert drift_c == "not measured", row
    assert f"{ARM}: not ranked: {JUDGE_FAILED} {failures['arm']} of its" in run.stdout
    assert f"{ARM} on cli-judge-t/short: {JUDGE_FAILED}" in run.stderr
    assert "503" in run.stderr  # the first failure's own message
    # What it wrote before exiting: the tables, the signed record, the summary.
    assert "run record (signed):" in run.stdout and run.summary


def test_the_stored_board_and_the_report_say_why_it_is_not_ranked(every_call: FinishedRun) -> None:
    runner = CliRunner()
    board = runner.invoke(main, ["leaderboard", str(every_call.out)])
    assert board.exit_code == 0, board.output
    row = next(line for line in board.output.splitlines() if line.startswith(ARM))
    name, drift_c, mvot, selectivity, *_ = re.split(r"\s{2,}", row)
    assert "(not ranked: judge failed on" in name and drift_c == mvot == "—"
    assert re.fullmatch(r"\d\.\d{3} \[.*\]", selectivity)  # no judge behind it: measured
    page = every_call.out.parent / "report.html"
    report = runner.invoke(main, ["report", str(every_call.out), "--output", str(page)])
    assert report.exit_code == 0, report.output
    html = page.read_text(encoding="utf-8")
    assert "(not ranked: judge failed on" in html
    assert f'class="not-measured" title="{JUDGE_FAILED} every answer its mvot rests on"' in html


def test_a_reader_failing_some_calls_keeps_the_judged_figures_unranked_and_exits_1(
    some_calls: FinishedRun,
) -> None:
    run = some_calls
    cell, arm, failures = _failed(run)
    assert failures["arm"] < failures["answers"]
    # Its figures over the answers judged, each marked partly judged with its count.
    assert cell["metrics"]["drift_c"]["value"] is not None
    assert re.fullmatch(r"\d+ of its \d+ answers unjudged", failures["partly_judged"]["drift_c"])
    assert arm["rank"] is None and arm["ranked"] is False and arm["drift_c"]["value"] is not None
    assert arm["judge_failures"]["arm"] == failures["arm"]
    reasons = arm["verification"]["reasons"]
    assert any(r.startswith(f"{JUDGE_FAILED} {failures['arm']} of its") for r in reasons)
    assert "(not ranked: judge failed on" in _board_row(run)
    assert "partly judged: " in run.stdout and "drift_c" in run.stdout
    assert f"{ARM} on cli-judge-t/short: {JUDGE_FAILED} {failures['arm']} of its" in run.stderr
