"""Fixtures of the evaluation tests.

The metric fixtures include canary probes; no canary family ships yet, so the example family of
``tests/probe_family_example.py`` is registered for every test here, exactly as an installed
family would be.
"""

from collections.abc import Iterator

import pytest
from probe_family_example import register_canary


@pytest.fixture(scope="package", autouse=True)
def canary_family() -> Iterator[None]:
    """The example canary family, registered for these tests (module fixtures included)."""
    with pytest.MonkeyPatch.context() as patch:
        register_canary(patch)
        yield
