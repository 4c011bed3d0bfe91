"""Assets by phase: world tables, memory runs, baselines and evaluation, reports.

Each module declares its own assets; ``drift_pipeline.definitions`` loads them from the folder.
"""
