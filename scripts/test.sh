#!/usr/bin/env bash
# Installs everything the tests need, then runs the whole suite (slow end-to-end tests included).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
.venv/bin/ruff check drift_pipeline tests
.venv/bin/mypy drift_pipeline
# pytest exits 5 when it collects nothing; that is a failure here, and set -e makes it one.
exec .venv/bin/pytest "$@"
