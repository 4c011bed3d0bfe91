"""Phase 01 as assets: the five world tables of one world, generated together, audited."""

from collections.abc import Iterator

import dagster as dg
import pyarrow as pa

from drift_pipeline.memory import transcript_tokens
from drift_pipeline.orchestration import metadata as md
from drift_pipeline.orchestration.automation import REFRESH
from drift_pipeline.orchestration.partitions import WorldKey, worlds_partitions
from drift_pipeline.orchestration.resources import DriftStorage, ScenarioCatalog
from drift_pipeline.pipeline import audit_stored_evidence, audit_stored_world
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    LATENT_PROFILES,
    PROBES,
    TRANSCRIPTS,
    WORLD_TABLES,
    staged,
)

GROUP = "world"
ANSWERABILITY = "answerability_audit"
"""Blocking check on ``probes``: every probe is answerable from its evidence sessions."""

_KINDS = {"python", "parquet"}


@dg.multi_asset(
    name="world_tables",
    specs=[
        dg.AssetSpec(
            table.name,
            group_name=GROUP,
            kinds=_KINDS,
            description=table.description,
            metadata={
                "drift/table": table.name,
                "drift/partitioned_by": ", ".join(table.partition_by),
            },
            automation_condition=REFRESH,
        )
        for table in WORLD_TABLES
    ],
    check_specs=[
        dg.AssetCheckSpec(
            ANSWERABILITY,
            asset=PROBES.name,
            blocking=True,
            description="Re-runs the answerability audit on the stored probes, schedule and "
            "transcripts: no cell is scored on an unfair probe.",
        )
    ],
    partitions_def=worlds_partitions,
)
def world_tables(
    context: dg.AssetExecutionContext, storage: DriftStorage, scenarios: ScenarioCatalog
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:  # type: ignore[type-arg]
    """Generate one world (scenario × horizon): profiles, schedule, transcripts, truth, probes."""
    world = WorldKey.parse(context.partition_key)
    source = scenarios.load(world.source_id)
    if world.horizon not in source.horizons:
        raise ValueError(
            f"world {world}: scenario {source.origin} declares no {world.horizon!r} horizon"
        )
    root = storage.path()
    with staged(root) as writer:
        summary = source.write(world.horizon, writer)
    context.log.info(
        f"{world}: {summary.sessions} sessions, {summary.turns} turns, "
        f"{summary.probes} probes in {summary.seconds:.1f} s"
    )
    tables = {t.name: root.read_table(t, world) for t in WORLD_TABLES}
    sessions = source.sessions(world.horizon)
    common = {md.REPLICATES: source.replicates, md.SESSIONS: sessions}
    own: dict[str, dict[str, float | int | None]] = {
        LATENT_PROFILES.name: {md.ENTITIES: len(source.entities)},
        EVENT_SCHEDULES.name: {
            md.EVENTS: tables[EVENT_SCHEDULES.name].num_rows
            - tables[EVENT_SCHEDULES.name].column("event_id").null_count
        },
        TRANSCRIPTS.name: {
            md.TURNS: tables[TRANSCRIPTS.name].num_rows,
            md.TRANSCRIPT_TOKENS: _tokens(tables[TRANSCRIPTS.name]),
        },
        GROUND_TRUTH.name: {md.FACTS: summary.facts},
        PROBES.name: {
            md.PROBES: tables[PROBES.name].num_rows,
            md.CHECKPOINTS: len(source.checkpoints(world.horizon)),
        },
    }
    for table in WORLD_TABLES:
        values = {md.ROWS: tables[table.name].num_rows, **common, **own[table.name]}
        yield dg.MaterializeResult(
            asset_key=table.name,
            metadata=md.numeric(values, md.WORLD_TABLE_KEYS[table.name]),
        )
    # Imported data carries its own evidence ids; generated worlds re-run the generator's audit.
    audit = (
        audit_stored_world(root, world)
        if source.kind == "scenario"
        else audit_stored_evidence(root, world)
    )
    yield dg.AssetCheckResult(
        check_name=ANSWERABILITY,
        asset_key=PROBES.name,
        passed=audit.passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=audit.failure,
        metadata={"probes_audited": audit.probes, "replicates": audit.replicates},
    )


def _tokens(transcripts: pa.Table) -> int:
    # The memory loop's own per-session counts, kept per world content in this process: the
    # runs that follow in process (the reference memory, every cell) reuse them instead of
    # counting the world again. Same total as counting every message.
    return sum(int(counts.sum()) for counts in transcript_tokens(transcripts).values())
