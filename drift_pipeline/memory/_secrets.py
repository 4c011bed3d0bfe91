"""Secrets an arm's worker holds, and their removal from every line the harness records.

A backend may be given a key (an ``api_key`` option, ``DRIFT_LLM_API_KEY`` in its worker's
environment) and may echo it in an exception (``auth failed for key sk-…``). Fault lines go
into tables, the run's output and error messages, so the harness replaces each secret it
handed out with ``[redacted]`` before recording a line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|credential|auth", re.IGNORECASE)
# Shorter values ("1", "true") would redact ordinary words; no real key is this short.
_MIN_SECRET = 8


def arm_secrets(options: Mapping[str, Any], env_names: Iterable[str]) -> tuple[str, ...]:
    """The values to keep out of records: secret-named options and the variables passed in.

    Args:
        options: The backend's constructor options (nested mappings are searched too).
        env_names: Harness variables passed into the worker (their values are secrets), plus
            the LLM key variable, whose value is always withheld from records.
    """
    from drift_pipeline.llm import API_KEY_ENV

    found: list[str] = []

    def walk(mapping: Mapping[str, Any]) -> None:
        for name, value in mapping.items():
            if isinstance(value, Mapping):
                walk(value)
            elif isinstance(value, str) and _SECRET_NAME.search(str(name)):
                found.append(value)

    walk(options)
    found += [os.environ.get(name, "") for name in (*env_names, API_KEY_ENV)]
    unique = {value for value in found if len(value) >= _MIN_SECRET}
    # Longest first: a key that contains another is replaced whole.
    return tuple(sorted(unique, key=len, reverse=True))


def redact(text: str | None, secrets: Iterable[str]) -> str | None:
    """``text`` with every secret replaced by ``[redacted]`` (``None`` stays ``None``)."""
    if not text:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


# ``scheme://user:password@host``: the credentials part of a URL given as an option.
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
# The words of an option name that make it a secret. Whole words, not substrings: a recorded
# option tells two configurations apart, and ``budget_tokens``, ``max_tokens`` or ``keywords``
# are exactly what differs between them.
_SECRET_WORDS = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "key",
        "passphrase",
        "passwd",
        "password",
        "pwd",
        "secret",
        "token",
    }
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


# A word run together with the one before it (``accesstoken``, ``secretkey``).
_SECRET_ENDINGS = ("apikey", "accesskey", "privatekey", "secretkey", "token", "secret", "password")


def secret_option(name: str) -> bool:
    """Whether an option named ``name`` holds a secret.

    A word of it names one (``api_key``, ``authToken``, ``x-api-key``, ``password``,
    ``accesstoken``); ``max_tokens``, ``keywords`` or ``top_k`` does not.
    """
    words = [word.lower() for word in _WORD.findall(name)]
    return any(word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) for word in words)


def recorded_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's constructor options as a manifest or record shows them, without secrets.

    The value of an option whose name is a secret's (:func:`secret_option`, at any depth)
    becomes ``[redacted]``, as do the credentials of a URL and such a value, or the LLM key the
    run hands workers, found inside another value. A value JSON cannot hold (a YAML date) is
    shown as its text.
    """
    from drift_pipeline.llm import API_KEY_ENV

    found: list[str] = [os.environ.get(API_KEY_ENV, "")]

    def collect(value: Any) -> None:
        if isinstance(value, Mapping):
            for name, inner in value.items():
                if secret_option(str(name)) and isinstance(inner, str):
                    found.append(inner)
                collect(inner)
        elif isinstance(value, (list, tuple)):
            for inner in value:
                collect(inner)

    collect(options)
    secrets = sorted({v for v in found if len(v) >= _MIN_SECRET}, key=len, reverse=True)

    def shown(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                str(name): REDACTED if secret_option(str(name)) else shown(inner)
                for name, inner in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [shown(inner) for inner in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        text = _URL_CREDENTIALS.sub(f"{REDACTED}@", str(value))
        return redact(text, secrets)

    out: dict[str, Any] = shown(options)
    return out
