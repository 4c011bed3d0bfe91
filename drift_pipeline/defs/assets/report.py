"""Reports over every stored cell, read through DuckDB over the Parquet globs.

Unpartitioned: they depend on every partition of the cell assets, and read whatever cells the
storage root holds through :func:`drift_pipeline.pipeline.connect` (one DuckDB view per table),
not through an IO manager fanning partitions in.
"""

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dagster as dg

from drift_pipeline.orchestration.asset_names import (
    CELL_COST_CURVE,
    REFERENCE_MEMORY,
    WORLD_BASELINES,
)
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.report_metadata import (
    FAULT_RATE_CHECK,
    SANITY_CHECK,
    cost_curves_metadata,
    leaderboard_metadata,
    leaderboard_plots,
    trust_checks,
)
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import RUN_MANIFEST, stored_cells, world_audits
from drift_pipeline.report import (
    allowed_leaks,
    build_record,
    render_leaderboard,
    sign,
    standings,
    summary_json,
    write_record,
)
from drift_pipeline.storage import (
    CELL_METRICS,
    MEMORY_SNAPSHOTS,
    PROBE_ANSWERS,
    PROBES,
    RETRIEVALS,
    staged,
)

GROUP = "report"
REPORTS = "_reports"
"""Folder under the storage root holding the rendered reports."""


@dg.asset(
    deps=[
        CELL_METRICS.name,
        PROBE_ANSWERS.name,
        MEMORY_SNAPSHOTS.name,
        RETRIEVALS.name,
        PROBES.name,
        # The reference compressor's rows, read like any arm's.
        REFERENCE_MEMORY,
        WORLD_BASELINES,
    ],
    group_name=GROUP,
    kinds={"duckdb", "python"},
    automation_condition=REFRESH,
    check_specs=[
        dg.AssetCheckSpec(
            SANITY_CHECK,
            asset="leaderboard",
            description="Every sanity arm that ran scored DRIFT-C well below the reference "
            "arms (none ran: not passed, nothing shows the probes reward memory alone).",
        ),
        dg.AssetCheckSpec(
            FAULT_RATE_CHECK,
            asset="leaderboard",
            description="No arm faulted past the fault-rate limit (such an arm is unranked).",
        ),
    ],
)
def leaderboard(
    context: dg.AssetExecutionContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Every arm's headline metrics with 95% intervals, over all stored scenarios and horizons."""
    with storage.connect() as con:
        cells, skipped = stored_cells(con, storage.path())
    for line in skipped:
        context.log.warning(f"not on the leaderboard: {line}")
    manifest = _manifest(storage)
    # Backends the run allowed to leak across entities that the check saw leaking.
    leaks = allowed_leaks(manifest.get("conformance"))
    rows = standings(cells, None, leaks)
    table = render_leaderboard(rows, markdown=True) if rows else "_no evaluated cells yet_"
    _write(storage, "leaderboard.md", table + "\n")
    for cell in cells:
        if not cell.valid:
            context.log.warning(
                f"not ranked: {cell.arm.key} on {cell.scenario}/{cell.horizon}: "
                f"{cell.fault_rate:.1%} of its calls faulted or were skipped "
                f"(limit {cell.max_fault_rate:.1%})"
            )
    limit = max((cell.max_fault_rate for cell in cells), default=None)
    # The answerability audit of every world on the board, as the probes' check runs it: each
    # row's verification rests on it.
    audits = world_audits(
        storage.path(), [(c.scenario, c.horizon) for c in cells], _generated(scenarios)
    )
    summary = summary_json(cells, _scenarios_of(cells), limit, audits, leaks)
    record = _record(storage, summary, manifest)
    return dg.MaterializeResult(
        check_results=[
            dg.AssetCheckResult(
                check_name=name,
                passed=passed,
                description=description,
                severity=dg.AssetCheckSeverity.WARN,
            )
            for name, passed, description in trust_checks(summary)
        ],
        metadata=leaderboard_metadata(
            cells, summary, _plots(storage, record), record, len(skipped), audits
        ),
    )


def _generated(scenarios: ScenarioCatalog) -> Callable[[str], bool | None]:
    """Whether a scenario's worlds were generated; ``None`` for one the catalog cannot load."""

    def kind(scenario: str) -> bool | None:
        try:
            return scenarios.load(scenario).kind == "scenario"
        except LookupError:  # a stored world whose source is no longer in the catalog
            return None

    return kind


def _scenarios_of(cells: Sequence[Any]) -> list[str]:
    """The scenarios of the stored cells, in order of first appearance."""
    return list(dict.fromkeys(str(cell.scenario) for cell in cells))


def _record(
    storage: DriftStorage, summary: dict[str, Any], manifest: dict[str, Any]
) -> Path | None:
    """The refresh's signed leaderboard record (a local root only), never over an earlier one."""
    root = storage.path()
    if root.local_path is None or not summary["cells"]:
        return None
    return write_record(root.local_path, sign(build_record(summary, manifest)))


def _manifest(storage: DriftStorage) -> dict[str, Any]:
    """The run manifest of the stored run (empty when none was written there yet)."""
    root = storage.path()
    if root.local_path is None:
        return {}
    manifest_path = root.local_path / RUN_MANIFEST
    return dict(json.loads(manifest_path.read_text())) if manifest_path.exists() else {}


def _plots(storage: DriftStorage, record: Path | None) -> list[Any]:
    """The report's plots of the record (the asset carries some of them, as Dagster renders)."""
    root = storage.path()
    if record is None or root.local_path is None:
        return []
    with storage.connect() as con:
        return leaderboard_plots(root.local_path, con, record)


@dg.asset(
    deps=[CELL_COST_CURVE, WORLD_BASELINES],
    group_name=GROUP,
    kinds={"duckdb", "python"},
    automation_condition=REFRESH,
)
def cost_curves(storage: DriftStorage) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Token-cost curves per arm and horizon (mean over scenarios), as a table and a plot."""
    with storage.connect() as con:
        metadata, table, spec = cost_curves_metadata(con)
    _write(storage, "cost_curves.md", table + "\n")
    _write(storage, "cost_curves.vl.json", json.dumps(spec, indent=2) + "\n")
    return dg.MaterializeResult(metadata=metadata)


def _write(storage: DriftStorage, name: str, text: str) -> None:
    with staged(storage.path()) as writer:
        writer.put_text(f"{REPORTS}/{name}", text)
