"""Dagster-side code that is not a definition: what the definitions share, and the launcher.

``drift_pipeline/defs/`` declares the definitions (assets, checks, jobs, schedules, sensors,
resources) and imports its shared pieces from here: the partitions and the typed keys they use
(:mod:`.partitions`), the resource classes (:mod:`.resources`), the metadata vocabulary
(:mod:`.metadata`), the automation condition (:mod:`.automation`) and the check logic
(:mod:`.checks`). The launcher (:mod:`.launch`: ``drift run --via dagster``, ``drift
backfill``) runs the definitions loaded from that folder (:mod:`.project`) in the order
:mod:`.plan` reads off their asset graph, on the selections of :mod:`.selection`. Nothing here
imports ``drift_pipeline.defs``.
"""
