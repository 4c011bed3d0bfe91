"""The Dagster project: Dagster definitions, and the launcher that runs them on an instance.

Partitions, assets by phase, checks, jobs, automation conditions, sensors, schedules and
resources. The only package (with ``drift_pipeline/definitions.py``) that imports Dagster.
Assets are thin: they parse their partition key, call the same plain functions as ``drift run``
(:mod:`drift_pipeline.pipeline`), write Parquet under the storage root, and report a fixed
vocabulary of metadata (:mod:`.metadata`). :mod:`.launch` runs the jobs in process
(``drift run --via dagster``, ``drift backfill``) in the order :mod:`.plan` reads off the asset
graph, or hands a backfill to the daemon.
"""
