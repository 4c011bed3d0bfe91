"""The backend registry: registrations by name, installed adapters by entry point, import paths.

A :class:`BackendRegistration` names a backend, points at its class lazily
(``"package.module:Class"``, imported only when the backend is built or its class is asked for)
and declares whether ``drift run`` runs it by default, what it needs (:class:`BackendNeeds`) and
which constructor options it takes from the scenario. The built-ins are registered in
``_builtins``; an installed adapter package registers through the entry-point group
``drift_pipeline.backends`` (``name = "package.module:Class"`` or
``name = "package.module:REGISTRATION"``), found by name without ``PYTHONPATH``; any other class
runs by its import path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from drift_pipeline._lazy import Registry, RegistryError, describe_target, is_target, resolve_target
from drift_pipeline.memory._protocol import REQUIRED_METHODS, MemoryBackend

from ._needs import BackendNeeds

if TYPE_CHECKING:
    from drift_pipeline.sources import WorldSource

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendRegistration",
    "backend_names",
    "backend_needs",
    "backend_registration",
    "built_in",
    "default_backend_names",
    "get_backend_factory",
    "load_backend",
    "register_backend",
    "resolve_backend_options",
]

ENTRY_POINT_GROUP = "drift_pipeline.backends"
"""The entry-point group through which installed packages register backends."""

BackendFactory = Callable[..., MemoryBackend]
NeedsHook = Callable[[Mapping[str, Any]], BackendNeeds]
"""Needs that depend on the constructor options (a model only with ``summariser: llm``)."""
DefaultsHook = Callable[["WorldSource"], Mapping[str, Any]]
"""Constructor options a backend takes from the world source, where the run's config gives none."""
_F = TypeVar("_F", bound=Callable[..., Any])

_REQUIRED_METHODS = REQUIRED_METHODS
_ASYNC_METHODS = ("store", "retrieve")


@dataclass(frozen=True, eq=False)
class BackendRegistration:
    """One backend by name: where its class is, and what running it takes.

    Attributes:
        name: Lower-case identifier (``[a-z][a-z0-9_]*``) used in arms and on the command line.
        target: ``"package.module:Class"`` (imported on first use) or the class/factory itself.
        default_arm: ``drift run`` runs it when no ``--backend`` is given.
        needs: What it needs, or a ``NeedsHook`` (or ``"module:function"`` naming one) that
            works them out from the constructor options.
        defaults: A ``DefaultsHook`` (or ``"module:function"``): options taken from the loaded
            scenario where the run's backend config gives none.
    """

    name: str
    target: str | Callable[..., Any]
    default_arm: bool = False
    needs: BackendNeeds | NeedsHook | str = field(default_factory=BackendNeeds)
    defaults: DefaultsHook | str | None = None

    def __post_init__(self) -> None:
        _BACKENDS.check_name(self.name)
        if isinstance(self.target, str) and not is_target(self.target):
            raise RegistryError(
                f"backend {self.name!r}: {self.target!r} is not 'package.module:Name'"
            )

    def _identity(self) -> tuple[Any, ...]:
        # A class registered by object and by its import path is the same registration.
        return (self.name, self.target_path, self.default_arm, self.needs, self.defaults)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BackendRegistration):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    @property
    def target_path(self) -> str:
        """The target as ``package.module:Class``, whether given as a string or an object."""
        return describe_target(self.target)

    def factory(self) -> BackendFactory:
        """The class or factory, imported now if the target is a string.

        Raises:
            RegistryError: One line when its module or attribute cannot be found.
        """
        if not isinstance(self.target, str):
            return self.target
        return _import_attribute(self.target, f"backend {self.name!r}")

    def needs_for(self, options: Mapping[str, Any]) -> BackendNeeds:
        """What it needs when built with ``options``."""
        if isinstance(self.needs, BackendNeeds):
            return self.needs
        hook = self.needs
        if isinstance(hook, str):
            hook = _import_attribute(hook, f"backend {self.name!r} needs")
        needs = hook(options)
        if not isinstance(needs, BackendNeeds):
            raise ValueError(
                f"backend {self.name!r}: its needs hook returned {type(needs).__name__}, "
                "expected BackendNeeds"
            )
        return needs

    def defaults_for(self, source: WorldSource) -> dict[str, Any]:
        """The constructor options it takes from this source (empty without a hook)."""
        hook = self.defaults
        if hook is None:
            return {}
        if isinstance(hook, str):
            hook = _import_attribute(hook, f"backend {self.name!r} defaults")
        return dict(hook(source))


