"""Asset-check logic: the gate's lineage and the memory run's row count.

The checks themselves are declared with the assets they guard (``check_specs``), so they run
in the same step as the materialization; the reasoning lives here, and the gate's lineage is
read off the asset graph of the definitions the check runs in.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

from .asset_names import REFERENCE_MEMORY

TRANSCRIPTS = dg.AssetKey("transcripts")
GATE_OUTPUTS: frozenset[dg.AssetKey] = frozenset(
    {dg.AssetKey("memory_snapshots"), dg.AssetKey("retrievals"), dg.AssetKey(REFERENCE_MEMORY)}
)
"""What the memory loops leave after the gate (the cells' and the reference compressor's): the
only way past it."""

GATE_LINEAGE = "gate_lineage"
"""Check on ``memory_snapshots``: transcripts reach nothing downstream except through the gate."""
ROWS_PER_SESSION = "rows_per_session"
"""Check on ``memory_snapshots`` and ``reference_memory``: one row per session and replicate."""


def _reachable(
    children: dict[dg.AssetKey, set[dg.AssetKey]],
    start: dg.AssetKey,
    blocked: frozenset[dg.AssetKey],
) -> dict[dg.AssetKey, dg.AssetKey]:
    """Keys reachable from ``start`` without entering ``blocked``, with their parent on the way."""
    parents: dict[dg.AssetKey, dg.AssetKey] = {}
    frontier = [start]
    while frontier:
        key = frontier.pop()
        for child in sorted(children.get(key, ())):
            if child in blocked or child in parents or child == start:
                continue
            parents[child] = key
            frontier.append(child)
    return parents


def gate_lineage_violations(assets: Iterable[dg.AssetsDefinition]) -> list[str]:
    """Assets downstream of the gate that transcripts reach without passing through it.

    Walks the asset graph from ``transcripts`` with the gate's outputs (:data:`GATE_OUTPUTS`)
    removed; anything reached that is also downstream of the gate is a leak (an evaluation
    asset reading transcripts, directly or through another asset).

    Returns:
        One line per leaking asset, naming the path; empty when the gate holds.
    """
    children: dict[dg.AssetKey, set[dg.AssetKey]] = {}
    for assets_def in assets:
        for key, parents in assets_def.asset_deps.items():
            for parent in parents:
                children.setdefault(parent, set()).add(key)
    guarded: set[dg.AssetKey] = set()
    for output in GATE_OUTPUTS:
        guarded |= set(_reachable(children, output, frozenset()))
    guarded -= GATE_OUTPUTS
    around = _reachable(children, TRANSCRIPTS, GATE_OUTPUTS)
    violations = []
    for key in sorted(guarded & set(around)):
        path = [key]
        while path[-1] != TRANSCRIPTS:
            path.append(around[path[-1]])
        chain = " → ".join(k.to_user_string() for k in reversed(path))
        violations.append(f"{key.to_user_string()} reads transcripts around the gate: {chain}")
    return violations
