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
# ------------------------------------------------------------------------------------------------

source scripts/bootstrap.sh
.venv/bin/ruff check drift_pipeline tests
.venv/bin/mypy drift_pipeline
# The floors and the no-cycles rule of docs/architecture.md ([tool.importlinter] in pyproject.toml).
.venv/bin/lint-imports --no-logo
# pytest exits 5 when it collects nothing; that is a failure here, and set -e makes it one.
exec .venv/bin/pytest "$@"
