"""The one error the LLM layer raises."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A model call failed for good (retries exhausted, a 4xx other than 429, a bad config).

    The message is one line and never contains the API key.
    """
