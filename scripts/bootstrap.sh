#!/usr/bin/env bash
# Installs the project into .venv from uv.lock (pinned versions). Sourced by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
# Never fetch a managed Python: the machine's python3 (3.11+) is the interpreter.
export UV_PYTHON_DOWNLOADS=never
python3 -m uv sync --frozen --quiet
