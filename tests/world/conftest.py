"""Fixtures of the world-generation tests (defined once in ``tests/helpers.py``)."""

from helpers import worlds  # noqa: F401  (re-exported as a fixture)