def _registration(name: str, value: object) -> BackendRegistration:
    """An entry as the registry holds it: a registration, or one built around a bare class."""
    if isinstance(value, BackendRegistration):
        if value.name != name:
            raise TypeError(f"the registration it names is called {value.name!r}")
        return value
    if callable(value):
        return BackendRegistration(name, value)
    raise TypeError("it is neither a backend class or factory nor a BackendRegistration")


_BACKENDS: Registry[BackendRegistration] = Registry("backend", ENTRY_POINT_GROUP, _registration)


@overload
def register_backend(
    name: str,
    *,
    default_arm: bool = ...,
    needs: BackendNeeds | NeedsHook | str = ...,
    defaults: DefaultsHook | str | None = ...,
) -> Callable[[_F], _F]: ...


@overload
def register_backend(
    name: str,
    factory: _F,
    *,
    default_arm: bool = ...,
    needs: BackendNeeds | NeedsHook | str = ...,
    defaults: DefaultsHook | str | None = ...,
) -> _F: ...


@overload
def register_backend(
    name: str,
    factory: str,
    *,
    default_arm: bool = ...,
    needs: BackendNeeds | NeedsHook | str = ...,
    defaults: DefaultsHook | str | None = ...,
) -> BackendRegistration: ...


def register_backend(
    name: str,
    factory: Callable[..., Any] | str | None = None,
    *,
    default_arm: bool = False,
    needs: BackendNeeds | NeedsHook | str | None = None,
    defaults: DefaultsHook | str | None = None,
) -> Any:
    """Register a backend under ``name``: its class (or factory), or lazily its import path.

    Use as a decorator (``@register_backend("bm25")``), call it with the class, or give the
    class's ``"package.module:Class"`` so that it is imported only when used. Registering the same
    thing twice is harmless; something else under a taken name is an error.

    Args:
        name: Lower-case identifier (``[a-z][a-z0-9_]*``), used in arms and on the command line.
        factory: The class or callable that builds the backend from keyword options, or its
            import path.
        default_arm: ``drift run`` runs it when no ``--backend`` is given.
        needs: What it needs (see :class:`BackendNeeds`), or a hook from options to needs.
        defaults: A hook from the loaded scenario to constructor options.

    Returns:
        The factory itself (decorator form: a decorator returning it); for an import path, the
        registration.

    Raises:
        RegistryError: The name or import path is malformed, or the name is taken by another
            backend.

    """
    declared = needs if needs is not None else BackendNeeds()
    _BACKENDS.check_name(name)

    def decorate(target: _F) -> _F:
        _add(BackendRegistration(name, target, default_arm, declared, defaults))
        return target

    if isinstance(factory, str):
        return _add(BackendRegistration(name, factory, default_arm, declared, defaults))
    if factory is not None:
        return decorate(factory)
    return decorate


def _add(registration: BackendRegistration) -> BackendRegistration:
    _BACKENDS.register(registration.name, registration)
    return registration


def backend_names() -> list[str]:
    """Return every backend name known here, sorted: registered ones and installed ones."""
    return sorted(_BACKENDS.names())


def default_backend_names() -> list[str]:
    """Return the backends ``drift run`` runs when no ``--backend`` is given, sorted.

    Only registrations made in code can be default arms: installing a package never adds arms to
    every run (and so never changes a leaderboard by itself); its backends run when named.
    """
    return sorted(n for n in _BACKENDS.registered_names() if _BACKENDS.get(n).default_arm)


def backend_registration(name: str) -> BackendRegistration:
    """Return the registration of ``name``, registered in code or by an installed package.

    An installed package's entry point is loaded here (in this process), the first time.

    Raises:
        RegistryError: No backend has that name (the message lists the known ones), or its
            entry point cannot be loaded.

    """
    registration = _find(name)
    if registration is None:
        raise _BACKENDS.unknown(name, " (or give an import path 'package.module:ClassName')")
    return registration


