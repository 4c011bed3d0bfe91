"""Reader and judge configuration: switches, environment, pinned models, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift_pipeline.evaluation import ContextEvaluator, LLMEvaluator, LLMJudge, RuleJudge
from drift_pipeline.llm import LLMError
from drift_pipeline.pipeline import EvaluationOptions, build_evaluator, llm_cache_location


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setenv("DRIFT_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DRIFT_LLM_MODEL", "base-model")
    monkeypatch.delenv("DRIFT_READER_MODEL", raising=False)
    monkeypatch.delenv("DRIFT_JUDGE_MODEL", raising=False)
    return monkeypatch


def test_the_default_is_the_context_judge_and_needs_no_model(tmp_path: Path) -> None:
    options = EvaluationOptions.from_env()
    assert not options.uses_llm and options.reader_llm is None
    assert isinstance(build_evaluator(options, tmp_path), ContextEvaluator)


def test_reader_and_judge_models_can_be_pinned_apart(
    endpoint: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    same = EvaluationOptions.from_env("llm", "llm")
    assert same.reader_llm == same.judge_llm and same.reader_llm is not None
    shared = build_evaluator(same, tmp_path)
    assert isinstance(shared, LLMEvaluator) and isinstance(shared.judge, LLMJudge)
    assert shared.judge.client is shared.reader.client  # one concurrency limit, one usage
    endpoint.setenv("DRIFT_JUDGE_MODEL", "judge-model")
    endpoint.setenv("DRIFT_READER_MODEL", "reader-model")
    apart = EvaluationOptions.from_env("llm", "llm")
    assert apart.reader_llm is not None and apart.reader_llm.model == "reader-model"
    assert apart.judge_llm is not None and apart.judge_llm.model == "judge-model"
    evaluator = build_evaluator(apart, tmp_path)
    assert isinstance(evaluator, LLMEvaluator)
    pins = evaluator.pins()
    assert pins["reader"]["model"] == "reader-model" and pins["judge"]["model"] == "judge-model"
    rule = build_evaluator(EvaluationOptions.from_env("llm", "rule"), tmp_path)
    assert isinstance(rule, LLMEvaluator) and isinstance(rule.judge, RuleJudge)
    assert llm_cache_location(tmp_path) == str(tmp_path / "llm_cache")


def test_missing_or_impossible_configuration_is_one_line(endpoint: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="--judge llm needs --reader llm"):
        EvaluationOptions.from_env("context", "llm")
    endpoint.delenv("DRIFT_LLM_MODEL")
    with pytest.raises(LLMError, match=r"^DRIFT_LLM_MODEL is not set"):
        EvaluationOptions.from_env("llm", "rule")
    with pytest.raises(ValueError, match="needs an LLM config"):
        EvaluationOptions("llm", "rule")
