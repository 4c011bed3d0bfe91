"""The ``drift`` command: quick local runs of the DRIFT pipeline without Dagster.

One module per command (:data:`.group.COMMANDS` adds each), shared options in :mod:`.common`,
exit statuses and the error that carries them in :mod:`.errors`.
"""

from .errors import (
    EXIT_BACKEND_START,
    EXIT_FAILURE,
    EXIT_INVALID,
    EXIT_INVALID_ARM,
    EXIT_ISOLATION,
    EXIT_ROOT_BUSY,
    CommandError,
)
from .group import COMMANDS, main

__all__ = [
    "COMMANDS",
    "EXIT_BACKEND_START",
    "EXIT_FAILURE",
    "EXIT_INVALID",
    "EXIT_INVALID_ARM",
    "EXIT_ISOLATION",
    "EXIT_ROOT_BUSY",
    "CommandError",
    "main",
]
