"""Registrations are lazy: importing the package (or the registry) loads no backend module and
no optional dependency; a backend's module loads when it is built or its class is asked for."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BACKEND_MODULES = [
    f"drift_pipeline.memory.backends.{name}"
    for name in (
        "amnesiac",
        "bm25",
        "fact_store",
        "full_context",
        "reference_compressor",
        "temporal_graph",
    )
]
# Libraries only some backends or phases need; none may load just because the package did.
OPTIONAL = ["bm25s", "openai", "httpx", "numpy", "pyarrow", "tiktoken", "dagster", "duckdb"]
EXAMPLE_PLUGIN = "drift_example_plugin"


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_drift_pipeline_imports_no_backend_and_no_optional_dependency():
    loaded = _modules_after("import drift_pipeline")
    assert not loaded & {*BACKEND_MODULES, *OPTIONAL, EXAMPLE_PLUGIN}
    assert not any(name.startswith("drift_pipeline.memory.backends.") for name in loaded)


def test_the_registry_answers_without_loading_any_backend():
    loaded = _modules_after(
        "from drift_pipeline.memory.backends import (backend_names, backend_needs, "
        "backend_registration, default_backend_names)\n"
        "assert len(default_backend_names()) == 7, default_backend_names()\n"
        "assert backend_names()\n"
        "assert backend_needs('reference_compressor', {'summariser': 'llm'}).llm is not None\n"
        "assert backend_registration('bm25').target_path.endswith(':BM25Backend')\n"
        "from drift_pipeline.memory import Arm, Gate\n"
        "assert str(Arm.parse('bm25@summary:64').gate) == 'summary:64'\n"
    )
    assert not loaded & {*BACKEND_MODULES, *OPTIONAL, EXAMPLE_PLUGIN}


@pytest.mark.parametrize(
    ("code", "module"),
    [
        ("from drift_pipeline.memory.backends import get_backend_factory as g; g('bm25')", "bm25"),
        (
            "from drift_pipeline.memory.backends import load_backend; load_backend('amnesiac')",
            "amnesiac",
        ),
        ("from drift_pipeline.memory.backends import FullContextBackend", "full_context"),
    ],
)
def test_a_backend_module_loads_when_asked_for_and_alone(code: str, module: str):
    loaded = _modules_after(code)
    wanted = f"drift_pipeline.memory.backends.{module}"
    assert wanted in loaded
    assert not loaded & (set(BACKEND_MODULES) - {wanted})


def test_class_names_stay_importable_from_the_package():
    from drift_pipeline.memory import backends

    for name in backends.__all__:
        assert getattr(backends, name) is not None
    with pytest.raises(AttributeError, match="NoSuchBackend"):
        backends.NoSuchBackend  # noqa: B018
