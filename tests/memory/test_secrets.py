"""Which values count as an arm's secrets, and how they leave a recorded line."""

from __future__ import annotations

from datetime import date

import pytest

from drift_pipeline.memory._secrets import arm_secrets, recorded_options, redact


def test_secret_named_options_nested_or_not_and_passed_variables_are_secrets(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("DRIFT_LLM_API_KEY", "sk-llm-key-123456")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "svc-token-abcdef")
    monkeypatch.setenv("UNRELATED", "not-passed-value")
    options = {
        "api_key": "sk-option-key-9876",
        "client": {"auth_token": "nested-token-5555"},
        "model": "gpt-like-model-name",  # not secret-named: an ordinary option
        "password": "short",  # too short to be a key: would redact ordinary words
    }
    secrets = arm_secrets(options, ["MY_SERVICE_TOKEN"])
    assert set(secrets) == {
        "sk-llm-key-123456",
        "svc-token-abcdef",
        "sk-option-key-9876",
        "nested-token-5555",
    }


def test_redaction_replaces_every_occurrence_longest_first():
    secrets = ("sk-long-key-0000-extra", "sk-long-key-0000")
    line = "failed: sk-long-key-0000-extra then sk-long-key-0000"
    assert redact(line, secrets) == "failed: [redacted] then [redacted]"
    assert redact(None, secrets) is None
    assert redact("nothing here", secrets) == "nothing here"


def test_recorded_options_mask_secret_named_values_and_url_credentials_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DRIFT_LLM_API_KEY", "sk-env-key-in-a-header")
    options = {
        "top_k": 8,
        "api_key": "sk-option-key-123",
        "client": {"auth_token": 42, "base_url": "https://ann:pw-9f8e7d@memory.example/v1"},
        "headers": ["Bearer sk-env-key-in-a-header", "x"],
        "since": date(2026, 1, 2),
        "ratio": 0.5,
        "off": None,
        # What tells two configurations apart stays readable, and so do values like these.
        "budget_tokens": 200,
        "keywords": ["tokenizer", "password-free"],
        "sort": "author",
    }
    assert recorded_options(options) == {
        "top_k": 8,
        "api_key": "[redacted]",
        "client": {"auth_token": "[redacted]", "base_url": "https://[redacted]@memory.example/v1"},
        "headers": ["Bearer [redacted]", "x"],
        "since": "2026-01-02",
        "ratio": 0.5,
        "off": None,
        "budget_tokens": 200,
        "keywords": ["tokenizer", "password-free"],
        "sort": "author",
    }
