#!/usr/bin/env bash
# The main job on the embedded default: the canonical suite through the six built-in backends,
# local Parquet under data/, no API keys, no network. Prints the leaderboard.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
# --jobs 2: two worlds at once (one process each) on the 2-core reference machine. Answers and
# every figure not built on latency are the same as with one; latencies (and LPS) are measured
# under that load.
exec .venv/bin/drift run scenarios/ --out data --json data/summary.json --jobs 2 "$@"
