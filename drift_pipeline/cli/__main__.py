"""``python -m drift_pipeline.cli``: the ``drift`` command."""

from drift_pipeline.cli import main

main()
