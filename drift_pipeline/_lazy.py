"""The one registry: named entries, each an object or a ``"package.module:name"`` import path.

Every extension point (backends, gate variants, metrics, probe families, entity types, paradigm
generators, world sources) is a :class:`Registry` holding its own metadata records, so that all
of them share one set of rules:

- **Import paths.** ``"package.module:name"`` (``name`` may be dotted) is resolved by
  :func:`resolve_target`, the only place in the package that imports a module by name. A bad
  path, a module that cannot be imported and a missing attribute are each one
  :class:`RegistryError` line, worded the same in every registry.
- **A name registered twice.** The same target again is harmless; another target under a taken
  name is a :class:`RegistryError` naming what holds it.
- **Installed packages.** Each registry reads one entry-point group
  (``drift_pipeline.<kind>s``): the entry point's name is the entry's name, its value the import
  path of the entry (the object, or the registry's metadata record for it). The group is read
  the first time the registry is listed or asked for a name registered in code does not have,
  so runs of the built-ins never scan the installed distributions; installed entries follow the
  ones registered before that, in name order.

Registering by import path keeps optional dependencies out of ``import drift_pipeline``: the
module behind an entry is imported only when that entry is asked for.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Generic, TypeVar, cast

__all__ = [
    "Registry",
    "RegistryError",
    "callable_entry",
    "describe_target",
    "import_module_named",
    "is_target",
    "one_line",
    "resolve_target",
]

T = TypeVar("T")

_TARGET = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class RegistryError(KeyError, ValueError):
    """What a registry found wrong, in one line: an unknown name, a bad import path, a clash.

    It is a :class:`KeyError`, so a look-up guarded by ``except KeyError`` still treats an
    unknown name as missing, and a :class:`ValueError`, so a command's bad-input handling
    reports it like any other bad value. A module that failed to import is its ``__cause__``
    (where its own file and line can be found).
    """

    def __str__(self) -> str:
        # KeyError would quote the message as if it were a key.
        return str(self.args[0]) if self.args else ""


def one_line(error: BaseException) -> str:
    """``error``'s message on one line (its type's name when it has none)."""
    return " ".join(str(error).split()) or type(error).__name__


def import_module_named(module: str, what: str) -> ModuleType:
    """Import ``module``; anything that stops it is one :class:`RegistryError` line.

    Args:
        module: The dotted module name.
        what: What is being resolved, for the error line (``"backend 'bm25'"``).

    Raises:
        RegistryError: ``<what>: cannot import module '<module>' (<why>)``, the import's own
            error attached as the cause.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise RegistryError(f"{what}: cannot import module {module!r} ({one_line(error)})") from (
            error
        )
    except Exception as error:  # the module's own code raised while it was imported
        why = f"{type(error).__name__}: {one_line(error)}"
        raise RegistryError(f"{what}: cannot import module {module!r} ({why})") from error


def resolve_target(target: str, what: str) -> object:
    """Import ``"package.module:name"`` (``name`` may be dotted) and return the object.

    Args:
        target: The import path.
        what: What is being resolved, for the error line (``"paradigm 'user_assistant'"``).

    Raises:
        RegistryError: One line naming ``what`` and the path: it is not ``package.module:name``,
            its module cannot be imported, or the module has no such attribute.
    """
    match = _TARGET.match(target)
    if match is None:
        raise RegistryError(f"{what}: {target!r} is not 'package.module:Name'")
    found: object = import_module_named(match["module"], what)
    for part in match["attr"].split("."):
        if not hasattr(found, part):
            raise RegistryError(
                f"{what}: module {match['module']!r} has no attribute {match['attr']!r}"
            )
        found = getattr(found, part)
    return found


def is_target(text: str) -> bool:
    """Whether ``text`` is spelled as an import path ``package.module:name``."""
    return _TARGET.match(text) is not None


def describe_target(target: object) -> str:
    """A target as messages show it: an import path, or a record's or object's own path."""
    return _path_of(target) or repr(target)


