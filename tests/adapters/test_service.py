"""What the service adapters share: the names they keep, per worker and across its restarts."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from drift_pipeline.adapters._service import ServiceAdapter


class Stub(ServiceAdapter):
    """A service adapter with no SDK: only what the base class does."""

    service = "stub"
    title = "Stub"
    sdk = "stub-sdk"
    key_variable = "STUB_API_KEY"
    url_variable = "STUB_URL"

    def __init__(self) -> None:
        super().__init__(
            base_url="http://127.0.0.1:9/v1",
            default_url="https://stub.example/v1",
            stem="drift-t",
            poll_seconds=0.01,
            queryable_limit_seconds=1.0,
            attempts=1,
            retry_delay=0.01,
            request_timeout=1.0,
        )


def test_names_live_in_each_workers_state_folder_and_survive_its_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "script"
    script.mkdir()
    monkeypatch.chdir(script)
    monkeypatch.delenv("DRIFT_STATE_DIR", raising=False)
    built = Stub()  # in a user's script, before it is sent to the workers
    assert built.prefix.startswith("drift-t-")
    assert list(script.iterdir()) == []  # nothing left in the folder it was built in
    sent = pickle.dumps(built)

    def worker(name: str) -> Stub:
        """The adapter as a worker with its own state folder unpickles it (and first uses it)."""
        monkeypatch.setenv("DRIFT_STATE_DIR", str(tmp_path / name))
        (tmp_path / name).mkdir(exist_ok=True)
        copy: Stub = pickle.loads(sent)
        assert copy._sdk_client is None and copy.prefix  # its names are bound to that folder
        return copy

    first = worker("replicate-0")
    first._names.add_member("met:work", "principal")
    first._names.add_member("met:work", "principal")  # kept once
    second = worker("replicate-1")
    # Each replicate's worker has names of its own: replicates never share the service's state.
    assert len({built.prefix, first.prefix, second.prefix}) == 3
    assert second._names.members("met:work") == []
    restarted = worker("replicate-0")
    assert restarted.prefix == first.prefix
    assert restarted._names.members("met:work") == ["principal"]


def test_an_adapter_built_outside_a_worker_leaves_no_folder_once_its_process_exits(
    tmp_path: Path,
) -> None:
    # Outside a worker the kept names live in a temporary folder of the process's own.
    env = {k: v for k, v in os.environ.items() if k != "DRIFT_STATE_DIR"}
    env["TMPDIR"] = str(tmp_path)
    code = (
        "from drift_pipeline.adapters._state import KeptNames\n"
        "names = KeptNames('t')\n"
        "names.put('prefix', 'p')\n"
        "print(names._path.parent)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    folder = Path(done.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("drift-adapter-")
    assert not folder.exists()
