"""The LLM layer: the only place that talks to a model.

An OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM, …) is described
by :class:`LLMConfig` (from ``DRIFT_LLM_BASE_URL``, ``DRIFT_LLM_MODEL`` and friends; the key stays
in ``DRIFT_LLM_API_KEY`` and is read per call). :class:`LLMClient` caches every completion by
content (so reruns send nothing), retries with backoff, caps concurrency, counts tokens and cost.
:class:`TokenMeter` is the harness's own OpenAI-compatible endpoint on loopback, through which
backends call their models so that what they spend is counted (:class:`MeterAccount` is one
worker's key, :class:`MeterBooking` the calls booked to one backend call).
"""

from ._cache import CompletionCache, cache_key
from ._client import Completion, LLMClient, LLMUsage
from ._config import API_KEY_ENV, BASE_URL_ENV, MODEL_ENV, LLMConfig, Price
from ._errors import LLMError
from ._meter import (
    METER_ENV,
    NO_UPSTREAM,
    MeterAccount,
    MeterBooking,
    MeteredCall,
    TokenMeter,
    Upstream,
)
from ._meter_counts import CallTokens

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "METER_ENV",
    "MODEL_ENV",
    "NO_UPSTREAM",
    "CallTokens",
    "Completion",
    "CompletionCache",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMUsage",
    "MeterAccount",
    "MeterBooking",
    "MeteredCall",
    "Price",
    "TokenMeter",
    "Upstream",
    "cache_key",
]
