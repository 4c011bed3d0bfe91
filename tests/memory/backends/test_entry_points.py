"""Entry-point discovery (``drift_pipeline.backends``, ``drift_pipeline.gates``) against
distributions on ``sys.path``.

Each test writes a distribution's metadata (``*.dist-info`` with ``entry_points.txt``) and its
module into a folder put on ``sys.path``: what an installed package looks like to
``importlib.metadata``. The real ``pip install`` path is in ``test_installed_plugin.py``.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drift_pipeline.memory import GATE_ENTRY_POINT_GROUP, Arm, Gate, _gates, gate_kinds
from drift_pipeline.memory.backends import (
    ENTRY_POINT_GROUP,
    BackendRegistration,
    _registry,
    backend_names,
    backend_registration,
    default_backend_names,
    load_backend,
    resolve_backend_options,
)
from drift_pipeline.scenario import load_scenario

from ..plugins import _support

MODULE = """
from drift_pipeline.memory import TokenCounts
from drift_pipeline.memory import GateRegistration, GateStrategy
from drift_pipeline.memory.backends import BackendRegistration


class Kept:
    version = "1"

    def __init__(self, size: int = 1) -> None:
        self.size = size

    async def store(self, session_id, messages):
        return None

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        return ""


def size_from_scenario(loaded):
    return {{"size": loaded.spec.replicates}}


REGISTERED = BackendRegistration(
    "{prefix}_registered", "{module}:Kept", defaults="{module}:size_from_scenario"
)
class Forgetful(GateStrategy):
    def backend_messages(self, messages, timestamp):
        return []


