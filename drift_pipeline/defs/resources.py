"""The resources every asset, sensor and schedule runs with, bound by name.

``storage`` is rooted at ``$DRIFT_DATA_ROOT`` (default ``data``), ``scenarios`` reads
``$DRIFT_SCENARIOS`` (default ``scenarios``), ``loop`` has the settings of ``drift run``. The
classes live in :mod:`drift_pipeline.orchestration.resources`, where the launcher binds its own.
"""

import dagster as dg

from drift_pipeline.orchestration.resources import MemoryLoop, default_catalog, default_storage


@dg.definitions
def resources() -> dg.Definitions:
    """The ``storage``, ``scenarios`` and ``loop`` resources, read from the environment."""
    return dg.Definitions(
        resources={
            "storage": default_storage(),
            "scenarios": default_catalog(),
            "loop": MemoryLoop(),
        }
    )
