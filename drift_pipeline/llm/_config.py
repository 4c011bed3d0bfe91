"""Where the model is and how to call it: :class:`LLMConfig` and its :class:`Price`."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from ._errors import LLMError

BASE_URL_ENV = "DRIFT_LLM_BASE_URL"
MODEL_ENV = "DRIFT_LLM_MODEL"
API_KEY_ENV = "DRIFT_LLM_API_KEY"
# Optional knobs read by LLMConfig.from_env (each maps to the field of the same name).
_OPTIONAL_ENV: dict[str, str] = {
    "DRIFT_LLM_TIMEOUT_S": "timeout_s",
    "DRIFT_LLM_MAX_RETRIES": "max_retries",
    "DRIFT_LLM_CONCURRENCY": "concurrency",
    "DRIFT_LLM_TEMPERATURE": "temperature",
}
PRICE_INPUT_ENV = "DRIFT_LLM_PRICE_INPUT_PER_M"
PRICE_OUTPUT_ENV = "DRIFT_LLM_PRICE_OUTPUT_PER_M"


@dataclass(frozen=True)
class Price:
    """What a model costs, in USD per million tokens.

    Attributes:
        input_per_m: USD per 1M prompt tokens.
        output_per_m: USD per 1M completion tokens.
    """

    input_per_m: float
    output_per_m: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for one call with these token counts."""
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1e6


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible endpoint and how to call it.

    The API key is never held here: ``api_key_env`` names the environment variable that holds
    it, read at call time, so no repr, table, manifest, cache or log can contain it.

    Attributes:
        base_url: The endpoint, e.g. ``http://127.0.0.1:8000/v1``.
        model: The model name the endpoint serves.
        api_key_env: Name of the environment variable holding the key (unset: no key sent).
        timeout_s: Per-request timeout (connect and read).
        max_retries: Retries on 429, 5xx, timeouts and connection errors (0: one attempt).
        concurrency: Requests in flight at most, per client.
        temperature: Sampling temperature (0 by default: as reproducible as the endpoint allows).
        price: USD per 1M tokens, for cost figures; ``None`` leaves costs unknown.
        backoff_base_s: First retry waits about this long; each retry doubles it.
        backoff_max_s: Cap of one wait (a server's Retry-After is honoured up to this too).
    """

    base_url: str
    model: str
    api_key_env: str = API_KEY_ENV
    timeout_s: float = 60.0
    max_retries: int = 5
    concurrency: int = 4
    temperature: float = 0.0
    price: Price | None = None
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMError(f"LLM base_url {self.base_url!r} must start with http:// or https://")
        if not self.model:
            raise LLMError("LLM model name is empty")
        if self.max_retries < 0 or self.concurrency < 1 or self.timeout_s <= 0:
            raise LLMError(
                f"LLM config: need max_retries >= 0, concurrency >= 1, timeout_s > 0 "
                f"(got {self.max_retries}, {self.concurrency}, {self.timeout_s})"
            )

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """A config from ``DRIFT_LLM_*`` environment variables; ``overrides`` win.

        Required: ``DRIFT_LLM_BASE_URL`` and ``DRIFT_LLM_MODEL``. Optional:
        ``DRIFT_LLM_TIMEOUT_S``, ``DRIFT_LLM_MAX_RETRIES``, ``DRIFT_LLM_CONCURRENCY``,
        ``DRIFT_LLM_TEMPERATURE`` and the price pair ``DRIFT_LLM_PRICE_INPUT_PER_M`` /
        ``DRIFT_LLM_PRICE_OUTPUT_PER_M``. The key stays in ``DRIFT_LLM_API_KEY`` (or the variable
        named by an ``api_key_env`` override) and is read per call.

        Raises:
            LLMError: Naming the missing or malformed variable.
        """
        values: dict[str, Any] = {}
        for env, field_name in ((BASE_URL_ENV, "base_url"), (MODEL_ENV, "model")):
            if field_name in overrides:
                continue
            text = os.environ.get(env, "").strip()
            if not text:
                raise LLMError(f"{env} is not set: the LLM path needs an endpoint and a model")
            values[field_name] = text
        types = {f.name: f.type for f in fields(cls)}
        for env, field_name in _OPTIONAL_ENV.items():
            text = os.environ.get(env, "").strip()
            if text and field_name not in overrides:
                convert = int if types[field_name] in ("int", int) else float
                try:
                    values[field_name] = convert(text)
                except ValueError:
                    raise LLMError(f"{env}={text!r} is not a number") from None
        prices = [os.environ.get(env, "").strip() for env in (PRICE_INPUT_ENV, PRICE_OUTPUT_ENV)]
        if any(prices) and "price" not in overrides:
            try:
                values["price"] = Price(float(prices[0]), float(prices[1]))
            except ValueError:
                raise LLMError(
                    f"{PRICE_INPUT_ENV} and {PRICE_OUTPUT_ENV} must both be numbers "
                    f"(USD per 1M tokens), got {prices[0]!r} and {prices[1]!r}"
                ) from None
        values.update(overrides)
        return cls(**values)

    @property
    def host(self) -> str:
        """The endpoint's host[:port] (no credentials, no path)."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        return f"{host}:{parts.port}" if parts.port else host

    def pin(self) -> dict[str, str]:
        """What a manifest records about the model: never the key, never credentials in URLs."""
        return {
            "model": self.model,
            "base_url_host": self.host,
            "temperature": repr(self.temperature),
        }
