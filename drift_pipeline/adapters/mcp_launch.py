"""Start an MCP server so that it dies with the thread that started it.

Run as ``python -m drift_pipeline.adapters.mcp_launch PROGRAM ARGS…``: it asks the kernel for
SIGKILL when its parent thread ends (``PR_SET_PDEATHSIG``), then becomes the server. A worker
killed on a timeout or a crash therefore never leaves a server behind holding its memory files.
"""

from __future__ import annotations

import os
import shutil
import sys

from drift_pipeline.memory._sandbox import arm_parent_death


def main() -> None:
    """Arm the parent-death signal and ``exec`` the server command."""
    if len(sys.argv) < 2:
        sys.exit("usage: python -m drift_pipeline.adapters.mcp_launch PROGRAM [ARGS...]")
    program, arguments = sys.argv[1], sys.argv[2:]
    arm_parent_death()
    found = shutil.which(program) or program
    try:
        os.execv(found, [program, *arguments])
    except OSError as error:
        sys.exit(f"cannot start MCP server {program!r}: {error.strerror}")


if __name__ == "__main__":
    main()
