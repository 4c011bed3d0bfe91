#!/usr/bin/env bash
# Installs everything the tests need, then runs the whole suite (slow end-to-end tests included).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# --- PostgreSQL server binaries for the dagster-postgres tests (tests/defs) ---------------------
# The fixture starts a throwaway server on 127.0.0.1 from /usr/lib/postgresql/*/bin as `postgres`.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi

# --- Chromium for the web UI test (tests/defs/test_web_ui.py) ---------------------------------
# Debian's chromium, driven by Playwright through its executable path (no browser download).
# Without it (and not root) that test fails, saying how to install it.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi

# --- Node.js and npm for the MCP server tests (tests/adapters/test_mcp_server_memory.py) --------
# Their fixture installs the reference MCP memory server from npm, pinned by
# tests/fixtures/mcp_memory_server/package-lock.json, into .venv; it needs node and npm.
if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
# ------------------------------------------------------------------------------------------------

source scripts/bootstrap.sh
.venv/bin/ruff check drift_pipeline tests

# The floors and the no-cycles rule of docs/architecture.md ([tool.importlinter] in pyproject.toml).
.venv/bin/lint-imports --no-logo

# mypy runs beside pytest (one process, while pytest's workers often wait on subprocesses); its
# report is printed after the tests and its exit status fails the script as before.
mypy_log="$(mktemp)"
.venv/bin/mypy drift_pipeline >"$mypy_log" 2>&1 &
mypy_pid=$!
trap 'kill "$mypy_pid" 2>/dev/null || true; rm -f "$mypy_log"' EXIT

# pytest-xdist workers, one more than the cores: many tests spend seconds waiting (on a
# subprocess's timeout, a browser, a server's retries, a backend that sleeps on purpose), and
# with one worker per core that core idles meanwhile (the suite used about 1.6 of 2 cores).
# Each test file stays on one worker, so a module's shared run is made once. Files go out in
# collection order, which tests/conftest.py starts with the longest files (xdist's default, most
# tests first, would leave the few-test end-to-end files for last, on one worker while the
# others idle). Arguments after the script's name still reach pytest (`-n 0` for one process;
# a later `-n` wins). pytest exits 5 when it collects nothing; that is a failure here too.
workers=$(($(nproc) + 1))
pytest_status=0
.venv/bin/pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@" || pytest_status=$?

mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_log"
if [ "$mypy_status" -ne 0 ]; then
  echo "mypy failed (exit $mypy_status)" >&2
fi
if [ "$pytest_status" -ne 0 ]; then
  exit "$pytest_status"
fi
exit "$mypy_status"
