"""The answerability audit: checked again on the stored tables, and shown to catch broken probes."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import pytest
from helpers import TEST_SCENARIOS, Worlds

from drift_pipeline.scenario import parse_scenario_text
from drift_pipeline.textmatch import contains_any
from drift_pipeline.world import AuditError, Probe, WorldReplicate, audit_probes, generate_replicate
from drift_pipeline.world.probe_families.recall import date_aliases


def _event_turns(
    worlds: Worlds, scenario: str, horizon: str, replicate: int
) -> dict[int, list[str]]:
    turns: dict[int, list[str]] = defaultdict(list)
    for row in worlds.query(
        "select session_index, content from {transcripts} where scenario = ? and horizon = ? "
        "and replicate = ? and label_event_id is not null",
        scenario,
        horizon,
        replicate,
    ):
        turns[row["session_index"]].append(row["content"])
    return turns


def test_positive_probes_are_answerable_from_earlier_signal_sessions(worlds: Worlds):
    checked = 0
    for scenario, horizon, replicate in worlds.worlds():
        key = (scenario, horizon, replicate)
        tiers = {
            row["session_index"]: (row["tier"], row["sim_time"])
            for row in worlds.query(
                "select session_index, tier, sim_time from {event_schedules} "
                "where scenario = ? and horizon = ? and replicate = ?",
                *key,
            )
        }
        turns = _event_turns(worlds, *key)
        probes = worlds.query(
            "select * from {probes} where scenario = ? and horizon = ? and replicate = ? "
            "and polarity = 'positive'",
            *key,
        )
        for probe in probes:
            assert probe["evidence_sessions"], probe
            for session in probe["evidence_sessions"]:
                assert session < probe["checkpoint"], probe
                assert tiers[session][0] in ("signal", "soft"), probe
            # Temporal answers are dates; the evidence then has to name the changed value.
            terms = probe["evidence_terms"] if probe["subtype"] == "temporal" else probe["aliases"]
            expressed = [
                session
                for session in probe["evidence_sessions"]
                if any(contains_any(text, terms) for text in turns[session])
            ]
            assert expressed, probe
            if probe["probe_type"] == "recall":
                # Recall evidence is the fact's own sessions: every one of them says it.
                assert expressed == list(probe["evidence_sessions"]), probe
            if probe["subtype"] == "temporal":
                assert probe["answer"] == date_aliases(tiers[probe["event_session"]][1])[0]
            if probe["probe_type"] == "revision":
                assert probe["deprecated"], probe
                said_before = any(
                    contains_any(text, probe["deprecated"])
                    for session, texts in turns.items()
                    if session < probe["event_session"]
                    for text in texts
                )
                assert said_before, probe
            checked += 1
    assert checked > 300


def test_negative_probe_decoys_never_appear_in_an_event_turn_before_the_checkpoint(worlds: Worlds):
    checked = 0
    for scenario, horizon, replicate in worlds.worlds():
        key = (scenario, horizon, replicate)
        turns = _event_turns(worlds, *key)
        held = {
            (row["subject"], row["slot"], row["value"])
            for row in worlds.query(
                "select subject, slot, value from {ground_truth} "
                "where scenario = ? and horizon = ? and replicate = ?",
                *key,
            )
        }
        for probe in worlds.query(
            "select * from {probes} where scenario = ? and horizon = ? and replicate = ? "
            "and polarity = 'negative'",
            *key,
        ):
            assert probe["probe_type"] == "recall" and probe["subtype"] == "negative"
            assert probe["answer"] == "no" and not probe["evidence_sessions"]
            decoy = probe["aliases"][0]
            assert (probe["subject"], probe["slot"], decoy) not in held, probe
            for session, texts in turns.items():
                if session < probe["checkpoint"]:
                    assert not any(contains_any(text, probe["aliases"]) for text in texts), (
                        probe,
                        session,
                    )
            checked += 1
    assert checked > 100


# --- the audit itself catches broken probes (family rules: tests/world/probe_families) ---------


@pytest.fixture(scope="module")
def replicate() -> WorldReplicate:
    spec = parse_scenario_text(TEST_SCENARIOS["test-commuter-a"])
    return generate_replicate(spec, "medium", 0)


def _first(world: WorldReplicate, **conditions: object) -> Probe:
    return next(
        p
        for p in world.probes
        if all(getattr(p, name) == value for name, value in conditions.items())
    )


def _audit(world: WorldReplicate, probe: Probe) -> None:
    audit_probes([probe], world.plans, world.turns)


def test_the_generated_probes_pass(replicate: WorldReplicate):
    assert len(replicate.probes) > 20
    audit_probes(replicate.probes, replicate.plans, replicate.turns)


def test_evidence_in_a_noise_session_fails(replicate: WorldReplicate):
    probe = _first(replicate, probe_type="recall", subtype="fact")
    noise = next(
        p.session_index
        for p in replicate.plans
        if p.tier == "noise" and p.session_index < probe.checkpoint
    )
    broken = dataclasses.replace(probe, evidence_sessions=(noise,))
    with pytest.raises(AuditError, match="noise session"):
        _audit(replicate, broken)


def test_evidence_after_the_checkpoint_fails(replicate: WorldReplicate):
    probe = _first(replicate, probe_type="recall", subtype="fact", checkpoint=20)
    broken = dataclasses.replace(probe, evidence_sessions=(25,))
    with pytest.raises(AuditError, match="not before the checkpoint"):
        _audit(replicate, broken)


def test_no_evidence_fails(replicate: WorldReplicate):
    probe = _first(replicate, polarity="positive")
    with pytest.raises(AuditError, match="no evidence"):
        _audit(replicate, dataclasses.replace(probe, evidence_sessions=()))


def test_an_answer_that_was_never_said_fails(replicate: WorldReplicate):
    probe = _first(replicate, probe_type="recall", subtype="fact")
    broken = dataclasses.replace(probe, evidence_terms=("Quetzalcoatl Holdings",))
    with pytest.raises(AuditError, match="never expressed"):
        _audit(replicate, broken)


def test_evidence_pointing_at_another_events_session_fails(replicate: WorldReplicate):
    probe = _first(replicate, probe_type="recall", subtype="fact", checkpoint=40)
    other = next(
        plan.session_index
        for plan in replicate.plans
        if plan.event is not None
        and plan.session_index < 40
        and plan.event.value != probe.answer
        and not any(alias in plan.event.value for alias in probe.aliases)
    )
    with pytest.raises(AuditError, match="never expressed"):
        _audit(replicate, dataclasses.replace(probe, evidence_sessions=(other,)))


def test_the_audit_reports_how_many_failed(replicate: WorldReplicate):
    positives = [p for p in replicate.probes if p.polarity == "positive"][:7]
    broken = [dataclasses.replace(p, evidence_sessions=()) for p in positives]
    with pytest.raises(AuditError, match=r"^7 probe\(s\) failed") as error:
        audit_probes(broken, replicate.plans, replicate.turns)
    assert str(error.value).count("no evidence") == 5  # the first five are listed
