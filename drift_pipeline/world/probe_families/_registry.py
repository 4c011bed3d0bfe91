"""The probe family registry: adding a family is one module and one registration.

A registration is a lazy ``"package.module:NAME"`` target naming a :class:`ProbeFamily`; it is
imported on first use. Installed packages add families through the entry-point group
:data:`ENTRY_POINT_GROUP` (entry-point name = family name, value = the target), found after the
built-in families, in name order.

Registration order is generation order: families draw from one random stream per replicate, so
a family registered later never changes the probes of the families before it.
"""

from __future__ import annotations

from typing import Final

from drift_pipeline._lazy import Registry

from ._family import ProbeFamily

__all__ = [
    "ENTRY_POINT_GROUP",
    "get_probe_family",
    "probe_families",
    "probe_family_names",
    "register_probe_family",
]

ENTRY_POINT_GROUP: Final = "drift_pipeline.probe_families"


def _family(name: str, value: object) -> ProbeFamily:
    if not isinstance(value, ProbeFamily):
        raise TypeError(f"{value!r:.60} is not a ProbeFamily")
    if value.name != name:
        raise TypeError(f"it is not a ProbeFamily named {name!r} (it is named {value.name!r})")
    return value


_FAMILIES: Registry[ProbeFamily] = Registry("probe family", ENTRY_POINT_GROUP, _family)
_FAMILIES.register("recall", "drift_pipeline.world.probe_families.recall:RECALL")
_FAMILIES.register("action", "drift_pipeline.world.probe_families.action:ACTION")
_FAMILIES.register("revision", "drift_pipeline.world.probe_families.revision:REVISION")
# The multi-peer families (spec §6.2), after the others: their draws never move earlier ones'.
_FAMILIES.register("canary", "drift_pipeline.world.probe_families.canary:CANARY")
_FAMILIES.register("consistency", "drift_pipeline.world.probe_families.consistency:CONSISTENCY")
_FAMILIES.register("attribution", "drift_pipeline.world.probe_families.attribution:ATTRIBUTION")
_FAMILIES.register("handoff", "drift_pipeline.world.probe_families.handoff:HANDOFF")


def register_probe_family(name: str, target: str) -> None:
    """Register the family ``name`` as a lazy ``"package.module:NAME"`` target.

    It comes after every family registered so far, installed ones included (so it never
    changes their probes).

    Raises:
        RegistryError: If ``name`` or ``target`` is malformed, or ``name`` is taken.
    """
    _FAMILIES.discover()
    _FAMILIES.register(name, target)


def probe_family_names() -> tuple[str, ...]:
    """Every registered family's name, in registration (= generation) order."""
    return tuple(_FAMILIES.names())


def get_probe_family(name: str) -> ProbeFamily:
    """The registered family ``name``, imported on first use.

    Raises:
        RegistryError: One line: ``name`` is not registered (a ``KeyError`` listing the
            registered names), its module cannot be imported, or its target is not a
            :class:`ProbeFamily` of that name.
    """
    return _FAMILIES.get(name)


def probe_families() -> tuple[ProbeFamily, ...]:
    """Every registered family, imported, in registration order."""
    return tuple(get_probe_family(name) for name in probe_family_names())
