from __future__ import annotations

import pytest

from drift_pipeline.memory._protocol import CountsOwnStorage, MemoryBackend, Message, TokenCounts
from drift_pipeline.memory.backends import (
    AmnesiacBackend,
    BM25Backend,
    _registry,
    backend_names,
    default_backend_names,
    get_backend_factory,
    load_backend,
    register_backend,
)
from drift_pipeline.tokens import count_tokens_lines

from ._sessions import NOISE, chat, run

BUILT_IN = [
    "amnesiac",
    "bm25",
    "fact_store",
    "full_context",
    "reference_compressor",
    "sentence_log",
    "temporal_graph",
]


class GoodBackend:
    """A minimal third-party backend, loaded by import path in these tests."""

    name = "good"
    version = "0"

    def __init__(self, depth: int = 1) -> None:
        self.depth = depth

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        return ""

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""


class NoRetrieve:
    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""


class SyncStore(GoodBackend):
    def store(self, session_id: str, messages: list[Message]) -> None:  # type: ignore[override]
        return None


NOT_A_CLASS = 42


def test_all_built_ins_are_registered() -> None:
    assert set(BUILT_IN) <= set(backend_names())
    assert backend_names() == sorted(backend_names())


def test_the_default_arms_are_exactly_the_built_ins() -> None:
    assert default_backend_names() == BUILT_IN


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_ins_load_by_name_and_follow_the_protocol(name: str) -> None:
    backend = load_backend(name, {})
    assert isinstance(backend, MemoryBackend)
    cls = type(backend)
    assert cls.name == name  # type: ignore[attr-defined]
    assert isinstance(cls.version, str) and cls.version  # type: ignore[attr-defined]
    assert cls.__doc__
    assert get_backend_factory(name) is cls


def test_options_reach_the_constructor() -> None:
    backend = load_backend("bm25", {"top_k": 3})
    # Built through the scoping layer: each entity's memory is a BM25Backend(top_k=3).
    assert type(backend).inner is BM25Backend  # type: ignore[attr-defined]
    assert isinstance(load_backend("  amnesiac ", None), AmnesiacBackend)


def test_import_path_loads_any_class_with_options() -> None:
    backend = load_backend(f"{__name__}:GoodBackend", {"depth": 5})
    assert isinstance(backend, GoodBackend)
    assert backend.depth == 5


def _one_line_error(spec: str, options: dict[str, object] | None = None) -> str:
    with pytest.raises(ValueError) as caught:
        load_backend(spec, options or {})
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_unknown_name_lists_the_known_ones() -> None:
    message = _one_line_error("no_such_memory")
    assert "unknown backend 'no_such_memory'" in message
    for name in BUILT_IN:
        assert name in message
    assert "package.module:ClassName" in message


@pytest.mark.parametrize("spec", ["", "Bad Name"])
def test_malformed_names_are_refused(spec: str) -> None:
    assert "malformed" in _one_line_error(spec)


@pytest.mark.parametrize("spec", ["a:b:c", ":Cls", "module:", "pkg.mod:1x"])
def test_malformed_import_paths_are_refused(spec: str) -> None:
    assert _one_line_error(spec) == f"backend {spec!r}: {spec!r} is not 'package.module:Name'"


def test_missing_module_is_named() -> None:
    message = _one_line_error("no_such_package_xyz.memory:Backend")
    assert "cannot import module 'no_such_package_xyz.memory'" in message


def test_missing_class_is_named() -> None:
    message = _one_line_error(f"{__name__}:Missing")
    assert "has no attribute 'Missing'" in message


def test_non_callable_attribute_is_refused() -> None:
    assert "not a class or factory" in _one_line_error(f"{__name__}:NOT_A_CLASS")


def test_class_without_protocol_methods_is_refused() -> None:
    message = _one_line_error(f"{__name__}:NoRetrieve")
    assert "lacks MemoryBackend method(s) retrieve" in message


def test_class_with_sync_store_is_refused() -> None:
    assert "must define store with 'async def'" in _one_line_error(f"{__name__}:SyncStore")


def test_unknown_option_is_refused_in_one_line() -> None:
    message = _one_line_error("bm25", {"top_n": 3})
    assert "rejects options ['top_n']" in message


def test_bad_option_value_is_a_value_error() -> None:
    assert "top_k must be >= 1" in _one_line_error("bm25", {"top_k": 0})


def test_register_is_idempotent_and_guards_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # A private copy: registrations made here must not leak into other tests' backend lists.
    monkeypatch.setattr(_registry, "_BACKENDS", _registry._BACKENDS.copy())
    assert register_backend("good_test_backend", GoodBackend) is GoodBackend
    assert register_backend("good_test_backend")(GoodBackend) is GoodBackend
    assert get_backend_factory("good_test_backend") is GoodBackend
    with pytest.raises(ValueError, match="already registered to"):
        register_backend("good_test_backend", SyncStore)
    with pytest.raises(ValueError, match="invalid"):
        register_backend("Not-Valid", GoodBackend)
    with pytest.raises(ValueError, match="already registered"):
        register_backend("bm25", GoodBackend)


def test_registry_copy_was_restored() -> None:
    assert "good_test_backend" not in backend_names()


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_built_in_that_counts_its_own_storage_counts_what_its_snapshot_holds(name: str):
    """``storage_tokens()`` replaces the snapshot count between checkpoints, so it must equal
    it after every store, including lines with breaks inside and sessions that add nothing."""
    backend = load_backend(name, {})
    if not isinstance(backend, CountsOwnStorage):
        pytest.skip(f"{name} lets the harness count its snapshot")
    sessions = [
        *NOISE,
        chat("2027-04-01", "I moved to Porto.\nLine two of the same message.", "Ok.\n\n"),
        [],
        chat("2027-04-02", "I work at Globex now.", helper="assistant_b"),
    ]
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot()) == 0
    for number, messages in enumerate(sessions):
        # Stored as the harness does, for the one entity asked in a single-principal world.
        run(backend.store(f"s{number}", messages, entity_id="assistant"))  # type: ignore[call-arg]
        assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())
    # With a second entity's memory (its lines sorted before the first's): the joined snapshot.
    run(backend.store("s9", sessions[0], entity_id="planner"))  # type: ignore[call-arg]
    assert isinstance(backend, CountsOwnStorage)
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())
    run(backend.store("s10", sessions[3], entity_id="assistant"))  # type: ignore[call-arg]
    assert backend.storage_tokens() == count_tokens_lines(backend.snapshot())
