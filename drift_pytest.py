"""The pytest entry point of drift-pipeline: the hooks of :mod:`drift_pipeline.pytest_plugin`.

A module of its own, outside the ``drift_pipeline`` package, because pytest rewrites the
asserts of the package that holds a plugin's entry point: here that is this module alone, so a
test run that does not use the plugin imports the harness exactly as it would without it.
"""

from drift_pipeline.pytest_plugin import (
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]
