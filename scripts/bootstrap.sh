#!/usr/bin/env bash
# Installs the project into .venv from uv.lock (pinned versions). Sourced by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! python3 -m uv --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv
fi
# Never fetch a managed Python: the machine's python3 (3.11+) is the interpreter.
export UV_PYTHON_DOWNLOADS=never
# Bytecode is compiled here, once: with PYTHONDONTWRITEBYTECODE set (as in many container
# images) Python would otherwise recompile every imported module from source in every process,
# which cost each `drift` command and each sandboxed memory worker seconds (Dagster alone: 1.1 s).
# Every adapter extra too: the tests run each adapter against its real SDK.
python3 -m uv sync --frozen --quiet --compile-bytecode --all-extras
.venv/bin/python -m compileall -q -j 0 drift_pipeline >/dev/null
