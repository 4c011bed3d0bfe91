"""``drift run --ablation NAME``: the arms of an ablation listed beside the scenarios."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memory.plugins import _support

DRIFT = str(Path(sys.executable).with_name("drift"))
ABLATIONS = """\
ablations:
  leaky-amnesiac:
    description: The amnesiac behind a leaky gate.
    arms: [amnesiac@soft:1, amnesiac@summary:64]
"""


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    scenario = _support.write_scenario(folder / "scenarios", "cli-ablation-t")
    (scenario.parent / "ablations.yaml").write_text(ABLATIONS, encoding="utf-8")
    return subprocess.run(
        [DRIFT, "run", str(scenario), "--out", str(folder / "data"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_ablation_alone_replaces_the_default_arms(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    done = _run(tmp_path, "--ablation", "leaky-amnesiac", "--json", str(summary))
    assert done.returncode == 0, done.stderr
    arms = [cell["arm"] for cell in json.loads(summary.read_text())["cells"]]
    assert sorted(set(arms)) == ["amnesiac@soft:1", "amnesiac@summary:64"]


def test_an_ablation_adds_to_named_backends(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    done = _run(
        tmp_path,
        "--backend",
        "amnesiac",
        "--ablation",
        "leaky-amnesiac",
        "--json",
        str(summary),
    )
    assert done.returncode == 0, done.stderr
    arms = {cell["arm"] for cell in json.loads(summary.read_text())["cells"]}
    assert arms == {"amnesiac@hard", "amnesiac@soft:1", "amnesiac@summary:64"}


def test_an_unknown_ablation_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _run(tmp_path, "--ablation", "nope")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "--ablation: ablation 'nope' is not in ablations.yaml (known: leaky-amnesiac)"
    ]
