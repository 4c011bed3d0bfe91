"""What a run's manifest says about its arms' configuration.

Two runs of one backend with different ``--backend-config`` options are different experiments:
the manifest (and the signed record built from it) names each arm's options, secrets masked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from drift_pipeline.memory import Arm, recorded_options
from drift_pipeline.storage import RootLike, StorageRoot


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


RUN_MANIFEST = "_manifests/run.json"
"""Where a run writes its manifest, relative to its storage root."""


def options_changed(root: RootLike, arm: Arm, options: Mapping[str, Any]) -> bool:
    """Whether the cells of ``arm`` stored under ``root`` were run with options other than these.

    The last run's manifest says which options each of its arms had. An arm it does not name
    ran in an earlier run whose options are not known: its cells are taken as run with none,
    so they are reused only when none are asked for now.
    """
    storage = StorageRoot.from_url(root)
    stored: Mapping[str, Any] = {}
    if storage.exists(RUN_MANIFEST):
        try:
            stored = json.loads(storage.read_text(RUN_MANIFEST)).get("arm_options") or {}
        except (ValueError, AttributeError):  # not a manifest this package wrote
            stored = {}
    wanted = recorded_options(options)
    return bool(stored.get(arm.key, {}) != wanted)
