"""The asset graph against its committed snapshot (``asset_graph.json`` beside this file).

Each asset's group, partitions definition, automation condition, checks, and every dependency
with the partition mapping Dagster resolves for it; and each job's assets. A change to any of
them fails here until the snapshot is regenerated on purpose and reviewed in the diff:

    DRIFT_UPDATE_SNAPSHOT=1 .venv/bin/pytest tests/defs/test_asset_graph.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dagster as dg

from drift_pipeline.orchestration.launch import build_definitions
from drift_pipeline.orchestration.project import project_jobs
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog

SNAPSHOT = Path(__file__).with_name("asset_graph.json")
UPDATE_ENV = "DRIFT_UPDATE_SNAPSHOT"


def _partitions(partitions_def: dg.PartitionsDefinition | None) -> str | None:
    if partitions_def is None:
        return None
    if isinstance(partitions_def, dg.DynamicPartitionsDefinition):
        return f"dynamic({partitions_def.name})"
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        dimensions = ", ".join(
            f"{d.name}: {_partitions(d.partitions_def)}" for d in partitions_def.partitions_defs
        )
        return f"multi({dimensions})"
    return type(partitions_def).__name__


def render() -> dict[str, Any]:
    """The graph as plain JSON data, keys sorted, so a diff shows what changed."""
    defs = build_definitions(DriftStorage(), ScenarioCatalog(), MemoryLoop())
    graph = defs.resolve_asset_graph()
    checks: dict[dg.AssetKey, list[dict[str, Any]]] = {}
    for assets_def in defs.assets or []:
        assert isinstance(assets_def, dg.AssetsDefinition)
        for spec in assets_def.check_specs:
            checks.setdefault(spec.asset_key, []).append(
                {"name": spec.name, "blocking": spec.blocking}
            )
    assets: dict[str, Any] = {}
    for key in sorted(graph.get_all_asset_keys()):
        node = graph.get(key)
        condition = node.automation_condition
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "partitions": _partitions(node.partitions_def),
            "automation_condition": condition.get_label() if condition else None,
            "checks": sorted(checks.get(key, []), key=lambda c: c["name"]),
            "deps": {
                parent.to_user_string(): repr(graph.get_partition_mapping(key, parent))
                for parent in sorted(node.parent_keys)
            },
        }
    jobs = {
        job.name: sorted(k.to_user_string() for k in job.selection.resolve(graph))
        for job in project_jobs()
    }
    return {"assets": assets, "jobs": jobs}


def test_asset_graph_matches_the_snapshot() -> None:
    rendered = json.dumps(render(), indent=2, sort_keys=True) + "\n"
    if os.environ.get(UPDATE_ENV):
        SNAPSHOT.write_text(rendered, encoding="utf-8")
    committed = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    assert rendered == committed, (
        f"the asset graph differs from {SNAPSHOT.name}; if the change is meant, regenerate it "
        f"with `{UPDATE_ENV}=1 .venv/bin/pytest tests/defs/test_asset_graph.py` and review the diff"
    )