def _find(name: str) -> BackendRegistration | None:
    if name not in _BACKENDS:
        return None
    registration = _BACKENDS.get(name)
    if registration.default_arm and _BACKENDS.origin(name) is not None:
        raise RegistryError(
            f"{_BACKENDS.what(name)}: an installed backend runs when named; set default_arm=False"
        )
    return registration


_BUILT_IN_PACKAGE = "drift_pipeline.memory.backends."


def built_in(spec: str) -> bool:
    """Whether ``spec`` names one of the package's own reference, floor or sanity backends.

    Those are plain code of this package and never checked before a run; anything else (an
    adapter to a service, a BrainCore adapter, an installed or import-path backend) is.
    """
    spec = spec.strip()
    if ":" in spec or spec not in _BACKENDS.registered_names():
        return False
    return backend_registration(spec).target_path.startswith(_BUILT_IN_PACKAGE)


def get_backend_factory(name: str) -> BackendFactory:
    """Return the class (or factory) registered under ``name``, importing it if needed.

    Raises:
        ValueError: A package it declares is missing (the message names what to install).
        RegistryError: No backend has that name (the message lists the known ones), or it
            cannot be imported.

    """
    registration = backend_registration(name)
    registration.needs_for({}).check(name)
    return registration.factory()


def backend_needs(spec: str, options: Mapping[str, Any] | None = None) -> BackendNeeds:
    """What the backend ``spec`` needs when built with ``options``.

    Only registrations declare needs: a ``package.module:Class`` import path, or a name no
    registration has (a backend object's arm), needs nothing the harness provides (no key, no
    cache). Whether such a backend can be built is its worker's to say.

    Raises:
        ValueError: A registration's needs hook fails, or an installed package's entry point
            cannot be loaded.
    """
    spec = spec.strip()
    registration = None if ":" in spec else _find(spec)
    if registration is None:
        return BackendNeeds()
    return registration.needs_for(options or {})


def resolve_backend_options(
    spec: str, source: WorldSource, configured: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The constructor options of backend ``spec`` on one world source.

    The configured options, then the registration's scenario defaults for the options not
    given, then (for a backend that calls a model) the endpoint and model from the environment.
    Import paths get the configured options only.

    Args:
        spec: A registered name or ``package.module:Class``.
        source: The world source the backend runs on.
        configured: The run's options for this backend (``--backend-config``).

    Raises:
        ValueError: One line: an unknown name, a missing package, an unset model variable.
    """
    spec = spec.strip()
    options = dict(configured or {})
    if ":" in spec:
        return options
    registration = backend_registration(spec)
    for option, value in registration.defaults_for(source).items():
        options.setdefault(option, value)
    needs = registration.needs_for(options)
    needs.check(spec)
    if needs.llm is not None:
        options = needs.llm.fill(spec, options)
    return options


def load_backend(spec: str, options: Mapping[str, object] | None = None) -> MemoryBackend:
    """Build a backend from a registered name or a ``package.module:ClassName`` import path.

    Args:
        spec: ``bm25`` (a registered or installed name) or ``my_pkg.memory:MyBackend``.
        options: Keyword arguments for the constructor.

    Returns:
        The constructed backend.

    Raises:
        ValueError: A malformed spec, an unknown name, a missing package, a module or class that
            cannot be found, a class that lacks the protocol's methods, or options the
            constructor refuses.

    """
    spec = spec.strip()
    kwargs = dict(options or {})
    if ":" in spec:
        factory = _import_factory(spec)
    elif _BACKENDS.name_is_valid(spec):
        registration = backend_registration(spec)
        registration.needs_for(kwargs).check(spec)
        factory = registration.factory()
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


# --- import paths ------------------------------------------------------------------------------


def _import_factory(spec: str) -> Callable[..., Any]:
    return _import_attribute(spec, f"backend {spec!r}")


def _import_attribute(path: str, what: str) -> Callable[..., Any]:
    """Import ``module:attr`` and return it if it is callable; errors start with ``what``."""
    factory = resolve_target(path, what)
    if not callable(factory):
        raise RegistryError(f"{what}: {path!r} is not a class or factory")
    return cast(Callable[..., Any], factory)


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
