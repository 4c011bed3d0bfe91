"""The reference compressor summarising through the LLM, inside its sandboxed worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scripted_llm
from llm_server import FakeOpenAIServer, word_count
from memory.plugins import _support

from drift_pipeline.memory import Arm
from drift_pipeline.memory.backends import ReferenceCompressor
from drift_pipeline.pipeline import RunOptions, run_benchmark
from drift_pipeline.sources import ScenarioSource

pytestmark = pytest.mark.slow  # two whole runs through the sandbox

KEY = "sk-test-DRIFT-SECRET-123"
OPTIONS = {"reference_compressor": {"summariser": "llm", "llm_max_retries": 1}}
PROBE = "memory.plugins.env_probe:EnvProbe"


def test_one_call_per_session_inside_the_sandbox_cached_across_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = ScenarioSource.load(
        _support.write_scenario(tmp_path / "scenarios", "compressor-llm-t")
    )
    out = tmp_path / "data"
    with FakeOpenAIServer(scripted_llm.respond, api_key=KEY) as server:
        monkeypatch.setenv("DRIFT_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("DRIFT_LLM_MODEL", "summary-model")
        # The worker only gets the key through the allowlisted variable: the server answers
        # 401 to a request without it, which would fail every store.
        monkeypatch.setenv("DRIFT_LLM_API_KEY", KEY)
        cache = out / "llm_cache" / "reference_compressor"
        options = RunOptions(
            arms=[Arm.parse("amnesiac@hard"), Arm.parse(f"{PROBE}@hard")],
            out=out,
            backend_options={**OPTIONS, PROBE: {"peek": [str(cache)]}},
        )
        first = run_benchmark([scenario], options)
        bodies = list(server.requests)
        second = run_benchmark([scenario], options)
        resent = len(server.requests) - len(bodies)
    assert first.faults == [] and second.faults == []
    assert len(bodies) == _support.SESSIONS * _support.REPLICATES
    assert all(b["max_tokens"] == 512 and b["model"] == "summary-model" for b in bodies)
    assert resent == 0  # the worker's cache came back to <root>/llm_cache/reference_compressor
    manifest = first.manifest
    assert manifest["backends"]["reference_compressor"].startswith(
        f"{ReferenceCompressor.version}+llm:summary-model@"
    )
    assert manifest["isolation"] == ["unprivileged-user+mount-namespace"]
    # Write cost is the calls' actual tokens (the server counts words, not tiktoken tokens).
    expected = sum(
        sum(word_count(m["content"]) for m in b["messages"])
        + word_count(scripted_llm.respond(b["messages"], b))
        for b in bodies
    )
    written = _support.query(
        out,
        "select sum(write_tokens) as w from {memory_snapshots} "
        "where arm = 'reference_compressor@hard'",
    )[0]["w"]
    assert written == expected
    files = [p for p in out.rglob("*") if p.is_file()]
    cached = [p for p in files if "reference_compressor" in p.parts and p.suffix == ".json"]
    assert len(cached) == len(bodies)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    assert "api_key" not in json.dumps(manifest)
    # Another arm's worker gets neither the key nor a view of the compressor's cache.
    reports = _support.query(
        out, "select context from {retrievals} where backend = ? and error is null", PROBE
    )
    assert reports
    for row in reports:
        report = json.loads(row["context"])
        assert "DRIFT_LLM_API_KEY" not in report["env"] and KEY not in row["context"]
        assert report["readable"] == {str(cache): False}
