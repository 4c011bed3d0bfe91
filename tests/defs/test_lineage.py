"""The gate in the asset graph: transcripts reach evaluation only through the memory loop."""

from __future__ import annotations

import dagster as dg

from drift_pipeline.orchestration.checks import gate_lineage_violations
from drift_pipeline.orchestration.project import project_assets

GATE = {"memory_snapshots", "retrievals", "reference_memory"}
"""The memory loops' outputs: the cells' tables and the reference compressor's run."""


def _parents() -> dict[str, set[str]]:
    parents: dict[str, set[str]] = {}
    for assets_def in project_assets():
        for key, deps in assets_def.asset_deps.items():
            parents.setdefault(key.to_user_string(), set()).update(d.to_user_string() for d in deps)
    return parents


def _downstream(parents: dict[str, set[str]], start: str) -> set[str]:
    found: set[str] = set()
    frontier = [start]
    while frontier:
        key = frontier.pop()
        for child, deps in parents.items():
            if key in deps and child not in found:
                found.add(child)
                frontier.append(child)
    return found


def test_project_graph_holds_the_gate() -> None:
    assert gate_lineage_violations(project_assets()) == []


def test_only_the_memory_loop_reads_transcripts() -> None:
    parents = _parents()
    readers = {name for name, deps in parents.items() if "transcripts" in deps}
    assert readers == GATE


def test_no_path_around_the_gate() -> None:
    parents = _parents()
    downstream = set().union(*(_downstream(parents, name) for name in GATE)) - GATE
    assert {"probe_answers", "cell_metrics", "cell_cost_curve", "world_baselines"} <= downstream
    # Remove the gate; nothing downstream of it may still be reachable from transcripts.
    around = {n: deps - GATE for n, deps in parents.items() if n not in GATE}
    assert not (_downstream(around, "transcripts") & downstream)
    # Evaluation reads the memory tables and probes, never transcripts.
    for name in ("probe_answers", "cell_metrics", "world_baselines"):
        assert parents[name] & GATE
        assert "transcripts" not in parents[name]
    # Every cell's metrics are measured against the world's reference compressor.
    assert {"reference_memory", "world_baselines"} <= parents["cell_metrics"]


def test_a_leak_is_reported_with_its_path() -> None:
    @dg.asset(deps=["transcripts"])
    def transcript_digest() -> None:
        """Reads transcripts (harmless on its own)."""

    @dg.asset(deps=["cell_metrics", "transcript_digest"])
    def peeking_metrics() -> None:
        """Downstream of the gate and of a transcript reader: a leak."""

    violations = gate_lineage_violations([*project_assets(), transcript_digest, peeking_metrics])
    assert violations == [
        "peeking_metrics reads transcripts around the gate: "
        "transcripts → transcript_digest → peeking_metrics"
    ]
