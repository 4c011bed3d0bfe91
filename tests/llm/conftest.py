"""Fixtures of the LLM tests: a loopback OpenAI-compatible server (see ``tests/llm_server.py``)."""

from llm_server import fake_openai  # noqa: F401  (re-exported as a fixture)
