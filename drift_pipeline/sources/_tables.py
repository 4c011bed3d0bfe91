"""Imported worlds: a source whose worlds are given as rows of the five world tables.

An importer reads its dataset and hands :class:`TableSource` the rows; the source fills what
follows from the rows (key columns, session ids, turn counts, turn times, empty lists and
nulls), checks them against the table schemas and audits the probes' evidence before anything
is written, so a bad dataset is one line naming the file, the table and the row.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from drift_pipeline.keys import WorldKey
from drift_pipeline.storage import (
    EVENT_SCHEDULES,
    GROUND_TRUTH,
    PROBES,
    TRANSCRIPTS,
    WORLD_TABLES,
    StagedWrite,
    TableDef,
)
from drift_pipeline.world import WorldSummary, session_id

from ._base import ProgressHook, SourceEntity, SourceError, WorldSource

if TYPE_CHECKING:
    from drift_pipeline.scenario import HorizonName
    from drift_pipeline.world.synthesis import Synthesizer

__all__ = ["Rows", "TableSource"]

Rows = Sequence[Mapping[str, Any]]
"""Rows of one table, column name → value (key columns and derivable columns may be left out)."""


class TableSource(WorldSource):
    """Worlds given as table rows, one set of five tables per horizon.

    Args:
        kind: The importer's name (its registry prefix), recorded in manifests.
        source_id: The source's id (the tables' ``scenario`` value).
        version: The dataset's or importer's version.
        content_hash: sha256 of the imported file(s).
        origin: Where the data was read from (for messages).
        audit: How the probes' answerability is established, in one sentence.
        worlds: Per horizon, the rows of each world table by table name. ``replicate``
            defaults to 0; ``session_id``, ``n_turns`` (schedule) and ``sim_time`` (turns)
            are derived when left out; nullable columns default to null, list columns to [].
        entities: The entities, when the dataset declares them (agents' context windows).
        not_applicable: Metrics the dataset cannot support (see
            :attr:`WorldSource.not_applicable`).

    Raises:
        SourceError: One line naming the origin, table, row and column at fault.
    """

    def __init__(
        self,
        *,
        kind: str,
        source_id: str,
        version: str,
        content_hash: str,
        origin: str,
        audit: str,
        worlds: Mapping[HorizonName, Mapping[str, Rows]],
        entities: Sequence[SourceEntity] = (),
        not_applicable: Iterable[str] = (),
    ) -> None:
        self.kind = kind
        self.audit = audit
        self.not_applicable = frozenset(not_applicable)
        self._id = source_id
        self._version = version
        self._hash = content_hash
        self._origin = origin
        self._entities = tuple(entities)
        if not worlds:
            raise SourceError(f"{origin}: no worlds to import")
        self._tables = {
            horizon: _conform_world(origin, source_id, horizon, rows)
            for horizon, rows in worlds.items()
        }
        counts = {h: _replicates(t) for h, t in self._tables.items()}
        if len(set(counts.values())) != 1:
            raise SourceError(f"{origin}: horizons have different numbers of replicates {counts}")
        self._replicates = next(iter(counts.values()))

    @property
    def id(self) -> str:
        """The source id."""
        return self._id

    @property
    def version(self) -> str:
        """The declared version."""
        return self._version

    @property
    def content_hash(self) -> str:
        """sha256 of the imported input."""
        return self._hash

    @property
    def origin(self) -> str:
        """Where the data came from."""
        return self._origin

    @property
    def horizons(self) -> tuple[HorizonName, ...]:
        """The horizons given, in short → long order."""
        order = ("short", "medium", "long")
        return tuple(sorted(self._tables, key=order.index))

    @property
    def replicates(self) -> int:
        """Replicates per horizon (distinct ``replicate`` values of the schedule)."""
        return self._replicates

    @property
    def entities(self) -> tuple[SourceEntity, ...]:
        """The entities given."""
        return self._entities

    def sessions(self, horizon: HorizonName) -> int:
        """Sessions per replicate at ``horizon``."""
        return int(self._table(horizon, EVENT_SCHEDULES).num_rows) // self._replicates

    def checkpoints(self, horizon: HorizonName) -> list[int]:
        """The distinct checkpoints of the horizon's probes."""
        return sorted(set(self._table(horizon, PROBES).column("checkpoint").to_pylist()))

    def tables(self, horizon: HorizonName) -> dict[str, pa.Table]:
        """The five world tables of ``horizon``, conformed to their schemas."""
        self._table(horizon, PROBES)  # a one-line error for an undeclared horizon
        return dict(self._tables[horizon])

    def write(
        self,
        horizon: HorizonName,
        writer: StagedWrite,
        synthesizer: Synthesizer | None = None,
        progress: ProgressHook | None = None,
        *,
        workers: int | None = None,
    ) -> WorldSummary:
        """Stage the horizon's five tables and its manifest.

        ``synthesizer`` and ``workers`` do not apply to imported data.
        """
        started = time.perf_counter()
        tables = self.tables(horizon)
        world = self.world(horizon)
        files = writer.put_many([(t, world, tables[t.name]) for t in WORLD_TABLES])
        self.stage_manifest(horizon, writer)
        if progress is not None:
            progress(tables[EVENT_SCHEDULES.name].num_rows)
        return _summary(self, horizon, tables, time.perf_counter() - started, files)

    def _table(self, horizon: HorizonName, table: TableDef) -> pa.Table:
        if horizon not in self._tables:
            raise ValueError(f"{self._origin}: no {horizon!r} horizon (has {self.horizons})")
        return self._tables[horizon][table.name]


def _replicates(tables: Mapping[str, pa.Table]) -> int:
    return len(set(tables[EVENT_SCHEDULES.name].column("replicate").to_pylist()))


def _conform_world(
    origin: str, source_id: str, horizon: HorizonName, given: Mapping[str, Rows]
) -> dict[str, pa.Table]:
    unknown = sorted(set(given) - {t.name for t in WORLD_TABLES})
    if unknown:
        raise SourceError(f"{origin}: {unknown[0]!r} is not a world table")
    rows = {t.name: [dict(row) for row in given.get(t.name, ())] for t in WORLD_TABLES}
    # Every world table starts with the world's key columns (and the replicate).
    keys = WorldKey(source_id, horizon).partition_values
    for table_rows in rows.values():
        for row in table_rows:
            row.update(keys)
            row.setdefault("replicate", 0)
    schedule = rows[EVENT_SCHEDULES.name]
    if not schedule:
        raise SourceError(f"{origin}: horizon {horizon} has no sessions")
    turns = Counter((t["replicate"], t.get("session_index")) for t in rows[TRANSCRIPTS.name])
    times = {(s["replicate"], s.get("session_index")): s.get("sim_time") for s in schedule}
    for session in schedule:
        index = session.get("session_index")
        if isinstance(index, int):
            session.setdefault("session_id", session_id(horizon, session["replicate"], index))
        session.setdefault("n_turns", turns[(session["replicate"], index)])
    for turn in rows[TRANSCRIPTS.name]:
        turn.setdefault("sim_time", times.get((turn["replicate"], turn.get("session_index"))))
    tables = {t.name: _conform(origin, t, rows[t.name]) for t in WORLD_TABLES}
    _audit_evidence(origin, horizon, tables)
    return tables


def _conform(origin: str, table: TableDef, rows: list[dict[str, Any]]) -> pa.Table:
    for number, row in enumerate(rows):
        for field in table.schema:
            value = row.get(field.name)
            if value is None:
                if pa.types.is_list(field.type):
                    row[field.name] = []
                elif not field.nullable:
                    raise SourceError(f"{origin}: {table.name} row {number} has no {field.name!r}")
            elif pa.types.is_timestamp(field.type) and isinstance(value, str):
                try:
                    row[field.name] = datetime.fromisoformat(value)
                except ValueError:
                    raise SourceError(
                        f"{origin}: {table.name} row {number}: {field.name} {value!r} is not "
                        "an ISO date-time"
                    ) from None
        extra = sorted(set(row) - set(table.schema.names))
        if extra:
            raise SourceError(f"{origin}: {table.name} row {number}: no column {extra[0]!r}")
    try:
        return pa.Table.from_pylist(rows, schema=table.schema)
    except (pa.ArrowException, TypeError, ValueError) as error:
        raise SourceError(
            f"{origin}: {table.name} does not fit its schema: {str(error).splitlines()[0]}"
        ) from None


def _audit_evidence(origin: str, horizon: str, tables: Mapping[str, pa.Table]) -> None:
    """Every probe names evidence sessions that exist and come before its checkpoint."""
    schedule = tables[EVENT_SCHEDULES.name]
    sessions = set(
        zip(
            schedule.column("replicate").to_pylist(),
            schedule.column("session_index").to_pylist(),
            strict=True,
        )
    )
    probes = tables[PROBES.name].select(
        ["replicate", "probe_id", "checkpoint", "evidence_sessions"]
    )
    for probe in probes.to_pylist():
        evidence = probe["evidence_sessions"]
        late = [s for s in evidence if s >= probe["checkpoint"]]
        absent = [s for s in evidence if (probe["replicate"], s) not in sessions]
        if not evidence or late or absent:
            why = (
                "names no evidence session"
                if not evidence
                else f"evidence session {(late or absent)[0]} "
                + ("is not before its checkpoint" if late else "is not in the schedule")
            )
            raise SourceError(f"{origin}: {horizon} probe {probe['probe_id']!r} {why}")


def _summary(
    source: WorldSource,
    horizon: HorizonName,
    tables: Mapping[str, pa.Table],
    seconds: float,
    files: list[Any],
) -> WorldSummary:
    schedule = tables[EVENT_SCHEDULES.name]
    contents = tables[TRANSCRIPTS.name].column("content")
    probes = tables[PROBES.name].column("checkpoint").to_pylist()
    return WorldSummary(
        scenario=source.id,
        horizon=horizon,
        replicates=source.replicates,
        sessions=schedule.num_rows,
        tiers=dict(Counter(schedule.column("tier").to_pylist())),
        turns=len(contents),
        distinct_turn_share=pc.count_distinct(contents).as_py() / max(1, len(contents)),
        facts=int(tables[GROUND_TRUTH.name].num_rows),
        probes=len(probes),
        checkpoints=source.checkpoints(horizon),
        probes_per_checkpoint=dict(sorted(Counter(probes).items())),
        seconds=seconds,
        files=files,
    )
