"""Paradigm generators: the world generator dispatches on a scenario's paradigm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import CODING, HABIT_LOOP, tree_bytes, write_entry_point, write_scenario

from drift_pipeline._lazy import Registry, RegistryError
from drift_pipeline.scenario import load_scenario
from drift_pipeline.world import (
    PARADIGM_GROUP,
    GenerationUnsupported,
    check_supported,
    generate_replicate,
    generate_worlds,
    paradigm_generator,
    paradigm_names,
    register_paradigm,
    unregister_paradigm,
)
from drift_pipeline.world import _paradigms as paradigms_module
from drift_pipeline.world._generate import generate_user_assistant


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Registry[Any]:
    """An empty paradigm registry in place of the real one (entry points read anew)."""
    fresh: Registry[Any] = Registry("paradigm", PARADIGM_GROUP, paradigms_module._generator)
    monkeypatch.setattr(paradigms_module, "_PARADIGMS", fresh)
    return fresh


def test_user_assistant_and_multi_peer_are_registered_lazily() -> None:
    assert paradigm_names() == ["multi_peer", "user_assistant"]
    assert paradigm_generator("user_assistant") is generate_user_assistant
    assert paradigm_generator("coding_agent") is None


def test_an_unregistered_paradigm_is_one_line(tmp_path: Path) -> None:
    spec = load_scenario(write_scenario(tmp_path, CODING)).spec
    with pytest.raises(GenerationUnsupported) as caught:
        check_supported(spec)
    assert str(caught.value) == (
        "scenario test-coding-x: paradigm 'coding_agent' validates, but world generation "
        "supports only multi_peer, user_assistant so far"
    )


def test_a_registered_paradigm_passes_the_paradigm_check(tmp_path: Path) -> None:
    spec = load_scenario(write_scenario(tmp_path, CODING)).spec
    register_paradigm("coding_agent", "drift_pipeline.world._generate:generate_user_assistant")
    try:
        assert paradigm_names() == ["coding_agent", "multi_peer", "user_assistant"]
        # Past the paradigm, the entity types are checked: coding agents are simulated.
        check_supported(spec)
    finally:
        unregister_paradigm("coding_agent")
    assert paradigm_names() == ["multi_peer", "user_assistant"]


def test_generation_goes_through_the_registered_generator(
    tmp_path: Path, fresh_registry: Registry[Any]
) -> None:
    path = write_scenario(tmp_path / "scenarios", HABIT_LOOP)
    register_paradigm("user_assistant", generate_user_assistant)
    generate_worlds([load_scenario(path)], tmp_path / "direct", workers=1)
    fresh_registry.unregister("user_assistant")
    calls: list[tuple[str, int]] = []

    def recording(spec: Any, horizon: Any, replicate: int, synthesizer: Any) -> Any:
        calls.append((horizon, replicate))
        return generate_user_assistant(spec, horizon, replicate, synthesizer)

    register_paradigm("user_assistant", recording)
    generate_worlds([load_scenario(path)], tmp_path / "dispatched", workers=1)
    assert calls == [("short", 0), ("short", 1)]
    assert tree_bytes(tmp_path / "dispatched") == tree_bytes(tmp_path / "direct")
    fresh_registry.unregister("user_assistant")
    with pytest.raises(GenerationUnsupported, match="supports only none so far"):
        generate_replicate(load_scenario(path).spec, "short", 0)


def test_an_installed_package_registers_a_paradigm_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: Registry[Any]
) -> None:
    write_entry_point(
        tmp_path,
        PARADIGM_GROUP,
        "user_assistant",
        "drift_pipeline.world._generate:generate_user_assistant",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert paradigm_names() == ["user_assistant"]
    assert paradigm_generator("user_assistant") is generate_user_assistant


def test_a_target_that_is_not_a_function_is_refused(fresh_registry: Registry[Any]) -> None:
    register_paradigm("user_assistant", "drift_pipeline.world._paradigms:PARADIGM_GROUP")
    with pytest.raises(RegistryError, match=r"paradigm 'user_assistant': .* is not callable"):
        paradigm_generator("user_assistant")
