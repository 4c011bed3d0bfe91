"""Phase 02 as assets: one arm's memory loop over one world, behind the budget gate.

This is the only cell-level step that reads transcripts. What it leaves, ``memory_snapshots``
and ``retrievals``, holds only what the backend kept and returned; every later asset reads
those, never a transcript (the ``gate_lineage`` check proves it on the asset graph).
"""

import time
from collections.abc import Callable, Iterator

import dagster as dg

from drift_pipeline.memory import Arm, CellRun, run_cell

# Same backend options as `drift run` (the full-context budget defaults to the asker's window).
from drift_pipeline.pipeline import backend_options_for
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    MEMORY_SNAPSHOTS,
    PROBES,
    RETRIEVALS,
    TRANSCRIPTS,
    staged,
)

from .. import metadata as md
from .._stored import stage_cell_run
from ..checks import GATE_LINEAGE, ROWS_PER_SESSION, all_assets_lineage_violations
from ..partitions import CellKey, cell_to_world, cells_partitions
from ..resources import DriftStorage, MemoryLoop, ScenarioCatalog

GROUP = "memory"
_KINDS = {"python", "parquet"}
_WORLD_INPUTS = [
    dg.AssetDep(table.name, partition_mapping=cell_to_world)
    for table in (EVENT_SCHEDULES, TRANSCRIPTS, PROBES)
]


@dg.multi_asset(
    name="memory_tables",
    specs=[
        dg.AssetSpec(
            table.name,
            deps=_WORLD_INPUTS,
            group_name=GROUP,
            kinds=_KINDS,
            description=table.description,
            metadata={"drift/table": table.name},
        )
        for table in (MEMORY_SNAPSHOTS, RETRIEVALS)
    ],
    check_specs=[
        dg.AssetCheckSpec(
            ROWS_PER_SESSION,
            asset=MEMORY_SNAPSHOTS.name,
            description="One memory_snapshots row per session and replicate.",
        ),
        dg.AssetCheckSpec(
            GATE_LINEAGE,
            asset=MEMORY_SNAPSHOTS.name,
            blocking=True,
            description="No asset downstream of the gate has transcripts upstream except "
            "through memory_snapshots/retrievals.",
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
    world = cell.world
    arm = Arm.parse(cell.arm_key)
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
        _progress(context, cell, sessions * replicates),
    )
    with staged(root) as writer:
        stage_cell_run(writer, world, run)
    for fault in run.faults[:20]:
        context.log.warning(f"fault: {fault}")
    yield dg.MaterializeResult(
        asset_key=MEMORY_SNAPSHOTS.name,
        metadata=md.numeric(
            _snapshot_figures(run, replicates, sessions), md.MEMORY_SNAPSHOTS_KEYS
        ),
    )
    yield dg.MaterializeResult(
        asset_key=RETRIEVALS.name,
        metadata=md.numeric(_retrieval_figures(run, replicates), md.RETRIEVALS_KEYS),
    )
    expected = sessions * replicates
    yield dg.AssetCheckResult(
        check_name=ROWS_PER_SESSION,
        asset_key=MEMORY_SNAPSHOTS.name,
        passed=run.snapshots.num_rows == expected,
        description=f"{run.snapshots.num_rows} rows for {sessions} sessions × "
        f"{replicates} replicates",
        metadata={"rows": run.snapshots.num_rows, "expected": expected},
    )
    violations = all_assets_lineage_violations()
    yield dg.AssetCheckResult(
        check_name=GATE_LINEAGE,
        asset_key=MEMORY_SNAPSHOTS.name,
        passed=not violations,
        severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(violations) or "transcripts reach evaluation only through the gate",
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
    final: dict[int, int] = {}
    for replicate, storage_tokens in zip(rows["replicate"], rows["storage_tokens"], strict=True):
        final[replicate] = storage_tokens  # rows are in session order within a replicate
    write_ms = rows["write_ms"]
    return {
        md.ROWS: run.snapshots.num_rows,
        md.REPLICATES: replicates,
        md.SESSIONS: sessions,
        md.TRANSCRIPT_TOKENS: sum(rows["transcript_tokens"]),
        md.WRITE_TOKENS: sum(rows["write_tokens"]),
        md.STORAGE_TOKENS: sum(final.values()) / len(final) if final else None,
        md.WRITE_MS_P50: md.percentile(write_ms, 50),
        md.WRITE_MS_P95: md.percentile(write_ms, 95),
        md.WRITE_MS_P99: md.percentile(write_ms, 99),
        md.FAULTS: len(run.faults),
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
