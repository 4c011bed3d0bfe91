"""Where a backend runs, for the spec's latency budget (§7.8 sets local and cloud targets apart)."""

from __future__ import annotations

from typing import Final

__all__ = ["DEPLOYMENTS", "deployment_of"]

DEPLOYMENTS: Final = ("local", "cloud")
"""Where a backend runs (spec §7.8 budgets each apart): in or beside the harness, or a service."""


def deployment_of(backend: object) -> str:
    """Where ``backend`` runs: its ``deployment`` attribute, ``local`` when it declares none.

    A built-in or in-process adapter runs ``local``; an adapter to a remote service says
    ``cloud`` (a class attribute, or set by its constructor from its own configuration).

    Raises:
        ValueError: A declaration other than ``local`` or ``cloud`` (one line).
    """
    declared = getattr(backend, "deployment", "local")
    if declared not in DEPLOYMENTS:
        raise ValueError(f"deployment is {declared!r:.40}, expected 'local' or 'cloud'")
    return str(declared)
