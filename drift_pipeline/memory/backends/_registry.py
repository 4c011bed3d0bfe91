"""The backend registry: built-in backends by name, any other by ``package.module:ClassName``."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from drift_pipeline.memory._protocol import MemoryBackend

__all__ = ["backend_names", "get_backend_factory", "load_backend", "register_backend"]

BackendFactory = Callable[..., MemoryBackend]
_F = TypeVar("_F", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_IMPORT_SPEC = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_]\w*)$")
_REQUIRED_METHODS = ("store", "retrieve", "token_counts", "snapshot")
_ASYNC_METHODS = ("store", "retrieve")


@overload
def register_backend(name: str) -> Callable[[_F], _F]: ...


@overload
def register_backend(name: str, factory: _F) -> _F: ...


def register_backend(name: str, factory: _F | None = None) -> _F | Callable[[_F], _F]:
    """Register a backend factory (usually a class) under ``name``.

    Use as a decorator (``@register_backend("bm25")``) or call it with the factory. Registering
    the same factory twice is harmless; a different factory under a taken name is an error.

    Args:
        name: Lower-case identifier (``[a-z][a-z0-9_]*``), used in arms and on the command line.
        factory: The class or callable that builds the backend from keyword options.

    Returns:
        The factory itself (decorator form: a decorator returning it).

    Raises:
        ValueError: The name is malformed or already taken by another factory.

    """
    if not _NAME.match(name):
        raise ValueError(f"backend name {name!r} is invalid: use lower-case [a-z][a-z0-9_]*")

    def decorate(target: _F) -> _F:
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not target:
            raise ValueError(
                f"backend name {name!r} is already registered to {_describe(existing)}"
            )
        _REGISTRY[name] = target
        return target

    if factory is not None:
        return decorate(factory)
    return decorate


def backend_names() -> list[str]:
    """Return the registered backend names, sorted."""
    return sorted(_REGISTRY)


def get_backend_factory(name: str) -> BackendFactory:
    """Return the factory registered under ``name``.

    Raises:
        ValueError: No backend has that name (the message lists the known ones).

    """
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(backend_names()) or "none"
        raise ValueError(
            f"unknown backend {name!r}: known backends are {known}, "
            "or give an import path 'package.module:ClassName'"
        ) from None


def load_backend(spec: str, options: Mapping[str, object] | None = None) -> MemoryBackend:
    """Build a backend from a registered name or a ``package.module:ClassName`` import path.

    Args:
        spec: ``bm25`` (a registered name) or ``my_pkg.memory:MyBackend``.
        options: Keyword arguments for the constructor.

    Returns:
        The constructed backend.

    Raises:
        ValueError: A malformed spec, an unknown name, a module or class that cannot be found, a
            class that lacks the protocol's methods, or options the constructor refuses.

    """
    spec = spec.strip()
    kwargs = dict(options or {})
    if ":" in spec:
        factory = _import_factory(spec)
    elif _NAME.match(spec):
        factory = get_backend_factory(spec)
    else:
        raise ValueError(
            f"backend spec {spec!r} is malformed: give a registered name such as 'bm25' "
            "or an import path 'package.module:ClassName'"
        )
    if inspect.isclass(factory):
        _check_protocol(spec, factory)
    try:
        inspect.signature(factory).bind(**kwargs)
    except TypeError as error:
        raise ValueError(f"backend {spec!r} rejects options {sorted(kwargs)}: {error}") from None
    except ValueError:
        pass  # no introspectable signature (some builtins): let the call itself decide
    backend = factory(**kwargs)
    if not isinstance(backend, MemoryBackend):
        raise ValueError(
            f"backend {spec!r} built a {type(backend).__name__}, which lacks the MemoryBackend "
            f"methods {', '.join(_REQUIRED_METHODS)}"
        )
    return backend


def _import_factory(spec: str) -> Callable[..., Any]:
    match = _IMPORT_SPEC.match(spec)
    if match is None:
        raise ValueError(f"backend spec {spec!r} is malformed: expected 'package.module:ClassName'")
    module_name, attr = match.group("module"), match.group("attr")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"backend spec {spec!r}: cannot import module {module_name!r} ({error})"
        ) from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise ValueError(f"backend spec {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if not callable(factory):
        raise ValueError(f"backend spec {spec!r}: {attr!r} is not a class or factory")
    return factory  # type: ignore[no-any-return]


def _check_protocol(spec: str, cls: type) -> None:
    missing = [method for method in _REQUIRED_METHODS if not callable(getattr(cls, method, None))]
    if missing:
        raise ValueError(
            f"backend {spec!r}: class {cls.__name__} lacks MemoryBackend method(s) "
            f"{', '.join(missing)}"
        )
    not_async = [m for m in _ASYNC_METHODS if not inspect.iscoroutinefunction(getattr(cls, m))]
    if not_async:
        raise ValueError(
            f"backend {spec!r}: class {cls.__name__} must define {', '.join(not_async)} "
            "with 'async def'"
        )


def _describe(factory: Callable[..., Any]) -> str:
    module = getattr(factory, "__module__", "?")
    qualname = getattr(factory, "__qualname__", repr(factory))
    return f"{module}:{qualname}"
