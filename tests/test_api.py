"""The top-level API (spec §8.2): ``from drift_pipeline import DriftHarness, MemoryBackend, …``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import drift_pipeline

PUBLIC = [
    "CountsOwnStorage",
    "DriftHarness",
    "DriftReport",
    "MemoryBackend",
    "Message",
    "TokenCounts",
]
# Loaded only when a name is first used: tables, models, backends, Dagster, serialisation.
HEAVY = (
    "bm25s",
    "cloudpickle",
    "dagster",
    "duckdb",
    "openai",
    "polars",
    "pyarrow",
    "s3fs",
    "drift_pipeline.memory",
    "drift_pipeline.pipeline",
)


def _modules_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_package_loads_none_of_the_api_yet():
    loaded = _modules_after("import drift_pipeline")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]


def test_the_protocol_names_do_not_load_the_pipeline():
    loaded = _modules_after("from drift_pipeline import MemoryBackend, Message, TokenCounts")
    assert "drift_pipeline.memory._protocol" in loaded
    assert not [m for m in loaded if m.startswith(("drift_pipeline.pipeline", "pyarrow"))]


def test_the_public_names_are_the_ones_their_floors_define():
    from drift_pipeline import DriftHarness, MemoryBackend, Message, TokenCounts
    from drift_pipeline.memory import MemoryBackend as Protocol
    from drift_pipeline.memory import Message as Turn
    from drift_pipeline.memory import TokenCounts as Counts
    from drift_pipeline.pipeline import DriftHarness as Harness

    assert (DriftHarness, MemoryBackend, Message, TokenCounts) == (Harness, Protocol, Turn, Counts)
    assert drift_pipeline.__all__ == PUBLIC
    assert set(PUBLIC) <= set(dir(drift_pipeline))
    with pytest.raises(AttributeError, match="has no attribute 'Harness'"):
        drift_pipeline.Harness  # noqa: B018
