"""What registrations declare: needs (packages, a model, a cache) and per-scenario defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from drift_pipeline.memory.backends import (
    COMPRESSOR_MODEL_ENV,
    BackendNeeds,
    FullContextBackend,
    LLMAccess,
    Package,
    _registry,
    backend_needs,
    backend_registration,
    get_backend_factory,
    load_backend,
    register_backend,
    resolve_backend_options,
)
from drift_pipeline.sources import ScenarioSource, WorldSource

from ..plugins import _support

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
GOOD = f"{__name__}:Minimal"
LLM_VARIABLES = ("DRIFT_LLM_BASE_URL", "DRIFT_LLM_MODEL", COMPRESSOR_MODEL_ENV)


class Minimal:
    """A backend that keeps nothing, for registrations made in these tests."""

    version = "0"

    def __init__(self, budget_tokens: int = 1) -> None:
        self.budget_tokens = budget_tokens

    async def store(self, session_id: str, messages: list[Any]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return ""

    def token_counts(self) -> Any:
        from drift_pipeline.memory import TokenCounts

        return TokenCounts()

    def snapshot(self) -> str:
        return ""


def budget_from_replicates(source: WorldSource) -> dict[str, Any]:
    return {"budget_tokens": source.replicates * 100}


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private copy of the registry: registrations made in a test stay in it."""
    monkeypatch.setattr(_registry, "_BACKENDS", _registry._BACKENDS.copy())


@pytest.fixture
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> WorldSource:
    folder = tmp_path_factory.mktemp("needs")
    return ScenarioSource.load(_support.write_scenario(folder, "needs-t"))


