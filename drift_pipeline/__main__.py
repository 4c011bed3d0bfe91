"""``python -m drift_pipeline``: the ``drift`` command."""

from drift_pipeline.cli import main

main()
