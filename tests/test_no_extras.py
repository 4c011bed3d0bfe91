"""``import drift_pipeline`` and every built-in path work with no adapter extra installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# The import names of the adapter extras' SDKs (mem0ai, honcho-ai, zep-cloud, letta-client, mcp).
EXTRAS = ("mem0", "honcho", "zep_cloud", "letta_client", "mcp", "qdrant_client")

_SCRIPT = textwrap.dedent(
    """
    import importlib.abc, sys
    BLOCKED = set(sys.argv[1].split(","))

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    import drift_pipeline
    from drift_pipeline.cli import main
    from drift_pipeline.memory.backends import backend_names, default_backend_names, load_backend
    names = backend_names()
    for name in default_backend_names():
        load_backend(name)
    loaded = sorted(m.split(".")[0] for m in sys.modules if m.split(".")[0] in BLOCKED)
    print("loaded:", ",".join(loaded) or "none")
    print("names:", ",".join(names))
    """
)


def test_no_adapter_sdk_is_imported_by_the_package_or_its_built_ins() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, ",".join(EXTRAS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert lines["loaded"] == "none"
    assert "fact_store" in lines["names"].split(",")
