"""The Dagster project: partitions, assets by phase, checks, jobs, sensors, schedules, resources.

The only package (with ``drift_pipeline/definitions.py``) that imports Dagster. Assets are thin:
they parse their partition key, call the same plain functions as ``drift run``, write Parquet
under the storage root, and report a fixed vocabulary of metadata (:mod:`.metadata`).
"""
