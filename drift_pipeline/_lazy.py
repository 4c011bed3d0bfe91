"""A registry of lazily imported things: ``"package.module:name"`` strings resolved on first use.

Registering by import path keeps optional dependencies out of ``import drift_pipeline``: the
module behind a registration is imported only when that entry is asked for. Installed packages
add entries through an importlib.metadata entry-point group, read on first lookup.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Generic, TypeVar, cast

__all__ = ["LazyRegistry", "callable_entry", "resolve_target"]

T = TypeVar("T")

_TARGET = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")


def resolve_target(target: str, what: str) -> object:
    """Import ``"package.module:name"`` (``name`` may be dotted) and return the object.

    Args:
        target: The import path.
        what: What is being resolved, for the error line (``"paradigm 'user_assistant'"``).

    Raises:
        LookupError: One line naming ``what``, the target and what went wrong.
    """
    match = _TARGET.match(target)
    if match is None:
        raise LookupError(f"{what}: {target!r} is not 'package.module:name'")
    try:
        found: object = importlib.import_module(match["module"])
    except ImportError as error:
        raise LookupError(f"{what}: cannot import {match['module']!r} ({error})") from None
    for part in match["attr"].split("."):
        if not hasattr(found, part):
            raise LookupError(f"{what}: {match['module']!r} has no attribute {match['attr']!r}")
        found = getattr(found, part)
    return found


class LazyRegistry(Generic[T]):
    """Named entries, each an object or an import path resolved (once) when first looked up.

    Args:
        kind: What the entries are, for error lines (``"paradigm"``, ``"source"``).
        group: The entry-point group installed packages register in
            (``drift_pipeline.paradigms``): each entry point's name is an entry's name, its
            value the import path.
        check: Called with each resolved object; returns it typed, or raises ``TypeError``.
    """

    def __init__(self, kind: str, group: str, check: Callable[[object], T]) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._targets: dict[str, str | T] = {}
        self._resolved: dict[str, T] = {}
        self._discovered = False

    def register(self, name: str, target: str | T) -> None:
        """Register ``target`` (an object or ``"package.module:name"``) under ``name``.

        Registering the same target twice is harmless; another target under a taken name is
        an error.

        Raises:
            ValueError: The name is taken by another target.
        """
        existing = self._targets.get(name)
        if existing is not None and existing != target:
            raise ValueError(f"{self.kind} {name!r} is already registered to {existing!r}")
        self._targets[name] = target
        self._resolved.pop(name, None)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (missing is fine).

        An entry point of that name comes back only if the entry points were not read yet.
        """
        self._targets.pop(name, None)
        self._resolved.pop(name, None)

    def names(self) -> list[str]:
        """Every registered name, installed entry points included, sorted."""
        self._discover()
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._targets

    def get(self, name: str) -> T:
        """The entry registered under ``name``, imported on first use.

        Raises:
            KeyError: No entry has that name.
            LookupError: The entry's import path cannot be resolved (one line).
            TypeError: The resolved object is not what this registry holds.
        """
        if name in self._resolved:
            return self._resolved[name]
        self._discover()
        target = self._targets[name]
        what = f"{self.kind} {name!r}"
        value = resolve_target(target, what) if isinstance(target, str) else target
        try:
            checked = self._check(value)
        except TypeError as error:
            raise TypeError(f"{what}: {error}") from None
        self._resolved[name] = checked
        return checked

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        for point in entry_points(group=self.group):
            # Registrations made in-process (the built-ins) keep their name.
            self._targets.setdefault(point.name, point.value)


def callable_entry(value: object) -> Callable[..., object]:
    """The check of registries holding functions or classes."""
    if not callable(value):
        raise TypeError(f"{value!r} is not callable")
    return cast(Callable[..., object], value)
