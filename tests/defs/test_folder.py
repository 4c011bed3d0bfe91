"""``defs/`` holds definitions only, each module its own, and the code location loads the folder."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)
from dagster.components.definitions import LazyDefinitions

import drift_pipeline.defs
from drift_pipeline.definitions import defs as load_defs
from drift_pipeline.orchestration.project import project_assets, project_jobs

from .conftest import REPO_SCENARIOS

DEFS_FOLDER = Path(drift_pipeline.defs.__file__).parent
DEFINITION_TYPES = (
    dg.AssetsDefinition,
    dg.AssetChecksDefinition,
    dg.JobDefinition,
    UnresolvedAssetJobDefinition,
    dg.ScheduleDefinition,
    dg.SensorDefinition,
    LazyDefinitions,
)


def _modules() -> list[Path]:
    return sorted(p for p in DEFS_FOLDER.rglob("*.py") if p.name != "__init__.py")


def _module_name(path: Path) -> str:
    relative = path.relative_to(DEFS_FOLDER.parent.parent).with_suffix("")
    return ".".join(relative.parts)


def _declared_names(path: Path) -> list[str]:
    """Names the module binds itself at top level (not the ones it imports)."""
    names: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(DEFS_FOLDER)))
def test_every_module_declares_definitions_and_no_public_helper(path: Path) -> None:
    module = importlib.import_module(_module_name(path))
    declared: dict[str, Any] = {name: getattr(module, name) for name in _declared_names(path)}
    definitions = [name for name, value in declared.items() if isinstance(value, DEFINITION_TYPES)]
    assert definitions, f"{path.name} declares no Dagster definition"
    helpers = [
        name
        for name, value in declared.items()
        if callable(value) and not name.startswith("_") and name not in definitions
    ]
    assert helpers == [], f"{path.name}: shared code belongs in drift_pipeline.orchestration"


def test_package_inits_declare_and_import_nothing() -> None:
    for init in DEFS_FOLDER.rglob("__init__.py"):
        body = ast.parse(init.read_text(encoding="utf-8")).body
        assert all(isinstance(n, ast.Expr) for n in body), f"{init}: only a docstring"


def test_the_code_location_and_the_launcher_load_the_same_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # no instance: nothing registered
    monkeypatch.setenv("DRIFT_SCENARIOS", str(REPO_SCENARIOS))
    location = load_defs()
    graph = location.resolve_asset_graph()
    launched = {key for assets_def in project_assets() for key in assets_def.keys}
    assert launched == set(graph.get_all_asset_keys())
    assert {job.name for job in project_jobs()} == {"world_job", "cell_job", "leaderboard_job"}
    assert sorted(location.resources or {}) == ["loop", "scenarios", "storage"]
