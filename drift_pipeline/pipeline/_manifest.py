"""What a run's manifest says about its arms' configuration.

Two runs of one backend with different ``--backend-config`` options are different experiments:
the manifest (and the signed record built from it) names each arm's options, secrets masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from drift_pipeline.memory import Arm, recorded_options


def arm_options(
    arms: Iterable[Arm], backend_options: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each arm's configured constructor options by arm key, as the manifest records them.

    The options given for the arm's backend (``--backend-config``, ``backend_options=``), not
    the defaults its registration fills in (those follow from its version). An arm given no
    options is recorded with ``{}``, so a reader can tell "none" from "not recorded". A value
    whose option name looks like a secret is ``[redacted]``.
    """
    return {
        arm.key: recorded_options(backend_options.get(arm.backend, {}))
        for arm in sorted(set(arms), key=lambda arm: arm.key)
    }
