"""``--drift-output``: a run's figures and per-probe answers, and the same file as a baseline.

The file holds the ``drift run --json`` summary (``summary``) and, per cell, its whole-cell
figures and the rows its metrics are computed from (answers, per-session costs and per-probe
retrieval costs; no retrieved text or memory snapshot), so a later run on the same world can be
compared with it probe by probe, with the same paired bootstrap as ``drift compare``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import pyarrow as pa

    from drift_pipeline.evaluation import ArmData
    from drift_pipeline.pipeline import CellResult
    from drift_pipeline.sources import WorldSource

__all__ = ["FORMAT", "RunRecord", "cell_record", "load_baseline", "write_record"]

FORMAT = "drift-pytest-run/1"
"""The file's format; a baseline of another format is refused."""
_TABLES = ("answers", "snapshots", "retrievals")
_DERIVED: dict[str, Any] = {}
"""Types of the columns :func:`~drift_pipeline.pipeline.load_arm` adds to the stored ones."""


@dataclass(frozen=True)
class RunRecord:
    """One cell as the output file keeps it.

    Attributes:
        scenario: The source's id.
        horizon: The world's horizon.
        arm: ``backend@gate``.
        content_hash: sha256 of the scenario (or dataset) the world was made from.
        reader: The reader behind the answers.
        judge: The judge behind the answers.
        metrics: Whole-cell figures: name → ``{"value", "ci_low", "ci_high"}``.
        questions: ``replicate/probe_id`` → the probe's type and question, for messages.
        units: The answers, snapshots and retrievals tables, column by column.
    """

    scenario: str
    horizon: str
    arm: str
    content_hash: str
    reader: str
    judge: str
    metrics: Mapping[str, Mapping[str, float | None]]
    questions: Mapping[str, str]
    units: Mapping[str, Mapping[str, list[Any]]]

    @property
    def key(self) -> tuple[str, str, str]:
        """``(scenario, horizon, arm)``."""
        return (self.scenario, self.horizon, self.arm)

    def arm_data(self) -> ArmData:
        """The stored rows as the metrics read them, typed as the tables declare them."""
        from drift_pipeline.evaluation import ArmData, measured_ttft
        from drift_pipeline.storage import MEMORY_SNAPSHOTS, PROBE_ANSWERS, RETRIEVALS

        answers, snapshots, retrievals = (
            _typed(self.units[name], table.schema)
            for name, table in zip(
                _TABLES, (PROBE_ANSWERS, MEMORY_SNAPSHOTS, RETRIEVALS), strict=True
            )
        )
        return ArmData(answers, snapshots, retrievals, measured_ttft(answers, retrievals))


def _typed(columns: Mapping[str, list[Any]], schema: pa.Schema) -> pa.Table:
    """A table from JSON columns, each cast to the type its table declares (when it has one)."""
    import pyarrow as pa

    _DERIVED.setdefault("content_kept", pa.bool_())
    arrays = {}
    for name, values in columns.items():
        index = schema.get_field_index(name)
        if index >= 0:
            arrays[name] = pa.array(values, type=schema.field(index).type)
        else:  # a column added when the tables are read (Selectivity's content_kept)
            arrays[name] = pa.array(values, type=_DERIVED.get(name))
    return pa.table(arrays)


def _plain(value: Any) -> Any:
    """NaN as null: the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _columns(table: pa.Table) -> dict[str, list[Any]]:
    return {name: [_plain(v) for v in table[name].to_pylist()] for name in table.column_names}


def cell_record(root: Path, source: WorldSource, cell: CellResult) -> RunRecord:
    """The record of one finished cell, read back from its tables under ``root``."""
    from drift_pipeline.keys import CellKey
    from drift_pipeline.pipeline import load_arm
    from drift_pipeline.report import cell_scoring
    from drift_pipeline.storage import PROBES, StorageRoot

    world = source.world(cell.horizon)  # type: ignore[arg-type]
    data = load_arm(root, CellKey(world, cell.arm.key))
    probes = StorageRoot.from_url(root).read_table(
        PROBES, world, ["replicate", "probe_id", "probe_type", "question"]
    )
    questions = {
        f"{r}/{p}": f"{t}: {q}"
        for r, p, t, q in zip(
            probes["replicate"].to_pylist(),
            probes["probe_id"].to_pylist(),
            probes["probe_type"].to_pylist(),
            probes["question"].to_pylist(),
            strict=True,
        )
    }
    metrics = {
        row.metric: {"value": row.value, "ci_low": row.ci_low, "ci_high": row.ci_high}
        for row in cell.metrics.rows
        if row.checkpoint is None
    }
    scoring = cell_scoring(cell)
    tables = (data.answers, data.snapshots, data.retrievals)
    return RunRecord(
        scenario=source.id,
        horizon=cell.horizon,
        arm=cell.arm.key,
        content_hash=source.content_hash,
        reader=scoring.reader,
        judge=scoring.judge,
        metrics={name: {k: _plain(v) for k, v in fig.items()} for name, fig in metrics.items()},
        questions=questions,
        units={name: _columns(t) for name, t in zip(_TABLES, tables, strict=True)},
    )


def write_record(
    path: Path,
    sources: Sequence[WorldSource],
    cells: Sequence[CellResult],
    records: Sequence[RunRecord],
) -> None:
    """Write the output file atomically: the summary, then every cell's record."""
    from importlib.metadata import version

    from drift_pipeline.report import summary_json

    document = {
        "format": FORMAT,
        "drift_pipeline": version("drift-pipeline"),
        "summary": summary_json(list(cells), [source.id for source in sources]),
        "cells": [asdict(record) for record in records],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=1, allow_nan=False)
            file.write("\n")
        os.chmod(staging, 0o644)  # mkstemp makes it private; it is a results file
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def load_baseline(path: Path) -> dict[tuple[str, str, str], RunRecord]:
    """The cells of a previous output file, by ``(scenario, horizon, arm)``.

    Raises:
        pytest.UsageError: Not such a file (one line saying what it is instead).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise pytest.UsageError(f"--drift-baseline {path}: cannot read it: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else None
        raise pytest.UsageError(
            f"--drift-baseline {path}: not a --drift-output file of format {FORMAT} "
            f"(format: {found!r})"
        )
    try:
        records = [RunRecord(**cell) for cell in document["cells"]]
    except (KeyError, TypeError) as error:
        raise pytest.UsageError(f"--drift-baseline {path}: a cell is malformed: {error}") from None
    return {record.key: record for record in records}
