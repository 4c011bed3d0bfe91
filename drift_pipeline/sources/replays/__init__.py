"""Replays of published memory datasets (LoCoMo, LongMemEval) as imported worlds.

Each importer reads the user's own copy of a dataset (never shipped with the package), checks
every record it needs, and hands :class:`~drift_pipeline.sources.TableSource` the five world
tables, so every backend, gate, reader, table and Dagster asset works on the replay unchanged.
The importers are registered lazily under their prefixes (``locomo:PATH``,
``longmemeval:PATH``); importing this package imports neither.
"""

__all__: list[str] = []
