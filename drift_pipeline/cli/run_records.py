"""What ``drift run`` keeps of its leaderboard: the stored worlds' audit and the signed record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drift_pipeline.pipeline import RunResult
    from drift_pipeline.sources import WorldSource
    from drift_pipeline.storage import RootLike


def stored_audits(
    out: RootLike, opened: Sequence[WorldSource], result: RunResult
) -> dict[str, str | None]:
    """Each world's answerability audit on its stored tables: world → failure (``None``: passed).

    Generated worlds re-run the generator's audit, imported ones their importer's (the same
    audit the Dagster path runs as an asset check).
    """
    from drift_pipeline.keys import WorldKey
    from drift_pipeline.pipeline import audit_stored_evidence, audit_stored_world
    from drift_pipeline.storage import StorageRoot

    root = StorageRoot.from_url(out)
    kinds = {source.id: source.kind for source in opened}
    audits: dict[str, str | None] = {}
    for cell in result.cells:
        world = WorldKey.of(cell.scenario, cell.horizon)
        name = f"{cell.scenario}/{cell.horizon}"
        if name in audits:
            continue
        generated = kinds.get(cell.scenario) == "scenario"
        audit = audit_stored_world if generated else audit_stored_evidence
        audits[name] = audit(root, world).failure
    return audits


def record_run(
    out: RootLike, summary: Mapping[str, Any], manifest: Mapping[str, Any]
) -> Path | None:
    """Write the run's signed leaderboard record under ``out`` (a local folder; else nothing).

    Returns:
        The record's path, or ``None`` for a root that is not a local folder.
    """
    from drift_pipeline.report import build_record, sign, write_record
    from drift_pipeline.storage import StorageRoot

    root = StorageRoot.from_url(out)
    if root.local_path is None:
        return None
    return write_record(root.local_path, sign(build_record(summary, manifest)))
