"""Which reader and judge a run uses (``--reader context|llm``, ``--judge rule|llm``).

The reader and judge are configured here, by the harness, from the command line and the
environment; backend options never reach them, so no memory system can change what reads or
judges its output. The LLM endpoint comes from ``DRIFT_LLM_BASE_URL`` and ``DRIFT_LLM_MODEL``
(the key stays in ``DRIFT_LLM_API_KEY`` and is read per call); ``DRIFT_READER_MODEL`` and
``DRIFT_JUDGE_MODEL`` pin a different model for either role on the same endpoint (a judge is
best not the model whose answers it grades). Completions are cached under
``<data root>/llm_cache``, so a rerun sends no request and reproduces every figure, measured
TTFT included.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from drift_pipeline.evaluation import (
    DEFAULT_CONTEXT_CAP_TOKENS,
    ContextEvaluator,
    Evaluator,
    LLMEvaluator,
    LLMJudge,
    LLMReader,
    RuleJudge,
)
from drift_pipeline.llm import LLMClient, LLMConfig
from drift_pipeline.storage import RootLike, StorageRoot

__all__ = [
    "JUDGE_MODEL_ENV",
    "LLM_CACHE",
    "READER_MODEL_ENV",
    "EvaluationOptions",
    "build_evaluator",
    "close_evaluator",
    "llm_cache_location",
    "llm_usage",
]

READER_MODEL_ENV: Final = "DRIFT_READER_MODEL"
JUDGE_MODEL_ENV: Final = "DRIFT_JUDGE_MODEL"
LLM_CACHE: Final = "llm_cache"
"""Folder of the completion cache under the data root."""

ReaderName = Literal["context", "llm"]
JudgeName = Literal["rule", "llm"]


@dataclass(frozen=True)
class EvaluationOptions:
    """The reader and judge of a run.

    Attributes:
        reader: ``context`` (the context judge reads the retrieved text itself) or ``llm``.
        judge: ``rule`` (the context judge's rules) or ``llm`` (needs the LLM reader: the
            context reader gives no answer text for a model to judge).
        reader_llm: The reader's endpoint and model (``reader="llm"``).
        judge_llm: The judge's endpoint and model (``judge="llm"``).
        context_cap_tokens: Tokens of retrieved text the LLM reader sees at most.
    """

    reader: ReaderName = "context"
    judge: JudgeName = "rule"
    reader_llm: LLMConfig | None = None
    judge_llm: LLMConfig | None = None
    context_cap_tokens: int = DEFAULT_CONTEXT_CAP_TOKENS

    def __post_init__(self) -> None:
        if self.reader not in ("context", "llm"):
            raise ValueError(f"--reader {self.reader!r}: expected context or llm")
        if self.judge not in ("rule", "llm"):
            raise ValueError(f"--judge {self.judge!r}: expected rule or llm")
        if self.judge == "llm" and self.reader != "llm":
            raise ValueError(
                "--judge llm needs --reader llm (the context reader gives no answer to judge)"
            )
        if self.reader == "llm" and self.reader_llm is None:
            raise ValueError("--reader llm needs an LLM config for the reader")
        if self.judge == "llm" and self.judge_llm is None:
            raise ValueError("--judge llm needs an LLM config for the judge")
        if self.context_cap_tokens < 1:
            raise ValueError(f"reader context cap must be >= 1, got {self.context_cap_tokens}")

    @property
    def uses_llm(self) -> bool:
        """Whether any model is called."""
        return self.reader == "llm" or self.judge == "llm"

    @classmethod
    def from_env(
        cls,
        reader: ReaderName = "context",
        judge: JudgeName = "rule",
        context_cap_tokens: int = DEFAULT_CONTEXT_CAP_TOKENS,
    ) -> EvaluationOptions:
        """Options whose LLM configs come from the ``DRIFT_*`` environment variables.

        Raises:
            LLMError: One line naming the missing or malformed variable.
            ValueError: On an impossible reader × judge pair.
        """
        if judge == "llm" and reader != "llm":
            raise ValueError(
                "--judge llm needs --reader llm (the context reader gives no answer to judge)"
            )
        reader_llm = judge_llm = None
        if reader == "llm" or judge == "llm":
            base = LLMConfig.from_env()
            if reader == "llm":
                reader_llm = _with_model(base, READER_MODEL_ENV)
            if judge == "llm":
                judge_llm = _with_model(base, JUDGE_MODEL_ENV)
        return cls(reader, judge, reader_llm, judge_llm, context_cap_tokens)


def _with_model(config: LLMConfig, variable: str) -> LLMConfig:
    model = os.environ.get(variable, "").strip()
    return replace(config, model=model) if model else config


def llm_cache_location(root: RootLike) -> str:
    """``<root>/llm_cache``: a folder, or an ``s3://`` prefix for an S3 root."""
    location = StorageRoot.from_url(root).location(LLM_CACHE)
    return str(location)


def build_evaluator(options: EvaluationOptions, root: RootLike) -> Evaluator:
    """The evaluator of ``options``; LLM completions cached under ``root``'s ``llm_cache``."""
    if options.reader == "context":
        return ContextEvaluator()
    assert options.reader_llm is not None
    cache = llm_cache_location(root)
    reader_client = LLMClient(options.reader_llm, cache)
    reader = LLMReader(reader_client, options.context_cap_tokens)
    if options.judge == "rule":
        return LLMEvaluator(reader, RuleJudge())
    assert options.judge_llm is not None
    # One client when both roles use the same model: one concurrency limit, one usage count.
    judge_client = (
        reader_client
        if options.judge_llm == options.reader_llm
        else LLMClient(options.judge_llm, cache)
    )
    return LLMEvaluator(reader, LLMJudge(judge_client))


def llm_usage(evaluator: Evaluator) -> dict[str, Any]:
    """Requests, cache hits, tokens and cost of an evaluator's models (empty without one)."""
    if not isinstance(evaluator, LLMEvaluator):
        return {}
    clients = [evaluator.reader.client]
    if isinstance(evaluator.judge, LLMJudge) and evaluator.judge.client is not clients[0]:
        clients.append(evaluator.judge.client)
    usages = [client.usage for client in clients]
    totals: dict[str, Any] = {
        name: sum(getattr(usage, name) for usage in usages)
        for name in ("requests", "cache_hits", "retries", "failures")
    }
    totals["prompt_tokens"] = sum(u.prompt_tokens for u in usages)
    totals["completion_tokens"] = sum(u.completion_tokens for u in usages)
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    totals["cost_usd"] = sum(costs) if costs else None
    return totals


def close_evaluator(evaluator: Evaluator) -> None:
    """Close an evaluator's HTTP connections."""
    if isinstance(evaluator, LLMEvaluator):
        evaluator.reader.client.close()
        if isinstance(evaluator.judge, LLMJudge):
            evaluator.judge.client.close()