def _path_of(target: object) -> str | None:
    """The import path a target is, or that a record's target or a class or function has."""
    if isinstance(target, str):
        return target
    inner = getattr(target, "target", None)
    if inner is not None and inner is not target:
        return _path_of(inner)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    return f"{module}:{qualname}" if module and qualname else None


@dataclass(frozen=True)
class _Entry:
    target: object
    origin: str | None  # the entry point it came from; None when registered in code


class Registry(Generic[T]):
    """Named entries, each an object or an import path resolved (once) when first looked up.

    Args:
        kind: What the entries are, for error lines (``"paradigm"``, ``"probe family"``).
        group: The entry-point group installed packages register in.
        check: Called with each entry's name and resolved object; returns it typed (a metadata
            record built from a bare class, say), or raises ``TypeError``/``ValueError``
            whose message the registry puts after the entry's name.
        name_pattern: What a name must look like, with ``name_rule`` saying it in words.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        check: Callable[[str, object], T],
        *,
        name_pattern: re.Pattern[str] = _NAME,
        name_rule: str = "lower-case [a-z][a-z0-9_]*",
    ) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._name_pattern = name_pattern
        self._name_rule = name_rule
        self._entries: dict[str, _Entry] = {}
        self._resolved: dict[str, T] = {}
        self._discovered = False

    # --- registering ----------------------------------------------------------------------

    def check_name(self, name: str) -> None:
        """Refuse a malformed name.

        Raises:
            RegistryError: ``<kind> name '<name>' is invalid: use <rule>``.
        """
        if not isinstance(name, str) or not self._name_pattern.fullmatch(name):
            raise RegistryError(f"{self.kind} name {name!r} is invalid: use {self._name_rule}")

    def name_is_valid(self, name: str) -> bool:
        """Whether ``name`` is spelled as this registry's names must be."""
        return self._name_pattern.fullmatch(name) is not None

    def register(self, name: str, target: str | T, *, replace: bool = False) -> None:
        """Register ``target`` (an object or ``"package.module:name"``) under ``name``.

        Registering the same target twice is harmless; another target under a taken name is
        an error unless ``replace`` is given (the entry then keeps its place in the order).

        Raises:
            RegistryError: The name is malformed, the import path is malformed, or the name is
                taken by another target.
        """
        self.check_name(name)
        if isinstance(target, str) and not is_target(target):
            raise RegistryError(f"{self.kind} {name!r}: {target!r} is not 'package.module:Name'")
        existing = self._entries.get(name)
        if existing is not None and existing.target != target and not replace:
            raise RegistryError(self.clash(name))
        self._entries[name] = _Entry(target, None)
        self._resolved.pop(name, None)

    def clash(self, name: str) -> str:
        """The line saying ``name`` is taken, and by what."""
        existing = self._entries[name]
        where = f" by {existing.origin}" if existing.origin else ""
        return f"{self.kind} {name!r} is already registered{where}{_to(existing.target)}"

    def unregister(self, name: str) -> None:
        """Forget ``name`` (missing is fine).

        An installed entry of that name comes back only if the group is read again
        (:meth:`discover` with ``again``).
        """
        self._entries.pop(name, None)
        self._resolved.pop(name, None)

    def copy(self) -> Registry[T]:
        """A registry with this one's in-code entries, the installed packages not read yet.

        Tests swap one in to register freely and see packages installed in a temporary folder.
        """
        fresh = Registry(
            self.kind,
            self.group,
            self._check,
            name_pattern=self._name_pattern,
            name_rule=self._name_rule,
        )
        fresh._entries = {n: e for n, e in self._entries.items() if e.origin is None}
        fresh._resolved = {n: v for n, v in self._resolved.items() if n in fresh._entries}
        return fresh

    # --- looking up -----------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every name, installed entries included, in registration order."""
        self.discover()
        return list(self._entries)

    def registered_names(self) -> list[str]:
        """The names registered in code, in order, without reading the installed packages."""
        return [name for name, entry in self._entries.items() if entry.origin is None]

    def holds(self, name: str) -> bool:
        """Whether ``name`` is registered already, without reading the installed packages."""
        return name in self._entries

    def __contains__(self, name: object) -> bool:
        if name in self._entries:
            return True
        self.discover()
        return name in self._entries

    def origin(self, name: str) -> str | None:
        """The entry point ``name`` came from, or ``None`` when it was registered in code."""
        return self._entry(name).origin

    def target(self, name: str) -> object:
        """What ``name`` is registered to, unresolved (an import path or the object).

        Raises:
            RegistryError: No entry has that name.
        """
        return self._entry(name).target

    def get(self, name: str) -> T:
        """The entry registered under ``name``, imported and checked on first use.

        Raises:
            RegistryError: No entry has that name, its import path cannot be resolved, or the
                object is not what this registry holds (one line each).
        """
        if name in self._resolved:
            return self._resolved[name]
        entry = self._entry(name)
        what = self.what(name)
        value = entry.target
        if isinstance(value, str):
            value = resolve_target(value, what)
        try:
            checked = self._check(name, value)
        except (TypeError, ValueError) as error:
            if isinstance(error, RegistryError):
                raise
            raise RegistryError(f"{what}: {one_line(error)}") from None
        self._resolved[name] = checked
        return checked

    def what(self, name: str) -> str:
        """How error lines name the entry: ``backend 'bm25'``, with its entry point if any."""
        entry = self._entries.get(name)
        origin = f" ({entry.origin})" if entry is not None and entry.origin else ""
        return f"{self.kind} {name!r}{origin}"

    def unknown(self, name: str, hint: str = "") -> RegistryError:
        """The error for a name nothing is registered under, listing the registered names."""
        known = ", ".join(self.names()) or "none"
        return RegistryError(f"unknown {self.kind} {name!r}; registered: {known}{hint}")

    def _entry(self, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            self.discover()
            entry = self._entries.get(name)
        if entry is None:
            raise self.unknown(name)
        return entry

    # --- installed packages -----------------------------------------------------------------

    def discover(self, *, again: bool = False) -> list[str]:
        """Read the entry-point group (once, or ``again`` after installing a package).

        Returns:
            The names added.

        Raises:
            RegistryError: An entry point's name is malformed, or taken by another target
                (registered in code or claimed by another installed package).
        """
        if self._discovered and not again:
            return []
        self._discovered = True
        # Imported here: reading the installed distributions' metadata is slow to set up, and
        # most processes (every sandboxed memory worker) never list a registry.
        from importlib.metadata import entry_points

        added: list[str] = []
        for point in sorted(entry_points(group=self.group), key=lambda p: (p.name, p.value)):
            dist = getattr(point, "dist", None)
            of = f" of {dist.name}" if dist is not None else ""
            where = f"entry point {point.name} = {point.value}{of} ({self.group})"
            if not self._name_pattern.fullmatch(point.name):
                raise RegistryError(f"{where}: the name is invalid: use {self._name_rule}")
            existing = self._entries.get(point.name)
            if existing is not None:
                if existing.target == point.value:
                    continue  # read before, or the same path registered in code
                holder = existing.origin or "code"
                raise RegistryError(
                    f"{where}: {self.kind} {point.name!r} is already registered by {holder}"
                    f"{_to(existing.target)}"
                )
            self._entries[point.name] = _Entry(point.value, where)
            added.append(point.name)
        return added


def _to(target: object) -> str:
    """`` to <path>`` naming what holds a name, or nothing for an object that has no path."""
    path = _path_of(target)
    return f" to {path}" if path else ""


def callable_entry(name: str, value: object) -> Callable[..., object]:
    """The check of registries holding functions or classes."""
    if not callable(value):
        raise TypeError(f"{describe_target(value)} is not callable")
    return cast(Callable[..., object], value)
