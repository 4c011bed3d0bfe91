"""The Dagster code location: every definition declared under ``drift_pipeline/defs/``."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from drift_pipeline.orchestration.partitions import register_at_load
from drift_pipeline.orchestration.resources import default_catalog


@dg.definitions
def defs() -> dg.Definitions:
    """The definitions loaded from the ``defs`` folder; registers the repository's partitions."""
    register_at_load(default_catalog())
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
