"""The versioned synthesis prompts: shipped with the package, constrained by profile and event."""

from __future__ import annotations

import hashlib
import random
from importlib import resources
from pathlib import Path

import pytest
from helpers import COMMUTER, HABIT_LOOP, write_scenario

from drift_pipeline.entities import get_entity_type
from drift_pipeline.llm import LLMClient, LLMConfig
from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import SessionPlan, generate_replicate, rng_for
from drift_pipeline.world._generate import _advance
from drift_pipeline.world.synthesis import LLMSynthesizer, SessionContext, TemplateSynthesizer
from drift_pipeline.world.synthesis._prompt import (
    _PROMPT_FILES,
    EXCHANGES,
    PROMPT_VERSION,
    build_prompt,
    full_prompt_version,
    principal_of,
    prompt_sha256,
)


def _sessions(tmp_path: Path, text: str) -> list[tuple[SessionPlan, SessionContext]]:
    spec = load_scenario(write_scenario(tmp_path, text)).spec
    world = generate_replicate(spec, "short", 0)
    by_id = {p.entity_id: p for p in world.profiles}
    current = {(p.entity_id, s): (str(v),) for p in world.profiles for s, v in p.initial.items()}
    out = []
    for plan in world.plans:
        out.append((plan, SessionContext(by_id, dict(current), rng_for(plan.session_index))))
        _advance(current, by_id, plan.event)
    return out


def test_prompt_files_ship_with_the_package_and_version_the_prompt() -> None:
    folder = resources.files("drift_pipeline.world.synthesis") / "prompts"
    digest = hashlib.sha256()
    for name in _PROMPT_FILES:
        text = (folder / name).read_text(encoding="utf-8")
        assert text.strip()
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    assert prompt_sha256() == digest.hexdigest()
    assert full_prompt_version() == f"{PROMPT_VERSION}+{digest.hexdigest()[:12]}"


def test_event_prompts_carry_the_change_and_every_accepted_phrase(tmp_path: Path) -> None:
    seen = set()
    for plan, context in _sessions(tmp_path, COMMUTER):
        human = principal_of(plan, context)
        assert human is not None
        prompt = build_prompt(plan, context, human)
        user = prompt.messages[1]["content"]
        assert human.name in user
        assert f"Exchanges to write: {prompt.exchanges}" in user
        if plan.event is None:
            assert "Nothing about" in user and "exact phrases" not in user
            seen.add("noise")
            continue
        event = plan.event
        subject = context.profiles[event.subject]
        value = get_entity_type(subject.entity_type).slot(event.slot).value(event.value)
        assert all(f'"{alias}"' in user for alias in value.all_aliases())
        assert f'"{event.value}"' in user
        if event.previous_value:
            assert f'(it was "{event.previous_value}")' in user
        seen.add(event.tier)
    assert seen == {"noise", "signal", "soft"}


def test_prompt_follows_style_and_state_and_leaves_the_rng_alone(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path, HABIT_LOOP)  # terse, casual
    low, high = EXCHANGES["terse"]
    for plan, context in sessions:
        human = principal_of(plan, context)
        assert human is not None
        state = context.rng.getstate()
        prompt = build_prompt(plan, context, human)
        assert context.rng.getstate() == state  # the template fallback gets an untouched rng
        assert prompt == build_prompt(plan, context, human)  # reproducible
        assert low <= prompt.exchanges <= high
        assert prompt.max_turns == 2 * (prompt.exchanges + 2)
        user = prompt.messages[1]["content"]
        assert "terse verbosity, casual formality" in user
        for (subject, slot), values in context.current.items():
            if subject == human.entity_id and "/" not in slot:
                assert all(value in user for value in values)


def test_a_retry_says_why_and_which_attempt(tmp_path: Path) -> None:
    plan, context = _sessions(tmp_path, COMMUTER)[0]
    human = principal_of(plan, context)
    assert human is not None
    first = build_prompt(plan, context, human)
    second = build_prompt(plan, context, human, "reply is not JSON", attempt=1)
    third = build_prompt(plan, context, human, "reply is not JSON", attempt=2)
    assert "rejected" not in first.messages[1]["content"]
    assert (
        "Attempt 2: an earlier draft was rejected: reply is not JSON"
        in second.messages[1]["content"]
    )
    assert second.messages != third.messages  # a deterministic endpoint must see a new prompt
    assert first.messages[0] == second.messages[0]


def test_pin_names_model_and_prompt_never_key_or_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFT_LLM_API_KEY", "sk-never-pinned")
    config = LLMConfig(base_url="http://user:pw@llm.example:8000/v1", model="writer-1")
    synthesizer = LLMSynthesizer(LLMClient(config, None), max_attempts=2)
    pin = synthesizer.pin()
    assert pin == {
        "model": "writer-1",
        "temperature": "0.0",
        "prompt_version": full_prompt_version(),
        "max_attempts": "2",
        "fallback": "template@4",
        "fallback_phrasing_split": "public",
    }
    assert "sk-never-pinned" not in repr(synthesizer)
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        LLMSynthesizer(LLMClient(config, None), max_attempts=0)


def test_sessions_without_a_person_are_templated_without_a_request(tmp_path: Path) -> None:
    plan, context = _sessions(tmp_path, COMMUTER)[0]
    agents_only = SessionPlan(
        plan.session_index, plan.sim_time, "noise", ("assistant",), plan.pattern, None
    )
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
    synthesizer = LLMSynthesizer(LLMClient(config, None))
    turns = synthesizer.session(agents_only, SessionContext(context.profiles, {}, random.Random(1)))
    assert turns and all(t.speaker == "assistant" for t in turns)
    assert synthesizer.client.usage.requests == 0
    assert synthesizer.take_fallbacks() == []


def test_a_script_puts_the_grammars_plan_into_the_prompt(tmp_path: Path) -> None:
    synthesizer = TemplateSynthesizer()
    checked = 0
    for plan, context in _sessions(tmp_path, COMMUTER):
        human = principal_of(plan, context)
        assert human is not None
        state = context.rng.getstate()
        script = synthesizer.script(plan, context)
        context.rng.setstate(state)
        # The script is the session the grammar writes: the same draws, the same turns.
        assert script.turns == synthesizer.session(plan, context)
        context.rng.setstate(state)
        user = build_prompt(plan, context, human, script=script).messages[1]["content"]
        plain = build_prompt(plan, context, human).messages[1]["content"]
        assert "Plan for this conversation" not in plain
        if plan.event is not None:
            assert script.planned[0].role == "event"
        for item in script.planned:
            assert f'"{item.text}"' in user
            checked += 1
    assert checked > 20
