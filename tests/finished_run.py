"""``drift run`` as a user starts it (a subprocess), and what it left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.plugins import _support

DRIFT = str(Path(sys.executable).with_name("drift"))


@dataclass(frozen=True)
class FinishedRun:
    """One finished ``drift run``: exit status, output, storage root, JSON summary."""

    code: int
    stdout: str
    stderr: str
    out: Path
    summary: dict[str, Any]

    def query(self, sql: str, *params: object) -> list[dict[str, Any]]:
        """``sql`` over the run's tables (``{memory_snapshots}``, ``{retrievals}``, …)."""
        return _support.query(self.out, sql, *params)

    def manifest(self) -> dict[str, Any]:
        """The run manifest."""
        return json.loads((self.out / "_manifests" / "run.json").read_text())  # type: ignore[no-any-return]


def drift_run(
    scenario: Path, folder: Path, arguments: Sequence[str], env: Mapping[str, str]
) -> FinishedRun:
    """Run ``drift run SCENARIO --out FOLDER/data --json FOLDER/summary.json ARGUMENTS``."""
    out, summary = folder / "data", folder / "summary.json"
    done = subprocess.run(
        [DRIFT, "run", str(scenario), "--out", str(out), "--json", str(summary), *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=900,
    )
    payload = json.loads(summary.read_text()) if summary.exists() else {}
    return FinishedRun(done.returncode, done.stdout, done.stderr, out, payload)
