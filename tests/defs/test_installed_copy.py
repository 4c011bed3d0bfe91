"""An installed copy of the package (no ``pyproject.toml`` beside it) loads the same definitions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import drift_pipeline
from drift_pipeline.definitions import defs as load_defs

PACKAGE = Path(drift_pipeline.__file__).parent

_LIST_ASSETS = (
    "import json, drift_pipeline, drift_pipeline.definitions as d;"
    "keys = sorted(k.to_user_string() for k in d.defs().resolve_all_asset_keys());"
    "print(json.dumps({'file': drift_pipeline.__file__, 'keys': keys}))"
)


def test_a_copy_of_the_package_alone_loads_the_defs_folder(tmp_path: Path) -> None:
    # What a wheel installs: the package folder and its data files, nothing of the checkout.
    shutil.copytree(
        PACKAGE, tmp_path / "drift_pipeline", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _LIST_ASSETS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(loaded["file"]).is_relative_to(tmp_path)
    assert loaded["keys"] == sorted(
        k.to_user_string() for k in load_defs().resolve_all_asset_keys()
    )
