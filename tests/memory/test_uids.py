"""Sandbox uids are leased: two harnesses started at once never give two workers one uid."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from drift_pipeline.memory._uids import UID_BASE, lease_uid

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only a root harness leases uids")

HOLD = """
import sys, time
from drift_pipeline.memory._uids import lease_uid
lease = lease_uid(int(sys.argv[1]))
print(lease.uid, flush=True)
time.sleep(30)
"""


def _first_free() -> int:
    lease = lease_uid(UID_BASE + 1234)
    uid = lease.uid
    lease.release()
    return uid


@as_root
def test_a_uid_held_by_another_process_is_never_handed_out_again():
    first = _first_free()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(first)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        assert held == first
        mine = lease_uid(first)  # the same starting point, as a pid collision would give
        assert mine.uid != held
        mine.release()
    finally:
        holder.kill()
        holder.wait()
    # A dead holder's lease goes with it.
    again = lease_uid(first)
    assert again.uid == first
    again.release()


@as_root
def test_a_released_uid_can_be_leased_again_and_a_held_one_cannot():
    first = _first_free()
    one = lease_uid(first)
    two = lease_uid(first)
    assert one.uid == first and two.uid != first
    one.release()
    three = lease_uid(first)
    assert three.uid == first
    two.release()
    three.release()
