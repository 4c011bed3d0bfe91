"""Declarative automation: when a world or cell asset is due, so the daemon orders the refresh.

Every world, cell and report asset carries :data:`REFRESH`. The ``stale_cells`` sensor (an
automation-condition sensor, stopped by default) evaluates them: a partition is requested when
it is missing (from the sensor's second tick on) or when an input was re-materialized since it
last ran, and only once none of its inputs is missing or in progress. The asset graph's
partition mappings do the ordering: a world's tables, then its reference compressor and
baselines, then every cell on it, then the reports. A failed partition waits for a change
upstream (or a manual rerun): it is not requested again on every tick.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

_MISSING_NOT_FAILED: Any = dg.AutomationCondition.missing() & ~(
    dg.AutomationCondition.execution_failed()
)
REFRESH: dg.AutomationCondition[Any] = (
    dg.AutomationCondition.eager()
    .replace("newly_missing", _MISSING_NOT_FAILED)
    .with_label("missing_or_stale")
)
"""Dagster's ``eager`` condition, except that partitions missing when the sensor starts count.

``eager`` alone requests only partitions that become missing after it was first evaluated, so
switching the sensor on over registered but never-run cells would leave them alone. A missing
partition whose last run failed is left alone too, until one of its inputs updates.
"""
