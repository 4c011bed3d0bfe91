"""Phase 02 as assets: memory loops over one world, behind the budget gate.

``memory_tables`` runs one arm on one world (a cell); ``reference_memory`` runs the reference
compressor once per world, a world baseline that every cell's MVOT and TES are measured
against. Its rows go into the same two tables under ``arm=reference_compressor@hard``, so the
leaderboard reads it like any arm.

These are the only steps that read transcripts. What they leave, ``memory_snapshots`` and
``retrievals``, holds only what the backend kept and returned; every later asset reads those,
never a transcript (the ``gate_lineage`` check proves it on the asset graph).
"""

import time
from collections.abc import Callable, Iterator

import dagster as dg

from drift_pipeline.memory import Arm, CellRun, run_cell
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.asset_names import REFERENCE_MEMORY
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.checks import (
    GATE_LINEAGE,
    ROWS_PER_SESSION,
    gate_lineage_violations,
)
from drift_pipeline.orchestration.partitions import (
    CellKey,
    WorldKey,
    cell_to_world,
    cells_partitions,
    worlds_partitions,
)
from drift_pipeline.orchestration.project import project_assets
from drift_pipeline.orchestration.resources import DriftStorage, MemoryLoop, ScenarioCatalog

# Same backend options as `drift run` (the full-context budget defaults to the asker's window).
from drift_pipeline.pipeline import REFERENCE_ARM, backend_options_for, stage_cell_run
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    MEMORY_SNAPSHOTS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    staged,
)

GROUP = "memory"
_KINDS = {"python", "parquet"}
_WORLD_TABLES = (EVENT_SCHEDULES, TRANSCRIPTS, PROBES)
_ROWS_CHECK = "One memory_snapshots row per session and replicate."


