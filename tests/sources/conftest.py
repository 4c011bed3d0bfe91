"""Fixtures of the source tests: the example importer, registered for one test at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from drift_pipeline.sources import register_source, unregister_source

EXAMPLE_FILE = Path(__file__).parents[1] / "fixtures" / "sources" / "example.jsonl"
"""A few JSON lines: six sessions of a chat, three facts (one replaced), four questions."""
EXAMPLE_TARGET = "sources.example_importer:open_example"


@pytest.fixture
def example() -> Iterator[str]:
    """The example importer registered under the prefix ``example``; yields its source text."""
    register_source("example", EXAMPLE_TARGET)
    try:
        yield f"example:{EXAMPLE_FILE}"
    finally:
        unregister_source("example")
