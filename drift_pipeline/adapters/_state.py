"""Where an adapter keeps what must outlive one worker process: the worker's state folder."""

from __future__ import annotations

import functools
import os
import tempfile

__all__ = ["state_folder"]


@functools.cache
def _scratch() -> str:
    return tempfile.mkdtemp(prefix="drift-adapter-")


def state_folder() -> str:
    """The worker's own state folder (``DRIFT_STATE_DIR``), else a new temporary folder.

    Never the current folder: an adapter built outside a worker (in a script, before it is sent
    to one) must not leave files in whatever folder it happens to be built in.
    """
    return os.environ.get("DRIFT_STATE_DIR") or _scratch()
