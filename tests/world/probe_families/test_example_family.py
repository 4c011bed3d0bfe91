"""A family registered from outside the package runs through generation, audit, judge, metrics.

The example is ``tests/probe_family_example.py``: a toy canary family (one module) and one
registration. No generic code names it; every step below finds it through the registry.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pyarrow as pa
import pytest
from probe_family_example import register_canary

from drift_pipeline.evaluation import (
    ArmData,
    MetricConfig,
    ReferenceFigures,
    compute_cell,
    judge_all,
)
from drift_pipeline.scenario import ResolvedCheckpoint
from drift_pipeline.world import AuditError, Probe, WorldReplicate, audit_probes
from drift_pipeline.world._generate import _event_mentions
from drift_pipeline.world._probes import ProbeBuilder

from ._support import record


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> None:
    register_canary(monkeypatch)


def _probes(world: WorldReplicate, probe_types: tuple[str, ...]) -> list[Probe]:
    builder = ProbeBuilder(
        world.profiles,
        world.plans,
        world.facts,
        _event_mentions(world.profiles, world.turns),
        random.Random(11),
        cap=60,
        id_prefix="t-",
    )
    return builder.checkpoint(ResolvedCheckpoint(40, probe_types), 20)


def test_it_is_generated_in_its_declared_subtypes_and_audited(
    canary: None, replicate: WorldReplicate
) -> None:
    probes = _probes(replicate, ("recall", "canary"))
    canaries = [p for p in probes if p.probe_type == "canary"]
    assert canaries and {p.subtype for p in canaries} == {"canary"}
    assert len({p.probe_id for p in probes}) == len(probes)
    audit_probes(probes, replicate.plans, replicate.turns)
    unsaid = dataclasses.replace(canaries[0], evidence_terms=("Quetzalcoatl Holdings",))
    with pytest.raises(AuditError, match=r"\(canary/canary\): answer never expressed"):
        audit_probes([unsaid], replicate.plans, replicate.turns)


def test_registering_it_leaves_worlds_that_do_not_ask_for_it_unchanged(
    replicate: WorldReplicate, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _probes(replicate, ("recall", "action", "revision"))
    register_canary(monkeypatch)
    assert _probes(replicate, ("recall", "action", "revision")) == before


def test_it_is_judged_by_its_rule_and_counted_in_privacy_only(
    canary: None, replicate: WorldReplicate
) -> None:
    probes = _probes(replicate, ("recall", "canary"))
    rows = [{**record(p), "replicate": 0} for p in probes]
    leaked = next(p for p in probes if p.probe_type == "canary")
    recalled = next(p for p in probes if p.probe_type == "recall" and p.polarity == "positive")
    # One canary leaks; one recall probe is answered; everything else gets nothing.
    contexts = {(0, leaked.probe_id): leaked.aliases[0], (0, recalled.probe_id): recalled.answer}
    columns = judge_all(pa.Table.from_pylist(rows), contexts)
    by_id = dict(zip(columns["probe_id"], columns["correct"], strict=True))
    canary_ids = [p.probe_id for p in probes if p.probe_type == "canary"]
    assert [by_id[i] for i in canary_ids] == [i != leaked.probe_id for i in canary_ids]

    answers = pa.table(columns)
    amnesiac = judge_all(pa.Table.from_pylist(rows), {})
    n = len(probes)
    arm = ArmData(
        answers,
        pa.table(
            {
                "replicate": [0],
                "session_index": [0],
                "tier": ["signal"],
                "write_tokens": [0],
                "storage_tokens": [10],
                "storage_delta_tokens": [10],
                "write_ms": [1.0],
            }
        ),
        pa.table(
            {
                "replicate": [0] * n,
                "checkpoint": [40] * n,
                "probe_id": columns["probe_id"],
                "read_ms": [1.0] * n,
                "read_tokens": [10] * n,
                "llm_read_tokens": [0] * n,
            }
        ),
    )
    reference = ReferenceFigures((0,), (10.0,), (10.0,), (0.5,))
    cell = compute_cell(arm, pa.table(amnesiac), reference, "short", MetricConfig(n_boot=20))
    n_canary, n_other = len(canary_ids), n - len(canary_ids)
    privacy = cell.get("privacy", None)
    assert privacy.value == pytest.approx((n_canary - 1) / n_canary) and privacy.n == n_canary
    error_rate = cell.get("error_rate", None)
    assert error_rate.n == n_other  # canaries never enter E(t)
    recall_correct = [
        c for c, t in zip(columns["correct"], columns["probe_type"], strict=True) if t == "recall"
    ]
    assert error_rate.value == pytest.approx(1 - float(np.mean(recall_correct)))
