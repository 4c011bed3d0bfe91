"""Keys given to a run never reach its records: tables, manifests, summaries, output, errors.

A key is planted in ``DRIFT_LLM_API_KEY`` and as a backend's ``api_key`` option, and the
backend echoes its key in every exception it raises; then every file the run wrote and
everything it printed is searched for either key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import unchecked
from memory.plugins import _support

DRIFT = str(Path(sys.executable).with_name("drift"))
REPO = Path(__file__).resolve().parents[1]
ENV_KEY = "sk-planted-env-key-7d1f0c9a"
OPTION_KEY = "sk-planted-option-key-44be2e81"

LEAKY = """\
import os

from drift_pipeline.memory import TokenCounts


class Leaky:
    def __init__(self, api_key, fail_start=False):
        self.api_key = api_key
        self.calls = 0
        print("starting with", api_key, os.environ.get("DRIFT_LLM_API_KEY"))
        if fail_start:
            raise PermissionError(f"key {api_key} was refused")

    async def store(self, session_id, messages):
        self.calls += 1
        if self.calls % 4 == 0:
            raise RuntimeError(f"auth failed for key {self.api_key}")

    async def retrieve(self, session_id, entity_id, query):
        self.calls += 1
        if self.calls % 3 == 0:
            raise ValueError(f"bad token {self.api_key}")
        return "nothing kept"

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""
"""


def _run(
    folder: Path, options: dict[str, object], *via: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    modules = folder / "modules"
    modules.mkdir(parents=True)
    (modules / "leaky.py").write_text(LEAKY)
    config = folder / "backends.yaml"
    config.write_text(json.dumps({"leaky:Leaky": options}))
    scenario = _support.write_scenario(folder / "scenarios", "cli-secret-t")
    out = folder / "data"
    home = folder / "dagster-home"  # the instance of --via dagster: its database and logs
    home.mkdir()
    shutil.copy(REPO / "dagster.yaml", home / "dagster.yaml")
    done = subprocess.run(
        [
            DRIFT,
            "run",
            str(scenario),
            "--out",
            str(out),
            "--backend",
            "leaky:Leaky",
            "--backend",
            "bm25",
            "--backend-config",
            str(config),
            "--json",
            str(out / "s.json"),
            # Every call is made however many fault: each fault line is a place a key could leak.
            "--max-fault-rate",
            "1",
            *via,
        ],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(modules),
            "DRIFT_LLM_API_KEY": ENV_KEY,
            "DAGSTER_HOME": str(home),
            **unchecked(
                "leaky:Leaky",
                "keeps nothing and faults quoting its key on purpose; what the run's records "
                "say of those faults is what is searched for keys",
            ),
        },
        timeout=300,
    )
    return done, folder


def _leaks(done: subprocess.CompletedProcess[str], folder: Path) -> list[str]:
    """Where either key appears: printed output, any file's bytes, any table cell (in the
    output folder and the Dagster instance's folder; the run's own inputs hold the key)."""
    found = [
        name
        for name, text in (("stdout", done.stdout), ("stderr", done.stderr))
        if ENV_KEY in text or OPTION_KEY in text
    ]
    written = [*(folder / "data").rglob("*"), *(folder / "dagster-home").rglob("*")]
    for path in sorted(p for p in written if p.is_file()):
        data = path.read_bytes()
        if ENV_KEY.encode() in data or OPTION_KEY.encode() in data:
            found.append(str(path))
        if path.suffix == ".parquet":  # compressed: search the decoded values
            for column in pq.read_table(path).to_pylist():
                text = json.dumps(column, default=str)
                if ENV_KEY in text or OPTION_KEY in text:
                    found.append(f"{path}: {text[:200]}")
    return found


@pytest.mark.parametrize("via", ["direct", "dagster"])
def test_keys_echoed_in_a_backends_faults_are_redacted_everywhere(tmp_path: Path, via: str):
    # Searched: the output folder and, through Dagster, the instance's database and logs.
    done, folder = _run(tmp_path, {"api_key": OPTION_KEY}, "--via", via)
    out = folder / "data"
    assert done.returncode in (0, 5), done.stderr  # faulty enough to be unranked, or not
    if via == "dagster":
        assert list((folder / "dagster-home").rglob("*.db"))  # the instance recorded the run
    errors = _support.query(
        out,
        "select error from {memory_snapshots} where error is not null "
        "union all select error from {retrievals} where error is not null",
    )
    # The faults were recorded, with the key taken out.
    found = {e["error"].split(" at ")[0] for e in errors}
    assert "RuntimeError: auth failed for key [redacted]" in found
    assert "ValueError: bad token [redacted]" in found
    assert "    first exception (" in done.stdout
    assert list(out.rglob("*.parquet")) and (out / "_manifests" / "run.json").exists()
    assert _leaks(done, folder) == []
    # The key option is recorded as given, its value masked, beside the arms given no option.
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    assert manifest["arm_options"]["leaky:Leaky@hard"] == {"api_key": "[redacted]"}
    assert manifest["arm_options"]["bm25@hard"] == {}


def test_a_key_in_a_constructors_error_is_redacted_in_the_one_line(tmp_path: Path):
    done, folder = _run(tmp_path, {"api_key": OPTION_KEY, "fail_start": True})
    assert done.returncode == 4, done.stderr
    assert "PermissionError: key [redacted] was refused" in done.stderr
    assert _leaks(done, folder) == []
