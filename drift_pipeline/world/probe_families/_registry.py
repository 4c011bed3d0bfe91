"""The probe family registry: adding a family is one module and one registration.

A registration is a lazy ``"package.module:NAME"`` target naming a :class:`ProbeFamily`; it is
imported on first use. Installed packages add families through the entry-point group
:data:`ENTRY_POINT_GROUP` (entry-point name = family name, value = the target), found after the
built-in families, in name order.

Registration order is generation order: families draw from one random stream per replicate, so
a family registered later never changes the probes of the families before it.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Final

from ._family import ProbeFamily

__all__ = [
    "ENTRY_POINT_GROUP",
    "get_probe_family",
    "probe_families",
    "probe_family_names",
    "register_probe_family",
]

ENTRY_POINT_GROUP: Final = "drift_pipeline.probe_families"

_BUILT_IN: Final = (
    ("recall", "drift_pipeline.world.probe_families.recall:RECALL"),
    ("action", "drift_pipeline.world.probe_families.action:ACTION"),
    ("revision", "drift_pipeline.world.probe_families.revision:REVISION"),
)

_TARGETS: dict[str, str] = dict(_BUILT_IN)
_LOADED: dict[str, ProbeFamily] = {}  # by target: each is imported once
_discovered = False


def register_probe_family(name: str, target: str) -> None:
    """Register the family ``name`` as a lazy ``"package.module:NAME"`` target.

    Raises:
        ValueError: If ``target`` is not ``module:attribute`` or ``name`` is taken.
    """
    _discover()
    _add(name, target, "register_probe_family")


def _add(name: str, target: str, where: str) -> None:
    module, _, attribute = target.partition(":")
    if not module or not attribute:
        raise ValueError(f"{where}: probe family target {target!r} must be 'package.module:NAME'")
    if name in _TARGETS:
        raise ValueError(f"{where}: probe family {name!r} is already registered")
    _TARGETS[name] = target


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    found = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    for entry in found:
        _add(entry.name, entry.value, f"entry point {entry.name!r} of {ENTRY_POINT_GROUP}")


def probe_family_names() -> tuple[str, ...]:
    """Every registered family's name, in registration (= generation) order."""
    _discover()
    return tuple(_TARGETS)


def get_probe_family(name: str) -> ProbeFamily:
    """The registered family ``name``, imported on first use.

    Raises:
        KeyError: With the registered names, if ``name`` is not registered.
        ImportError: Naming the family, if its module cannot be imported.
        TypeError: If its target is not a :class:`ProbeFamily` of that name.
    """
    _discover()
    target = _TARGETS.get(name)
    if target is None:
        known = ", ".join(_TARGETS)
        raise KeyError(f"unknown probe family {name!r}; registered: {known}")
    family = _LOADED.get(target)
    if family is None:
        module, _, attribute = target.partition(":")
        try:
            imported = importlib.import_module(module)
        except ImportError as error:
            raise ImportError(f"probe family {name!r}: cannot import {module} ({error})") from error
        loaded = getattr(imported, attribute, None)
        if not isinstance(loaded, ProbeFamily):
            raise TypeError(f"probe family {name!r}: {target} is not a ProbeFamily: {loaded!r}")
        family = _LOADED[target] = loaded
    if family.name != name:
        raise TypeError(
            f"probe family {name!r}: {target} is not a ProbeFamily named {name!r} "
            f"(it is named {family.name!r})"
        )
    return family


def probe_families() -> tuple[ProbeFamily, ...]:
    """Every registered family, imported, in registration order."""
    return tuple(get_probe_family(name) for name in probe_family_names())
