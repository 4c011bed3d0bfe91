"""``drift generate --synthesizer llm`` against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import HABIT_LOOP, tree_bytes, write_scenario
from llm_server import TEST_API_KEY, FakeOpenAIServer
from scripted_synthesis import fail_rule, scripted

from drift_pipeline.cli import main
from drift_pipeline.world import world_manifest_path


def _generate_llm(scenario: Path, out: Path) -> tuple[int, str, str]:
    return _run("generate", str(scenario), "--out", str(out), "--synthesizer", "llm")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("DRIFT_LLM_BASE_URL", "DRIFT_LLM_MODEL", "DRIFT_SYNTHESIZER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("DRIFT_LLM_MAX_RETRIES", "1")
    return monkeypatch


def test_missing_endpoint_is_one_line(tmp_path: Path, llm_env: pytest.MonkeyPatch) -> None:
    scenario = write_scenario(tmp_path, HABIT_LOOP)
    out = tmp_path / "out"
    code, stdout, stderr = _generate_llm(scenario, out)
    assert code == 2 and stdout == ""
    assert stderr.strip().splitlines() == [
        "--synthesizer llm: DRIFT_LLM_BASE_URL is not set: the LLM path needs an endpoint "
        "and a model"
    ]
    llm_env.setenv("DRIFT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    code, _, stderr = _run("generate", str(scenario), "--out", str(out), "--synthesizer", "llm")
    assert code == 2 and "DRIFT_LLM_MODEL is not set" in stderr
    assert not out.exists()


def test_generate_with_llm_then_rerun_for_free(tmp_path: Path, llm_env: pytest.MonkeyPatch) -> None:
    scenario = write_scenario(tmp_path, HABIT_LOOP)
    out = tmp_path / "out"
    llm_env.setenv("DRIFT_LLM_MODEL", "fake-writer")
    with FakeOpenAIServer(scripted(fail_rule), api_key=TEST_API_KEY) as server:
        llm_env.setenv("DRIFT_LLM_BASE_URL", server.base_url)
        code, stdout, stderr = _run(
            "generate", str(scenario), "--out", str(out), "--synthesizer", "llm"
        )
        assert code == 0, stderr
        first = len(server.requests)
    assert first >= 2 * 50
    lines = stdout.strip().splitlines()
    assert lines[-2].startswith("1 worlds, 100 sessions")
    fallbacks = sum(
        pq.read_table(p).num_rows for p in (out / "synthesis_fallbacks").rglob("*.parquet")
    )
    assert 0 < fallbacks < 100
    assert lines[-1].startswith(f"synthesizer llm (fake-writer): {first} requests, 0 cache hits")
    assert lines[-1].endswith(
        f", {fallbacks} sessions fell back to the template (synthesis_fallbacks)"
    )
    manifest = json.loads((out / world_manifest_path("test-habit-loop-c", "short")).read_text())
    assert manifest["synthesizer"] == "llm@1"
    assert manifest["synthesizer_pin"]["model"] == "fake-writer"
    assert list((out / "synthesis_fallbacks").rglob("*.parquet"))
    before = tree_bytes(out)
    with FakeOpenAIServer(scripted(fail_rule), api_key=TEST_API_KEY) as again:
        llm_env.setenv("DRIFT_LLM_BASE_URL", again.base_url)
        code, stdout, stderr = _generate_llm(scenario, out)
        assert code == 0, stderr
        assert again.requests == []
    assert f"0 requests, {first} cache hits, 0 retries, 0+0 tokens" in stdout
    assert tree_bytes(out) == before
    assert all(TEST_API_KEY.encode() not in data for data in before.values())


def test_endpoint_down_fails_in_one_line_and_writes_nothing(
    tmp_path: Path, llm_env: pytest.MonkeyPatch
) -> None:
    scenario = write_scenario(tmp_path, HABIT_LOOP)
    out = tmp_path / "out"
    server = FakeOpenAIServer().start()
    base_url = server.base_url
    server.stop()
    llm_env.setenv("DRIFT_LLM_BASE_URL", base_url)
    llm_env.setenv("DRIFT_LLM_MODEL", "fake-writer")
    llm_env.setenv("DRIFT_LLM_MAX_RETRIES", "0")
    code, _, stderr = _generate_llm(scenario, out)
    assert code == 1
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("--synthesizer llm: LLM call to fake-writer")
    assert "connection error" in lines[0] and TEST_API_KEY not in lines[0]
    assert not list(out.rglob("*.parquet"))


TINY = """\
id: test-llm-tiny
paradigm: user_assistant
replicates: 1
horizon:
  short: { sessions: 16, session_gap_hours: 5 }
noise_ratio: 0.5
entities:
  - id: me
    type: human
    profile:
      event_distribution:
        job_change: 0.5
        habit_form: 0.5
  - id: helper
    type: assistant_agent
checkpoints:
  - { after_session: 16, probe_types: [recall, revision] }
"""


def test_run_writes_worlds_with_the_llm_and_reuses_them(
    tmp_path: Path, llm_env: pytest.MonkeyPatch
) -> None:
    scenario = write_scenario(tmp_path, TINY)
    out = tmp_path / "out"
    args = ("run", str(scenario), "--out", str(out), "--backend", "bm25", "--synthesizer", "llm")
    llm_env.setenv("DRIFT_LLM_MODEL", "fake-writer")
    with FakeOpenAIServer(scripted(), api_key=TEST_API_KEY) as server:
        llm_env.setenv("DRIFT_LLM_BASE_URL", server.base_url)
        code, stdout, stderr = _run(*args)
        assert code == 0, stderr
        assert len(server.requests) == 16
        assert "1 worlds generated" in stdout
        assert "synthesizer llm (fake-writer): 16 requests, 0 cache hits" in stdout
        code, stdout, stderr = _run(*args)
        assert code == 0, stderr
        assert len(server.requests) == 16  # the world is current: reused, nothing asked
        assert "0 worlds generated" in stdout and "synthesizer llm" not in stdout
    manifest_path = out / world_manifest_path("test-llm-tiny", "short")
    assert json.loads(manifest_path.read_text())["synthesizer"] == "llm@1"
    transcripts = list((out / "transcripts").rglob("*.parquet"))
    assert transcripts and b"Could you convert" in transcripts[0].read_bytes()
    # The template synthesizer does not reuse an LLM-written world.
    code, stdout, stderr = _run("run", str(scenario), "--out", str(out), "--backend", "bm25")
    assert code == 0, stderr
    assert "1 worlds generated" in stdout
    assert json.loads(manifest_path.read_text())["synthesizer"] == "template@4"
    files = [p for p in out.rglob("*") if p.is_file()]
    assert all(TEST_API_KEY.encode() not in p.read_bytes() for p in files)


def test_run_without_endpoint_is_one_line(tmp_path: Path, llm_env: pytest.MonkeyPatch) -> None:
    scenario = write_scenario(tmp_path, TINY)
    out = tmp_path / "out"
    code, _, stderr = _run(
        "run", str(scenario), "--out", str(out), "--backend", "bm25", "--synthesizer", "llm"
    )
    assert code == 2
    assert stderr.strip().splitlines() == [
        "--synthesizer llm: DRIFT_LLM_BASE_URL is not set: the LLM path needs an endpoint "
        "and a model"
    ]
    assert not out.exists()
