#!/usr/bin/env bash
# Installs the project into .venv from uv.lock (pinned versions). Sourced by run.sh and test.sh,
# and safe to source from an interactive shell: the work runs in a subshell, so the caller's
# shell options and working folder are left as they were, and a failure returns its status.
_drift_bootstrap() (
  set -euo pipefail
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  if ! python3 -m uv --version >/dev/null 2>&1; then
    python3 -m pip install --quiet --disable-pip-version-check uv
  fi
  # Never fetch a managed Python: the machine's python3 (3.11+) is the interpreter.
  export UV_PYTHON_DOWNLOADS=never
  # Bytecode is compiled here, once: with PYTHONDONTWRITEBYTECODE set (as in many container
  # images) Python would otherwise recompile every imported module from source in every
  # process, which cost each `drift` command and each sandboxed memory worker seconds (Dagster
  # alone: 1.1 s). Every adapter extra too: the tests run each adapter against its real SDK.
  # --inexact: a package installed into .venv beside the pinned ones (a memory backend's own
  # plugin, registered by entry point) stays installed; the pinned ones are still exact.
  python3 -m uv sync --frozen --inexact --quiet --compile-bytecode --all-extras
  .venv/bin/python -m compileall -q -j 0 drift_pipeline >/dev/null
)
# Called on its own (not in an `||` list, where bash would ignore `set -e` inside it). In a
# caller that has `set -e` a failure ends the caller here, as it should.
_drift_bootstrap
_drift_bootstrap_status=$?
unset -f _drift_bootstrap
if [ "$_drift_bootstrap_status" -ne 0 ]; then
  echo "bootstrap: installing the project into .venv failed (status $_drift_bootstrap_status)" >&2
fi
# shellcheck disable=SC2317  # `exit` is reached only when the file is run rather than sourced
return "$_drift_bootstrap_status" 2>/dev/null || exit "$_drift_bootstrap_status"
