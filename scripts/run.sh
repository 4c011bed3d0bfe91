#!/usr/bin/env bash
# The main job on the embedded default: the canonical suite through the six built-in backends,
# local Parquet under data/, no API keys, no network. Prints the leaderboard.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
exec .venv/bin/drift run scenarios/ --out data --json data/summary.json "$@"
