"""Isolation from a checkout that lives under a folder only its owner may enter (a 0700 home).

The checkout is copied (tracked and changed files, its ``.venv`` hard-linked) into a fresh
``mktemp -d`` folder, mode 0700, under root's home (itself 0700): the worker runs as another
user and must still reach the interpreter, the environment and the package, and nothing else
under those folders.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .plugins import _support

STRONGEST = "unprivileged-user+mount-namespace"
PROBE = "plugins.env_probe:EnvProbe"
REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="a worker of another uid needs a root harness"),
]


def _copy_checkout(target: Path) -> Path:
    """The working tree's files and a hard-linked copy of its ``.venv`` under ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    for name in listed:
        if not name or name.startswith(".venv/") or not (REPO / name).is_file():
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    venv = Path(sys.prefix)
    # Hard links: instant, and every file keeps its own mode, as after a real install.
    done = subprocess.run(["cp", "-al", str(venv), str(target / ".venv")], capture_output=True)
    if done.returncode != 0:
        subprocess.run(["cp", "-a", str(venv), str(target / ".venv")], check=True)
    for pth in (target / ".venv").glob("lib/python*/site-packages/*.pth"):
        if pth.read_text().strip() == str(REPO):
            pth.unlink()  # a hard link: write a new file, never through it
            pth.write_text(f"{target}\n")
    return target


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    parent = Path.home()
    if parent.stat().st_mode & 0o001:
        pytest.skip(f"{parent} is enterable by others; the case needs a 0700 home")
    folder = Path(tempfile.mkdtemp(prefix="drift-home-", dir=parent))  # mode 0700
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_checkout_under_a_0700_home_runs_fully_isolated(home: Path):
    checkout = _copy_checkout(home / "checkout")
    scenario = _support.write_scenario(home / "scenarios", "home-iso-t")
    secret = home / "beside-the-checkout.txt"
    secret.write_text("not for backends")
    out = checkout / "data"
    config = home / "backends.yaml"
    keys = home / "keys"
    keys.mkdir()
    (keys / "id").write_text("not for backends either")
    peek = [str(out), str(secret), str(keys), str(keys / "id")]
    config.write_text(json.dumps({PROBE: {"peek": peek}}))
    python = checkout / ".venv" / "bin" / "python"
    done = subprocess.run(
        [
            str(python),
            "-m",
            "drift_pipeline",
            "run",
            str(scenario),
            "--out",
            str(out),
            "--backend",
            "bm25",
            "--backend",
            PROBE,
            "--backend-config",
            str(config),
            "--json",
            str(home / "summary.json"),
        ],
        capture_output=True,
        text=True,
        cwd=checkout,
        env={**os.environ, "PYTHONPATH": str(checkout / "tests" / "memory")},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert " 0 faults" in done.stdout, done.stdout
    assert f"isolation: {STRONGEST}," in done.stdout
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    assert manifest["isolation"] == [STRONGEST]
    contexts = _support.query(
        out, "select distinct context from {retrievals} where backend = ?", PROBE
    )
    reports = [json.loads(row["context"]) for row in contexts]
    assert reports
    for report in reports:
        # Another user, and nothing of the home but the way to the interpreter and checkout.
        assert report["uid"] != 0
        assert report["readable"] == dict.fromkeys(peek, False), report["readable"]
