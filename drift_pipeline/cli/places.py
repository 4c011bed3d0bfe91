"""Where a command writes, and the Dagster instance it uses: checked before any work.

A path that cannot be written (a file in the way, a folder that cannot be created) or a
``DAGSTER_HOME`` that names no folder is one line naming it, exit 2, and nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CommandError

if TYPE_CHECKING:
    from drift_pipeline.storage import RootUnusable, StorageRoot


def writable_out(out: StorageRoot) -> None:
    """``--out`` can be a folder to write in, as far as can be told without writing.

    Raises:
        CommandError: A file stands at the folder or one of its parents, or its nearest
            existing parent is not writable (exit 2).
    """
    from drift_pipeline.storage import folder_problem

    problem = folder_problem(out.local_path) if out.local_path is not None else None
    if problem is not None:
        raise CommandError(f"--out {out}: {problem}")


def unusable_out(error: RootUnusable) -> CommandError:
    """The one-line error (exit 2) of an ``--out`` folder that could not be created."""
    return CommandError(f"--out {error.folder}: {error.reason}")


def make_out(out: StorageRoot) -> None:
    """Create the ``--out`` folder if missing, once the input is checked and work begins.

    Raises:
        CommandError: It cannot be created or written in (exit 2).
    """
    from drift_pipeline.storage import RootUnusable, prepare_root

    try:
        prepare_root(out)
    except RootUnusable as error:
        raise unusable_out(error) from error


def writable_file(path: Path, option: str) -> None:
    """A file option's path (``--json``, ``--output``) can be written, checked before any work.

    Raises:
        CommandError: The path is a folder, or its folder cannot be made (exit 2).
    """
    from drift_pipeline.storage import folder_problem

    problem = f"{path} is a folder, not a file" if path.is_dir() else folder_problem(path.parent)
    if problem is not None:
        raise CommandError(f"{option} {path}: {problem}")


def check_dagster_home(command: str) -> None:
    """``DAGSTER_HOME`` names an existing folder, checked before a command uses the instance.

    Args:
        command: What needs it, as the line names it (``--via dagster``, ``drift backfill``).

    Raises:
        CommandError: It is unset, or names no folder (exit 2; nothing was run).
    """
    import os

    fix = 'export DAGSTER_HOME="$PWD/.dagster_home" from the project root'
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        raise CommandError(f"{command} needs DAGSTER_HOME (the project's instance: {fix})")
    if not Path(home).is_dir():
        raise CommandError(
            f"{command} needs DAGSTER_HOME to be an existing folder: {home} is not one "
            f"(create it, or {fix})"
        )
