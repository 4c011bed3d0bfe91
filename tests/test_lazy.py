"""The one registry: import paths resolved on first use, one error line for a bad one in every
registry, one rule for a name registered twice, installed entries by entry point."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from drift_pipeline._lazy import Registry, RegistryError, callable_entry, resolve_target
from drift_pipeline.evaluation import MetricSpec
from drift_pipeline.memory import _gates
from drift_pipeline.memory.backends import _registry as backends
from drift_pipeline.memory.backends import load_backend, register_backend
from drift_pipeline.sources import _registry as sources
from drift_pipeline.world import _paradigms as paradigms
from drift_pipeline.world.probe_families import _registry as families

MISSING = "no_such_module_xyz"
NOT_IMPORTABLE = f"cannot import module '{MISSING}' (No module named '{MISSING}')"


@pytest.fixture
def private(monkeypatch: pytest.MonkeyPatch) -> None:
    """Private copies of the registries the tests below register in."""
    monkeypatch.setattr(backends, "_BACKENDS", backends._BACKENDS.copy())
    monkeypatch.setattr(_gates, "_GATES", _gates._GATES.copy())
    monkeypatch.setattr(families, "_FAMILIES", families._FAMILIES.copy())
    monkeypatch.setattr(paradigms, "_PARADIGMS", paradigms._PARADIGMS.copy())
    monkeypatch.setattr(sources, "_SOURCES", sources._SOURCES.copy())


def _backend() -> object:
    register_backend("lost", f"{MISSING}:Backend")
    return load_backend("lost")


def _gate() -> object:
    return _gates.register_gate("lost", f"{MISSING}:Gate").strategy(0)


def _family() -> object:
    families.register_probe_family("lost", f"{MISSING}:FAMILY")
    return families.get_probe_family("lost")


def _paradigm() -> object:
    paradigms.register_paradigm("lost", f"{MISSING}:generate")
    return paradigms.paradigm_generator("lost")


def _source() -> object:
    sources.register_source("lost", f"{MISSING}:open_lost")
    return sources._SOURCES.get("lost")


def _metric() -> object:
    spec = MetricSpec(
        name="lost",
        label="Lost",
        unit="share",
        direction="higher",
        description="A metric whose module is gone",
        compute=f"{MISSING}:lost",
    )
    return spec.computation()


@pytest.mark.usefixtures("private")
@pytest.mark.parametrize(
    ("look_up", "what"),
    [
        (_backend, "backend 'lost'"),
        (_gate, "gate 'lost'"),
        (_family, "probe family 'lost'"),
        (_paradigm, "paradigm 'lost'"),
        (_source, "source 'lost'"),
        (_metric, "metric 'lost' compute"),
    ],
)
def test_a_bad_import_path_is_the_same_line_in_every_registry(
    look_up: Callable[[], object], what: str
) -> None:
    with pytest.raises(RegistryError) as caught:
        look_up()
    assert str(caught.value) == f"{what}: {NOT_IMPORTABLE}"
    # The import's own error stays attached (a worker reports its file and line from it).
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_every_path_error_is_one_line_and_caught_as_key_and_value_errors() -> None:
    for target, expected in [
        ("no colon", "thing 'x': 'no colon' is not 'package.module:Name'"),
        (f"{MISSING}:X", f"thing 'x': {NOT_IMPORTABLE}"),
        ("drift_pipeline._lazy:Nope.deeper", "module 'drift_pipeline._lazy' has no attribute"),
    ]:
        with pytest.raises(RegistryError) as caught:
            resolve_target(target, "thing 'x'")
        assert expected in str(caught.value) and "\n" not in str(caught.value)
        assert isinstance(caught.value, KeyError) and isinstance(caught.value, ValueError)
    assert resolve_target("drift_pipeline._lazy:Registry.get", "x") is Registry.get


def test_a_module_that_raises_while_imported_is_named_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "raises_on_import.py").write_text("raise RuntimeError('no server')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RegistryError) as caught:
        resolve_target("raises_on_import:X", "backend 'x'")
    assert str(caught.value) == (
        "backend 'x': cannot import module 'raises_on_import' (RuntimeError: no server)"
    )
    assert isinstance(caught.value.__cause__, RuntimeError)


def _things() -> Registry[Callable[..., object]]:
    return Registry("thing", "drift_tests.things", callable_entry)


def test_one_rule_for_a_name_registered_twice() -> None:
    things: Registry[Callable[..., object]] = Registry(
        "thing", "drift_tests.things", callable_entry
    )
    things.register("one", "drift_pipeline._lazy:one_line")
    things.register("one", "drift_pipeline._lazy:one_line")  # the same target: harmless
    with pytest.raises(RegistryError, match="thing 'one' is already registered to drift_pipeline"):
        things.register("one", "drift_pipeline._lazy:describe_target")
    with pytest.raises(RegistryError, match="thing name 'One' is invalid: use lower-case"):
        things.register("One", "drift_pipeline._lazy:one_line")
    with pytest.raises(KeyError, match="unknown thing 'two'; registered: one"):
        things.get("two")
    things.register("one", "drift_pipeline._lazy:describe_target", replace=True)
    assert things.get("one").__name__ == "describe_target"


def test_a_wrong_kind_of_object_names_the_entry() -> None:
    things: Registry[Callable[..., object]] = Registry(
        "thing", "drift_tests.things", callable_entry
    )
    things.register("constant", "drift_pipeline._lazy:__all__")
    with pytest.raises(RegistryError, match=r"^thing 'constant': \[.*\] is not callable$"):
        things.get("constant")


def test_installed_entries_follow_the_registered_ones_in_name_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "drift_things-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: drift-things\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[drift_tests.things]\n"
        "zeta = drift_pipeline._lazy:one_line\n"
        "alpha = drift_pipeline._lazy:describe_target\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    things: Registry[Callable[..., object]] = Registry(
        "thing", "drift_tests.things", callable_entry
    )
    things.register("mine", "drift_pipeline._lazy:one_line")
    assert things.registered_names() == ["mine"]  # not read yet
    assert things.names() == ["mine", "alpha", "zeta"]
    assert things.origin("alpha") == (
        "entry point alpha = drift_pipeline._lazy:describe_target of drift-things "
        "(drift_tests.things)"
    )
    clashing = _things()
    clashing.register("zeta", "drift_pipeline._lazy:describe_target")
    with pytest.raises(RegistryError) as caught:
        clashing.names()
    assert str(caught.value) == (
        "entry point zeta = drift_pipeline._lazy:one_line of drift-things (drift_tests.things): "
        "thing 'zeta' is already registered by code to drift_pipeline._lazy:describe_target"
    )


def test_only_the_registry_module_imports_by_name_outside_lazy_package_attributes() -> None:
    import ast
    from pathlib import Path

    import drift_pipeline

    root = Path(drift_pipeline.__file__).parent
    callers = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy_attributes = {
            id(node)
            for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef) and function.name == "__getattr__"
            for node in ast.walk(function)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "import_module"
                and not (path.name == "__init__.py" and id(node) in lazy_attributes)
            ):
                callers.append(str(path.relative_to(root)))
    assert callers == ["_lazy.py"]