@dg.multi_asset(
    name="memory_tables",
    specs=[
        dg.AssetSpec(
            table.name,
            deps=[dg.AssetDep(t.name, partition_mapping=cell_to_world) for t in _WORLD_TABLES],
            group_name=GROUP,
            kinds=_KINDS,
            description=table.description,
            metadata={"drift/table": table.name},
            automation_condition=REFRESH,
        )
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS)
    ],
    check_specs=[
        dg.AssetCheckSpec(ROWS_PER_SESSION, asset=MEMORY_SNAPSHOTS.name, description=_ROWS_CHECK),
        dg.AssetCheckSpec(
            GATE_LINEAGE,
            asset=MEMORY_SNAPSHOTS.name,
            blocking=True,
            description="No asset downstream of the gate has transcripts upstream except "
            "through memory_snapshots/retrievals/reference_memory.",
        ),
    ],
    partitions_def=cells_partitions,
)
def memory_tables(
    context: dg.AssetExecutionContext,
    storage: DriftStorage,
    scenarios: ScenarioCatalog,
    loop: MemoryLoop,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:  # type: ignore[type-arg]
    """Run one arm over every replicate of one world; write its snapshots and retrievals."""
    cell = CellKey.parse(context.partition_key)
    if cell.arm_key == REFERENCE_ARM.key:
        raise ValueError(
            f"cell {cell}: the reference compressor runs once per world as "
            f"{REFERENCE_MEMORY} (a world baseline), not as a cell"
        )
    arm = Arm.parse(cell.arm_key)
    run, sessions, replicates = _run(context, storage, scenarios, loop, cell.world, arm)
    yield dg.MaterializeResult(
        asset_key=MEMORY_SNAPSHOTS.name,
        metadata=md.numeric(_snapshot_figures(run, replicates, sessions), md.MEMORY_SNAPSHOTS_KEYS),
    )
    yield dg.MaterializeResult(
        asset_key=RETRIEVALS.name,
        metadata=md.numeric(_retrieval_figures(run, replicates), md.RETRIEVALS_KEYS),
    )
    yield _rows_check(MEMORY_SNAPSHOTS.name, run, sessions, replicates)
    # Every asset the defs folder declares (a run in process has no repository to ask).
    violations = gate_lineage_violations(project_assets())
    yield dg.AssetCheckResult(
        check_name=GATE_LINEAGE,
        asset_key=MEMORY_SNAPSHOTS.name,
        passed=not violations,
        severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(violations) or "transcripts reach evaluation only through the gate",
    )


@dg.asset(
    name=REFERENCE_MEMORY,
    partitions_def=worlds_partitions,
    deps=[dg.AssetDep(t.name) for t in _WORLD_TABLES],
    group_name=GROUP,
    kinds=_KINDS,
    description="The reference compressor's memory run on one world (its rows of "
    "memory_snapshots and retrievals), the baseline of every cell's MVOT and TES.",
    metadata={"drift/arm": REFERENCE_ARM.key, "drift/tables": "memory_snapshots, retrievals"},
    check_specs=[
        dg.AssetCheckSpec(ROWS_PER_SESSION, asset=REFERENCE_MEMORY, description=_ROWS_CHECK)
    ],
    automation_condition=REFRESH,
)
def reference_memory(
    context: dg.AssetExecutionContext,
    storage: DriftStorage,
    scenarios: ScenarioCatalog,
    loop: MemoryLoop,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:  # type: ignore[type-arg]
    """Run the reference compressor over every replicate of one world."""
    world = WorldKey.parse(context.partition_key)
    run, sessions, replicates = _run(context, storage, scenarios, loop, world, REFERENCE_ARM)
    figures = {
        **_retrieval_figures(run, replicates),
        **_snapshot_figures(run, replicates, sessions),
    }
    yield dg.MaterializeResult(metadata=md.numeric(figures, md.REFERENCE_MEMORY_KEYS))
    yield _rows_check(REFERENCE_MEMORY, run, sessions, replicates)


def _run(
    context: dg.AssetExecutionContext,
    storage: DriftStorage,
    scenarios: ScenarioCatalog,
    loop: MemoryLoop,
    world: WorldKey,
    arm: Arm,
) -> tuple[CellRun, int, int]:
    """Run ``arm`` on ``world`` and stage its tables; returns the run, sessions, replicates."""
    source = scenarios.load(world.source_id)
    root = storage.path()
    sessions = source.sessions(world.horizon)
    replicates = source.replicates
    run = run_cell(
        root,
        source.id,
        world.horizon,
        replicates,
        arm,
        backend_options_for(arm, source, loop.backend_options),
        loop.config(root),
        _progress(context, CellKey(world, arm.key), sessions * replicates),
    )
    with staged(root) as writer:
        stage_cell_run(writer, world, run)
    for fault in run.faults[:20]:
        context.log.warning(f"fault: {fault}")
    return run, sessions, replicates


def _rows_check(asset: str, run: CellRun, sessions: int, replicates: int) -> dg.AssetCheckResult:
    expected = sessions * replicates
    return dg.AssetCheckResult(
        check_name=ROWS_PER_SESSION,
        asset_key=asset,
        passed=run.snapshots.num_rows == expected,
        description=f"{run.snapshots.num_rows} rows for {sessions} sessions × "
        f"{replicates} replicates",
        metadata={"rows": run.snapshots.num_rows, "expected": expected},
    )


PROGRESS_EVERY_S = 5.0
"""Seconds between a cell's progress lines in the run's log (the last line always comes)."""


def _progress(
    context: dg.AssetExecutionContext, cell: CellKey, total: int
) -> Callable[[int], None]:
    # Paced by time, not by a fraction of the sessions: every log line is an event the
    # instance stores, so a short cell reports only its end and a long one reports regularly.
    done = [0]
    last = [time.monotonic()]

    def hook(n: int) -> None:
        done[0] += n
        now = time.monotonic()
        if done[0] == total or now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            context.log.info(f"{cell}: {done[0]}/{total} sessions stored")

    return hook


def _snapshot_figures(
    run: CellRun, replicates: int, sessions: int
) -> dict[str, float | int | None]:
    # Only the figure columns: materialising the snapshot texts would copy them per row.
    rows = run.snapshots.select(
        ["replicate", "storage_tokens", "write_ms", "transcript_tokens", "write_tokens"]
    ).to_pydict()
    final: dict[int, int | None] = {}
    for replicate, storage_tokens in zip(rows["replicate"], rows["storage_tokens"], strict=True):
        final[replicate] = storage_tokens  # rows are in session order within a replicate
    write_ms = rows["write_ms"]
    known = [tokens for tokens in final.values() if tokens is not None]
    return {
        md.ROWS: run.snapshots.num_rows,
        md.REPLICATES: replicates,
        md.SESSIONS: sessions,
        md.TRANSCRIPT_TOKENS: sum(rows["transcript_tokens"]),
        md.WRITE_TOKENS: sum(rows["write_tokens"]),
        # None when the backend has no snapshot(): its storage is not measured.
        md.STORAGE_TOKENS: sum(known) / len(known) if final and len(known) == len(final) else None,
        md.WRITE_MS_P50: md.percentile(write_ms, 50),
        md.WRITE_MS_P95: md.percentile(write_ms, 95),
        md.WRITE_MS_P99: md.percentile(write_ms, 99),
        md.FAULTS: len(run.faults),
        md.VALID: run.valid,
        md.FAULT_RATE: run.fault_rate,
    }


def _retrieval_figures(run: CellRun, replicates: int) -> dict[str, float | int | None]:
    # Never the context column: its dictionary would be decoded into one string per row.
    rows = run.retrievals.select(["read_ms", "read_tokens", "llm_read_tokens", "error"]).to_pydict()
    read_ms = rows["read_ms"]
    n = run.retrievals.num_rows
    return {
        md.ROWS: n,
        md.REPLICATES: replicates,
        md.READ_TOKENS: sum(rows["read_tokens"]) / n if n else None,
        md.LLM_READ_TOKENS: sum(rows["llm_read_tokens"]),
        md.READ_MS_P50: md.percentile(read_ms, 50),
        md.READ_MS_P95: md.percentile(read_ms, 95),
        md.READ_MS_P99: md.percentile(read_ms, 99),
        md.FAULTS: sum(1 for e in rows["error"] if e),
    }