GATE = GateRegistration("{prefix}gate", "{module}:Forgetful", size_name="M")
MISKINDED = GateRegistration("{prefix}other", "{module}:Forgetful")
MISNAMED = BackendRegistration("{prefix}_other_name", "{module}:Kept")
DEFAULT = BackendRegistration("{prefix}_default", "{module}:Kept", default_arm=True)
NOT_A_BACKEND = 42
"""

Install = Callable[..., str]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """Make ``install({name: value})`` a distribution of this test; returns its module name."""
    monkeypatch.setattr(_registry, "_BACKENDS", _registry._BACKENDS.copy())
    monkeypatch.setattr(_gates, "_GATES", _gates._GATES.copy())
    prefix = f"ep{abs(hash(tmp_path)) % 10**8}"
    module = f"{prefix}_adapter"

    def write(entries: dict[str, str], group: str = ENTRY_POINT_GROUP) -> str:
        site = tmp_path / "site"
        (site / module).mkdir(parents=True)
        (site / module / "__init__.py").write_text(
            MODULE.format(prefix=prefix, module=module), encoding="utf-8"
        )
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8"
        )
        lines = "".join(
            f"{name.format(prefix=prefix)} = {value.format(module=module)}\n"
            for name, value in entries.items()
        )
        (info / "entry_points.txt").write_text(f"[{group}]\n{lines}", encoding="utf-8")
        monkeypatch.syspath_prepend(str(site))
        return prefix

    yield write
    sys.modules.pop(module, None)


def test_a_plain_class_is_found_by_name_and_is_no_default_arm(install: Install):
    prefix = install({"{prefix}_plain": "{module}:Kept"})
    name = f"{prefix}_plain"
    assert name in backend_names()
    assert name not in default_backend_names()
    backend = load_backend(name, {"size": 4})
    assert type(backend).__name__ == "Kept" and backend.size == 4  # type: ignore[attr-defined]
    registration = backend_registration(name)
    assert registration.target_path == f"{prefix}_adapter:Kept"
    assert backend_registration(name) is registration  # loaded once


def test_a_registration_object_brings_its_defaults(install: Install, tmp_path: Path):
    prefix = install({"{prefix}_registered": "{module}:REGISTERED"})
    loaded = load_scenario(_support.write_scenario(tmp_path / "scenarios", "ep-t"))
    registration = backend_registration(f"{prefix}_registered")
    assert isinstance(registration, BackendRegistration)
    assert resolve_backend_options(f"{prefix}_registered", loaded) == {"size": _support.REPLICATES}


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("bad", "{module}:MISNAMED", "the registration it names is called"),
        ("default", "{module}:DEFAULT", "an installed backend runs when named; set default_arm"),
        ("bad", "{module}:NOT_A_BACKEND", "neither a backend class or factory nor a Backend"),
        ("bad", "{module}:Missing", "has no attribute 'Missing'"),
        (
            "bad",
            "no_such_module_xyz:Backend",
            "cannot import module 'no_such_module_xyz' (No module named 'no_such_module",
        ),
    ],
)
def test_a_bad_entry_point_is_one_line_naming_it(
    install: Install, name: str, value: str, expected: str
):
    prefix = install({f"{{prefix}}_{name}": value})
    with pytest.raises(ValueError) as caught:
        load_backend(f"{prefix}_{name}")
    message = str(caught.value)
    assert "\n" not in message
    assert expected in message
    assert f"entry point {prefix}_{name} = " in message
    assert f"of {prefix}_adapter ({ENTRY_POINT_GROUP})" in message


def test_an_entry_point_cannot_take_a_registered_name(install: Install):
    install({"bm25": "{module}:Kept"})
    with pytest.raises(ValueError) as caught:
        backend_names()
    message = str(caught.value)
    assert "entry point bm25 = " in message
    held = "already registered by code to drift_pipeline.memory.backends.bm25:BM25Backend"
    assert held in message


def test_an_invalid_entry_point_name_is_refused(install: Install):
    install({"Bad-Name": "{module}:Kept"})
    with pytest.raises(ValueError, match="the name is invalid"):
        backend_names()


def test_built_in_look_ups_never_read_entry_points(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_registry, "_BACKENDS", _registry._BACKENDS.copy())

    def refuse(**_: object) -> object:
        raise AssertionError("entry points were read")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    assert len(default_backend_names()) == 7
    assert type(load_backend("amnesiac")).__name__ == "AmnesiacBackend"
    assert backend_registration("bm25").default_arm


def test_an_installed_gate_variant_parses_by_its_kind(install: Install):
    prefix = install({"{prefix}gate": "{module}:GATE"}, GATE_ENTRY_POINT_GROUP)
    assert gate_kinds()[:3] == ["hard", "soft", "summary"]
    assert f"{prefix}gate" in gate_kinds()
    arm = Arm.parse(f"bm25@{prefix}gate:3")
    assert str(arm.gate) == f"{prefix}gate:3"
    assert type(arm.gate.strategy()).__name__ == "Forgetful"
    with pytest.raises(ValueError, match=f"{prefix}gate:M"):
        Gate.parse("bogus")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{module}:MISKINDED", "the registration it names is of kind"),
        ("{module}:Forgetful", "Forgetful'> is not a GateRegistration"),
        (
            "no_such_module_xyz:GATE",
            "cannot import module 'no_such_module_xyz' (No module named 'no_such_module_xyz')",
        ),
    ],
)
def test_a_bad_gate_entry_point_is_one_line_naming_it(install: Install, value: str, expected: str):
    prefix = install({"{prefix}gate": value}, GATE_ENTRY_POINT_GROUP)
    with pytest.raises(ValueError) as caught:
        Gate.parse(f"{prefix}gate:2")
    message = str(caught.value)
    assert "\n" not in message and expected in message
    assert f"entry point {prefix}gate = " in message and GATE_ENTRY_POINT_GROUP in message


def test_built_in_gates_never_read_entry_points(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_gates, "_GATES", _gates._GATES.copy())

    def refuse(**_: object) -> object:
        raise AssertionError("entry points were read")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    assert [str(Gate.parse(t)) for t in ("hard", "soft:2", "summary:64")] == [
        "hard",
        "soft:2",
        "summary:64",
    ]
