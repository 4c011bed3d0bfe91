"""The read side of the token cost over a trajectory agrees with TC's per-read rule."""

from __future__ import annotations

import pyarrow as pa
import pytest

from drift_pipeline.evaluation import cumulative_read_tokens

from .test_metrics import SESSION_READS, SESSIONS, metered_retrievals, snapshots, with_session_reads


def test_reads_so_far_cost_at_least_what_the_probes_they_lead_up_to_were_handed() -> None:
    table = with_session_reads(snapshots(SESSIONS), SESSION_READS)
    got = cumulative_read_tokens(table, metered_retrievals(), [2, 4])
    # rep0: the reads before sessions 0-1 (10, 20 + 4 LLM) against checkpoint 2's probes (102
    # each), those before 2-3 (30, 40) against checkpoint 4's (102). rep1: two reads before
    # session 1 (50, 70 + 6) against 100, one before session 2 (60) against 103.5 (100, 100,
    # 100, 114). At the last checkpoint, after the last session, the sum over the sessions is
    # TC's read part (see the token cost tests).
    assert got == {
        (0, 2): pytest.approx(2 * 102),
        (0, 4): pytest.approx(4 * 102),
        (1, 2): pytest.approx(2 * 100),
        (1, 4): pytest.approx(2 * 100 + 103.5),
    }


def test_reads_larger_than_the_probes_cost_their_own_and_the_buffer_is_not_the_memorys() -> None:
    table = with_session_reads(snapshots(SESSIONS), SESSION_READS)
    # A soft gate's buffer (90 of each probe's 100 context tokens) is the harness's: the memory
    # handed the probes 10 + 2, less than the agent's reads.
    probes = metered_retrievals().append_column(
        "soft_buffer_tokens", pa.array([90] * 14, pa.int64())
    )
    got = cumulative_read_tokens(table, probes, [4])
    assert got[(0, 4)] == pytest.approx(10 + 24 + 30 + 40)
    assert got[(1, 4)] == pytest.approx(50 + 76 + 60)
    # The backend's own report (here 100 above the meter on every read) is charged when the
    # cell's figures are self-reported.
    reported = {
        rep: [[(t, m, m + 100) for t, m, _ in session] for session in sessions]
        for rep, sessions in SESSION_READS.items()
    }
    table = with_session_reads(snapshots(SESSIONS), reported)
    assert cumulative_read_tokens(table, probes, [4]) == got
    assert cumulative_read_tokens(table, probes, [4], self_reported=True) == {
        (0, 4): pytest.approx(104 + 4 * 100),
        (1, 4): pytest.approx(186 + 3 * 100),
    }
