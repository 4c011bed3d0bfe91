"""The project's definitions as the launcher sees them: loaded from ``drift_pipeline/defs/``.

The code location (``drift_pipeline.definitions``) loads the same folder; the launcher loads it
too, instead of importing lists of assets and jobs, so an asset or job declared there is run and
planned with the others without being named anywhere else.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import dagster as dg

# Not exported by name: what ``dg.define_asset_job`` returns, the only kind of job declared here.
from dagster._core.definitions.unresolved_asset_job_definition import (
    UnresolvedAssetJobDefinition,
)


@cache
def project_definitions() -> dg.Definitions:
    """Every definition declared under ``drift_pipeline/defs/`` (loaded once per process)."""
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)


def project_assets() -> list[dg.AssetsDefinition]:
    """Every asset definition of the project, each once."""
    found: dict[int, dg.AssetsDefinition] = {}
    for assets_def in project_definitions().assets or ():
        if isinstance(assets_def, dg.AssetsDefinition):
            found.setdefault(id(assets_def), assets_def)
    return list(found.values())


def project_jobs() -> list[UnresolvedAssetJobDefinition]:
    """Every asset job of the project, each once (a sensor's module names its job too)."""
    found: dict[str, UnresolvedAssetJobDefinition] = {}
    for job in project_definitions().jobs or ():
        if isinstance(job, UnresolvedAssetJobDefinition):
            found.setdefault(job.name, job)
    return list(found.values())
