"""An adapter package installed into an environment (not on ``PYTHONPATH``) is found by name.

The example package in ``tests/fixtures/plugins/drift_example_plugin`` is pip-installed, offline,
into a throwaway environment that sees the project's packages through a ``.pth`` line; then
``drift run`` in that environment runs its backends by name through the isolated worker, and its
gate variant by its kind.
"""

from __future__ import annotations

import ensurepip
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..plugins import _support

# A throwaway environment, a pip install and a whole run: tens of seconds on a busy machine.
pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "drift_example_plugin"
STRONGEST = "unprivileged-user+mount-namespace"


@dataclass(frozen=True)
class PluginEnv:
    """A throwaway environment with the example package installed."""

    python: Path
    folder: Path

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run(
            [str(self.python), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd or self.folder,
            timeout=300,
        )


def _bundled_pip() -> Path:
    wheels = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    if not wheels:
        pytest.skip("this Python ships no bundled pip wheel (ensurepip) to install with offline")
    return wheels[-1]


@pytest.fixture(scope="module")
def plugin_env() -> Iterator[PluginEnv]:
    # Not pytest's tmp_path: the isolated worker runs as an unprivileged user and must be able to
    # read the environment, and pytest's temporary folders are private to their owner.
    folder = Path(tempfile.mkdtemp(prefix="drift-plugin-env-"))
    try:
        os.chmod(folder, 0o755)
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(folder / "env")], check=True
        )
        python = folder / "env" / "bin" / "python"
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # addsitedir (not a bare path line) so the project's own .pth files (its editable
        # install) are processed too.
        project = sysconfig.get_paths()["purelib"]
        Path(purelib, "_drift_project.pth").write_text(
            f"import site; site.addsitedir({project!r})\n", encoding="utf-8"
        )
        installed = subprocess.run(
            [
                str(python),
                str(_bundled_pip() / "pip"),
                "install",
                "--no-index",
                "--no-deps",
                "--no-build-isolation",
                "--no-cache-dir",
                "--disable-pip-version-check",
                "--quiet",
                str(EXAMPLE),
            ],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        assert installed.returncode == 0, installed.stderr
        _support.write_scenario(folder / "scenarios", "plugin-ep-t")
        yield PluginEnv(python, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_package_was_installed_not_put_on_a_path(plugin_env: PluginEnv):
    found = plugin_env.run(
        "-c",
        "import importlib.metadata as m, drift_example_plugin as p; "
        "print(m.distribution('drift-example-plugin').version); print(p.__file__)",
    )
    assert found.returncode == 0, found.stderr
    version, location = found.stdout.split()
    assert version == "0.1.0"
    assert Path(location).is_relative_to(plugin_env.folder / "env")
    assert not Path(location).is_relative_to(EXAMPLE)


def test_installed_backends_are_found_by_name_but_are_not_default_arms(plugin_env: PluginEnv):
    script = (
        "import json\n"
        "from drift_pipeline.memory.backends import backend_names, default_backend_names, "
        "load_backend\n"
        "backend = load_backend('example_echo', {'keep': 2})\n"
        "print(json.dumps([backend_names(), default_backend_names(), type(backend).__module__, "
        "backend.version]))\n"
    )
    done = plugin_env.run("-c", script)
    assert done.returncode == 0, done.stderr
    names, defaults, module, version = json.loads(done.stdout)
    assert {"example_echo", "example_windowed", "example_needs_extra"} <= set(names)
    assert not any(name.startswith("example_") for name in defaults)
    assert (module, version) == ("drift_example_plugin.backends", "1+keep2")


def test_the_project_environment_itself_does_not_see_the_package():
    from drift_pipeline.memory.backends import backend_names

    assert "example_echo" not in backend_names()


@pytest.fixture(scope="module")
def plugin_run(plugin_env: PluginEnv) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``drift run`` of the installed backends under a built-in and the installed gate."""
    out = plugin_env.folder / "data"
    done = plugin_env.run(
        "-m",
        "drift_pipeline.cli",
        "run",
        "scenarios/plugin-ep-t.yaml",
        *("--backend", "example_echo", "--backend", "example_windowed"),
        *("--gate", "hard", "--gate", "example_window:2"),
        *("--out", str(out), "--json", str(plugin_env.folder / "summary.json")),
    )
    return done, out


ARMS = {
    f"{backend}@{gate}"
    for backend in ("example_echo", "example_windowed")
    for gate in ("hard", "example_window:2")
}


def test_drift_run_runs_installed_backends_by_name_in_the_isolated_worker(
    plugin_env: PluginEnv, plugin_run: tuple[subprocess.CompletedProcess[str], Path]
):
    done, out = plugin_run
    assert done.returncode == 0, done.stderr
    cells = json.loads((plugin_env.folder / "summary.json").read_text())["cells"]
    assert {cell["arm"] for cell in cells} == ARMS
    manifest = json.loads((out / "_manifests" / "run.json").read_text())
    # The windowed registration's defaults hook gave keep = replicates × 3 from the scenario.
    assert manifest["backends"]["example_windowed"] == f"1+keep{_support.REPLICATES * 3}"
    assert manifest["backends"]["example_echo"] == "1+keep8"
    if os.geteuid() == 0:
        assert manifest["isolation"] == [STRONGEST]
    rows = _support.query(
        out, "select arm, count(*) as n, count(error) as e from {memory_snapshots} group by arm"
    )
    expected = _support.SESSIONS * _support.REPLICATES
    assert {r["arm"]: (r["n"], r["e"]) for r in rows} == {
        arm: (expected, 0) for arm in {*ARMS, "reference_compressor@hard"}
    }


def test_an_installed_gate_variant_runs_by_its_registration(
    plugin_run: tuple[subprocess.CompletedProcess[str], Path],
):
    done, out = plugin_run
    assert done.returncode == 0, done.stderr
    stored = _support.query(
        out,
        "select gate, max(storage_tokens) as most from {memory_snapshots} "
        "where backend = 'example_echo' group by gate",
    )
    # Nothing reaches the backend through the window gate; the reader gets the last two.
    assert {r["gate"]: r["most"] > 0 for r in stored} == {"hard": True, "example_window:2": False}
    buffers = _support.query(
        out,
        "select gate, min(soft_buffer_tokens) as lo from {retrievals} "
        "where backend = 'example_echo' group by gate",
    )
    assert {r["gate"]: r["lo"] > 0 for r in buffers} == {"hard": False, "example_window:2": True}


def test_a_missing_extra_is_one_line_naming_what_to_install(plugin_env: PluginEnv):
    done = plugin_env.run(
        "-m",
        "drift_pipeline.cli",
        "run",
        "scenarios/plugin-ep-t.yaml",
        *("--backend", "example_needs_extra", "--out", str(plugin_env.folder / "never")),
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "example_needs_extra" in lines[0]
    assert "pip install 'drift-example-plugin[missing]'" in lines[0]
    assert not (plugin_env.folder / "never").exists()
