"""The pytest entry point of drift-pipeline: the hooks of :mod:`drift_pipeline.pytest_plugin`.

A module of its own, outside the ``drift_pipeline`` package, because pytest rewrites the
asserts of the package that holds a plugin's entry point: here that is this module alone, so a
test run that does not use the plugin imports the harness exactly as it would without it.
"""

# pytest finds the hooks by their names in this module.
from drift_pipeline.pytest_plugin import *  # noqa: F403
from drift_pipeline.pytest_plugin import __all__ as __all__
