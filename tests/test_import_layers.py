"""The floors of the package are import-linter contracts: a copy of the package with one
upward import, or one new cycle, fails ``lint-imports`` naming the contract it breaks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import drift_pipeline

PACKAGE = Path(drift_pipeline.__file__).parent
CONFIG = PACKAGE.parent / "pyproject.toml"
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
FLOORS = "Each floor imports only from the floors below it"
ACYCLIC = "No import cycles between the modules of any package"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the package, first on the path of the ``lint-imports`` it runs under."""
    shutil.copytree(
        PACKAGE, tmp_path / "drift_pipeline", ignore=shutil.ignore_patterns("__pycache__")
    )
    return tmp_path


def lint(copy: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", str(CONFIG)],
        capture_output=True,
        text=True,
        cwd=copy,
        env=env,
        timeout=300,
    )


def append(module: Path, text: str) -> None:
    module.write_text(module.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_the_package_keeps_its_contracts(copy: Path) -> None:
    done = lint(copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{FLOORS} KEPT" in done.stdout and f"{ACYCLIC} KEPT" in done.stdout


def test_an_upward_import_breaks_the_floors(copy: Path) -> None:
    # The tokenizer (floor 0) reaching up to the evaluation floor.
    append(copy / "drift_pipeline" / "tokens.py", "\nimport drift_pipeline.evaluation  # upward\n")
    done = lint(copy)
    assert done.returncode == 1, done.stdout
    assert f"{FLOORS} BROKEN" in done.stdout
    assert "drift_pipeline.tokens is not allowed to import drift_pipeline.evaluation" in done.stdout


def test_a_function_local_import_that_closes_a_cycle_breaks_the_acyclic_contract(
    copy: Path,
) -> None:
    # The storage root calling back into the staged writer that is built on it.
    append(
        copy / "drift_pipeline" / "storage" / "_root.py",
        "\n\ndef _stage_here(root: str) -> object:\n"
        "    from ._layout import staged\n\n"
        "    return staged(root)\n",
    )
    done = lint(copy)
    assert done.returncode == 1, done.stdout
    assert f"{ACYCLIC} BROKEN" in done.stdout and f"{FLOORS} KEPT" in done.stdout
    assert "No cycles are allowed in drift_pipeline.storage" in done.stdout
