#!/usr/bin/env bash
# The main job on the embedded default: local Parquet under data/, no API keys, no network.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bootstrap.sh
exec .venv/bin/drift generate scenarios/ --out data "$@"
