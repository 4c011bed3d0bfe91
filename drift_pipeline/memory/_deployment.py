"""What a backend declares about where it runs: its deployment, and whether its models are metered.

Where it runs sets its latency budget (spec §7.8 sets local and cloud targets apart); whether its
models run outside the harness's meter decides whether its token cost can be known.
"""

from __future__ import annotations

from typing import Final

from ._protocol import MODELS_OUTSIDE_METER

__all__ = ["DEPLOYMENTS", "deployment_of", "models_outside_meter_of"]

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


def models_outside_meter_of(backend: object) -> bool:
    """Whether ``backend`` declares model calls the meter cannot see (``False`` by default).

    See :data:`~._protocol.MODELS_OUTSIDE_METER`.

    Raises:
        ValueError: A declaration that is not ``True`` or ``False`` (one line).
    """
    declared = getattr(backend, MODELS_OUTSIDE_METER, False)
    if not isinstance(declared, bool):
        raise ValueError(f"{MODELS_OUTSIDE_METER} is {declared!r:.40}, expected True or False")
    return declared
