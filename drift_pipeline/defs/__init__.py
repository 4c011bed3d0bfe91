"""The Dagster definitions: assets by phase, jobs, sensors, schedules and resources.

Every module here declares definitions and nothing else; ``drift_pipeline/definitions.py``
loads the folder (``dagster.load_from_defs_folder``). What they share (partitions, resource
classes, the metadata vocabulary, the automation condition, the check logic) and the launcher
that runs them in process live in :mod:`drift_pipeline.orchestration`. Assets are thin: they
parse their partition key, call the same plain functions as ``drift run``
(:mod:`drift_pipeline.pipeline`), write Parquet under the storage root, and report a fixed
vocabulary of metadata.
"""