def _one_line(error: pytest.ExceptionInfo[ValueError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.usefixtures("registry")
def test_a_missing_package_is_one_line_naming_the_extra_to_install():
    register_backend(
        "needs_missing",
        GOOD,
        needs=BackendNeeds(packages=(Package("no_such_dependency_xyz", "my-adapter[server]"),)),
    )
    for attempt in (
        lambda: load_backend("needs_missing"),
        lambda: get_backend_factory("needs_missing"),
        lambda: backend_needs("needs_missing").check("needs_missing"),
    ):
        with pytest.raises(ValueError) as caught:
            attempt()
        message = _one_line(caught)
        assert "'needs_missing' needs the package(s) 'no_such_dependency_xyz'" in message
        assert message.endswith("pip install 'my-adapter[server]'")


@pytest.mark.usefixtures("registry")
def test_an_installed_package_passes_and_the_target_is_imported_on_build():
    register_backend("needs_present", GOOD, needs=BackendNeeds(packages=(Package("json", "x"),)))
    assert isinstance(load_backend("needs_present", {"budget_tokens": 5}), Minimal)
    assert backend_registration("needs_present").target_path == GOOD


@pytest.mark.usefixtures("registry")
def test_a_defaults_hook_fills_options_the_config_leaves_out(small: WorldSource):
    register_backend("defaulted", GOOD, defaults=f"{__name__}:budget_from_replicates")
    assert resolve_backend_options("defaulted", small) == {
        "budget_tokens": _support.REPLICATES * 100
    }
    assert resolve_backend_options("defaulted", small, {"budget_tokens": 7}) == {"budget_tokens": 7}


def test_full_context_budget_defaults_to_the_smallest_assistant_window(small: WorldSource):
    assert resolve_backend_options("full_context", small) == {"budget_tokens": 32000}
    two = ScenarioSource.load(SCENARIOS / "ua-two-assistants-mixed-010.yaml")
    windows = [
        e.capability_profile.context_window
        for e in two.loaded.spec.entities
        if e.type == "assistant_agent"
    ]
    assert len(set(windows)) > 1
    assert resolve_backend_options("full_context", two) == {"budget_tokens": min(windows)}
    assert resolve_backend_options("full_context", two, {"budget_tokens": 9}) == {
        "budget_tokens": 9
    }
    backend = load_backend("full_context", resolve_backend_options("full_context", small))
    # Built through the scoping layer: each entity's memory is a FullContextBackend.
    assert type(backend).inner is FullContextBackend  # type: ignore[attr-defined]
    assert backend.budget_tokens == 32000  # type: ignore[attr-defined]


def test_other_built_ins_and_import_paths_get_the_configured_options_only(small: WorldSource):
    for name in ("amnesiac", "bm25", "fact_store", "reference_compressor", "temporal_graph"):
        assert resolve_backend_options(name, small) == {}
    assert resolve_backend_options("bm25", small, {"top_k": 3}) == {"top_k": 3}
    assert resolve_backend_options(GOOD, small, {"budget_tokens": 2}) == {"budget_tokens": 2}
    assert backend_needs(GOOD) == BackendNeeds()
    # A name no registration has (a backend object's arm, say) declares nothing either.
    assert backend_needs("not_registered_anywhere", {"x": 1}) == BackendNeeds()
    with pytest.raises(ValueError, match="unknown backend 'not_registered_anywhere'"):
        resolve_backend_options("not_registered_anywhere", small)


def test_the_extractive_compressor_needs_nothing():
    needs = backend_needs("reference_compressor", {})
    assert needs == BackendNeeds() and needs.worker_env == () and not needs.cache


def test_the_llm_compressor_gets_endpoint_and_model_from_the_environment(
    small: WorldSource, monkeypatch: pytest.MonkeyPatch, no_llm_env: None
):
    monkeypatch.setenv("DRIFT_LLM_BASE_URL", " http://127.0.0.1:9/v1 ")
    monkeypatch.setenv("DRIFT_LLM_MODEL", "general-model")
    configured = {"summariser": "llm"}
    options = resolve_backend_options("reference_compressor", small, configured)
    assert options == {
        "summariser": "llm",
        "llm_base_url": "http://127.0.0.1:9/v1",
        "llm_model": "general-model",
    }
    assert configured == {"summariser": "llm"}  # the run's config is not changed in place
    monkeypatch.setenv(COMPRESSOR_MODEL_ENV, "compressor-model")
    options = resolve_backend_options("reference_compressor", small, configured)
    assert options["llm_model"] == "compressor-model"
    given = {**configured, "llm_model": "mine", "llm_base_url": "http://x/v1"}
    assert resolve_backend_options("reference_compressor", small, given) == given
    needs = backend_needs("reference_compressor", options)
    assert needs.worker_env == ("DRIFT_LLM_API_KEY",) and needs.cache and needs.llm is not None


@pytest.mark.parametrize(
    ("present", "message"),
    [
        (
            {},
            "reference_compressor summariser llm: DRIFT_LLM_BASE_URL is not set "
            "(or give llm_base_url in the backend config)",
        ),
        (
            {"DRIFT_LLM_BASE_URL": "http://127.0.0.1:9/v1", "DRIFT_LLM_MODEL": "  "},
            "reference_compressor summariser llm: DRIFT_LLM_MODEL is not set "
            "(or give llm_model in the backend config)",
        ),
    ],
)
def test_the_llm_compressor_without_its_variables_is_one_line(
    small: WorldSource,
    monkeypatch: pytest.MonkeyPatch,
    no_llm_env: None,
    present: dict[str, str],
    message: str,
):
    for name, value in present.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError) as caught:
        resolve_backend_options("reference_compressor", small, {"summariser": "llm"})
    assert _one_line(caught) == message


@pytest.mark.usefixtures("registry")
def test_a_needs_hook_sees_the_options_and_may_add_variables(small: WorldSource):
    def needs(options: Any) -> BackendNeeds:
        if options.get("remote"):
            return BackendNeeds(env=("MY_SERVICE_TOKEN",), network=True)
        return BackendNeeds()

    register_backend("hooked", GOOD, needs=needs)
    assert backend_needs("hooked", {}) == BackendNeeds()
    remote = backend_needs("hooked", {"remote": True})
    assert remote.worker_env == ("MY_SERVICE_TOKEN",) and remote.network
    register_backend("badly_hooked", GOOD, needs=lambda options: {"llm": True})
    with pytest.raises(ValueError, match="needs hook returned dict, expected BackendNeeds"):
        backend_needs("badly_hooked")


def test_an_llm_backend_passes_the_key_once_next_to_its_own_variables():
    needs = BackendNeeds(llm=LLMAccess(), env=("DRIFT_LLM_API_KEY", "EXTRA"))
    assert needs.worker_env == ("DRIFT_LLM_API_KEY", "EXTRA")


@pytest.mark.usefixtures("registry")
def test_registrations_guard_names_targets_and_clashes():
    with pytest.raises(ValueError, match=r"'not a path' is not 'package\.module:Name'"):
        register_backend("bad_target", "not a path")
    with pytest.raises(ValueError, match=r"already registered to drift_pipeline\.memory\.backends"):
        register_backend("bm25", GOOD)
    registration = register_backend("lazy_one", GOOD, default_arm=True)
    assert register_backend("lazy_one", GOOD, default_arm=True) == registration
    with pytest.raises(ValueError, match=f"already registered to {GOOD}"):
        register_backend("lazy_one", GOOD)  # the same class, but not a default arm
    # A class registered by object and by its import path is the same registration.
    register_backend("by_object", Minimal)
    register_backend("by_object", GOOD)
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_xyz'"):
        register_backend("unimportable", "no_such_module_xyz:Backend")
        load_backend("unimportable")
