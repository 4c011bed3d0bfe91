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
    from drift_pipeline.pipeline import world_audits
    from drift_pipeline.storage import StorageRoot

    kinds = {source.id: source.kind == "scenario" for source in opened}
    worlds = [(cell.scenario, cell.horizon) for cell in result.cells]
    return world_audits(StorageRoot.from_url(out), worlds, lambda scenario: kinds.get(scenario))


def record_run(
    out: RootLike, summary: Mapping[str, Any], manifest: Mapping[str, Any]
) -> Path | None:
    """Write the run's signed leaderboard record under ``out`` (a local folder; else nothing).

    Returns:
        The record's path, or ``None`` for a root that is not a local folder.

    Raises:
        CommandError: The record cannot be dated or signed (exit 2).
    """
    from drift_pipeline.report import RecordError, build_record, sign, write_record
    from drift_pipeline.storage import StorageRoot

    from .errors import CommandError

    root = StorageRoot.from_url(out)
    if root.local_path is None:
        return None
    try:
        return write_record(root.local_path, sign(build_record(summary, manifest)))
    except RecordError as error:  # a bad DRIFT_RECORD_TIME or signing key
        raise CommandError(f"{error} (the run's tables are written; no record)") from error


def record_in_dagster(
    out: RootLike,
    result: RunResult,
    summary: Mapping[str, Any],
    audits: Mapping[str, str | None],
    record: Path | None,
) -> bool:
    """Report a direct run's materialisations to the Dagster instance, where there is one.

    A local root only (the Dagster definitions read the same folder). A failure to record is
    one line on stderr naming the asset the instance refused and why; the run's tables and
    record are written either way.

    Returns:
        ``False`` when recording failed (``drift run`` exits with its own status), else ``True``
        (recorded, turned off, or no instance to record into).
    """
    import click

    from drift_pipeline.orchestration.record_child import RecordingFailed, record_in_child
    from drift_pipeline.storage import StorageRoot

    root = StorageRoot.from_url(out)
    if root.local_path is None:
        return True
    try:
        # In a child process: this one holds the run's data, and Dagster would add to it.
        count = record_in_child(root.local_path, result.cells, summary, audits, record)
    except RecordingFailed as error:
        click.echo(f"not recorded in the Dagster instance: {error}", err=True)
        return False
    if count is not None:
        click.echo(f"recorded in the Dagster instance: {count} asset events")
    return True
