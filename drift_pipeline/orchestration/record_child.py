"""A direct run's Dagster recording, made in a short-lived child process.

Recording imports Dagster and its storage stack, opens the run's tables in DuckDB and renders
the leaderboard's plots: about 200 MB that a run which has just held a long world's
transcripts, contexts and readings would otherwise add on top of what it holds. The child
starts fresh, takes only what the recording reads (the run's folder, its evaluated cells, the
leaderboard summary, the audits and the record's path), reports the events and exits, so the
run's own process never imports Dagster and its peak is that of the run alone.

The child is ``python -m drift_pipeline.orchestration.direct_record REQUEST RESULT``:
``REQUEST`` is a pickle this module wrote, ``RESULT`` the JSON file the child answers in. This
module imports neither Dagster nor the recording.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from drift_pipeline.pipeline import CellResult

__all__ = ["RECORD_ENV", "RecordingFailed", "instance_home", "record_in_child"]

RECORD_ENV: Final = "DRIFT_DAGSTER_RECORD"
"""``0`` turns the recording of direct runs off."""
CHILD: Final = __name__.rpartition(".")[0] + ".direct_record"
"""The module the child runs (its ``__main__``)."""


class RecordingFailed(Exception):
    """The recording did not complete: one line naming what was refused (or failed) and why."""


def instance_home() -> Path | None:
    """The ``DAGSTER_HOME`` direct runs record into, or ``None`` (turned off, or none here).

    ``DAGSTER_HOME`` when it is set, else ``.dagster_home`` in the working folder when it holds
    a ``dagster.yaml`` (the project root, as the README sets it up). Decided without importing
    Dagster, so a run with nothing to record into never pays for it.
    """
    if os.environ.get(RECORD_ENV, "1") == "0":
        return None
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path.cwd() / ".dagster_home"
    return home if (home / "dagster.yaml").exists() else None


def record_in_child(
    folder: Path,
    cells: Sequence[CellResult],
    summary: Mapping[str, Any],
    audits: Mapping[str, str | None],
    record: Path | None,
) -> int | None:
    """Record a direct run in the Dagster instance from a fresh child process.

    The child inherits the environment and working folder, so it finds the instance
    :func:`instance_home` found. Its output and errors reach the same terminal.

    Returns:
        The number of events recorded, or ``None`` when there is no instance to record into.

    Raises:
        RecordingFailed: The instance refused an event, could not be opened, or the child
            failed (the message is one line).
    """
    if instance_home() is None:
        return None
    with tempfile.TemporaryDirectory(prefix="drift-record-") as scratch:
        request = Path(scratch) / "request.pickle"
        answer = Path(scratch) / "result.json"
        try:
            with request.open("wb") as handle:
                pickle.dump(
                    (folder, list(cells), dict(summary), dict(audits), record),
                    handle,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
        except Exception as error:  # a cell holding something that cannot be sent
            cause = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise RecordingFailed(
                f"the run's cells cannot be handed to the recording process: {cause}"
            ) from error
        code = subprocess.call(
            [sys.executable, "-m", CHILD, str(request), str(answer)],
            stdin=subprocess.DEVNULL,
        )
        reply: dict[str, Any] = (
            json.loads(answer.read_text(encoding="utf-8")) if answer.exists() else {}
        )
    if "error" in reply:
        raise RecordingFailed(str(reply["error"]))
    if code != 0 or "count" not in reply:
        raise RecordingFailed(f"the recording process exited with status {code}")
    return None if reply["count"] is None else int(reply["count"])
