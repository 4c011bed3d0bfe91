"""One writer per local root; a killed writer leaves no partial file and no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from drift_pipeline.storage import LOCK_FILE, RootBusy, RootUnusable, exclusive_root

HOLD = """
import sys, time
from drift_pipeline.storage import exclusive_root
with exclusive_root(sys.argv[1], "test holder"):
    print("held", flush=True)
    time.sleep(60)
"""

KILLED_MID_WRITE = """
import os, signal, sys
import pyarrow as pa
from drift_pipeline.storage import PROBES, staged
with staged(sys.argv[1]) as writer:
    table = pa.table({f.name: pa.nulls(0, f.type) for f in PROBES.schema}, schema=PROBES.schema)
    writer.put(PROBES, {"scenario": "s", "horizon": "short"}, table)
    os.kill(os.getpid(), signal.SIGKILL)  # staged, never committed
"""


def _holder(root: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_a_second_writer_is_refused_with_one_line_naming_the_first(tmp_path: Path):
    holder = _holder(tmp_path)
    try:
        with pytest.raises(RootBusy) as busy, exclusive_root(tmp_path):
            pass
        message = str(busy.value)
        assert "\n" not in message
        assert message == (
            f"{tmp_path} is in use by test holder (pid {holder.pid}); wait for it to finish "
            "or give another --out"
        )
    finally:
        holder.kill()
        holder.wait()


def test_a_writer_killed_with_sigkill_leaves_no_stale_lock(tmp_path: Path):
    holder = _holder(tmp_path)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / LOCK_FILE).exists()  # the file stays; its lock died with the process
    with exclusive_root(tmp_path, "second"):
        assert (tmp_path / LOCK_FILE).read_text() == f"second (pid {os.getpid()})\n"


def test_the_lock_is_held_only_inside_the_block(tmp_path: Path):
    with exclusive_root(tmp_path, "first"):
        pass
    # Taking it again after the block succeeds (a lock still held would raise RootBusy) and
    # records the new holder.
    with exclusive_root(tmp_path, "second"):
        assert (tmp_path / LOCK_FILE).read_text() == f"second (pid {os.getpid()})\n"


def test_a_write_killed_before_its_commit_leaves_no_parquet_file_visible(tmp_path: Path):
    done = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(tmp_path)])
    assert done.returncode == -signal.SIGKILL
    assert list(tmp_path.glob("**/*.parquet")) == []
    assert not (tmp_path / "probes").exists()


@pytest.mark.parametrize("below", ["", "sub/folder"])
def test_a_file_in_the_way_is_refused_before_anything_is_written(tmp_path: Path, below: str):
    blocker = tmp_path / "afile"
    blocker.write_text("mine\n")
    root = blocker / below if below else blocker
    with pytest.raises(RootUnusable) as raised, exclusive_root(root):
        pytest.fail("the block must not run")
    assert raised.value.folder == root
    assert str(raised.value) == f"{root}: {blocker} is a file, not a folder"
    assert blocker.read_text() == "mine\n"


def test_a_folder_the_system_cannot_create_is_one_line():
    # /proc takes no new folders, whoever asks (root included); nothing else is tried.
    root = Path("/proc/drift-no-such-folder")
    with pytest.raises(RootUnusable) as raised, exclusive_root(root):
        pytest.fail("the block must not run")
    assert str(raised.value).startswith(f"{root}: cannot create it (")
    assert "\n" not in str(raised.value)
