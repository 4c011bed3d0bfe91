r"""DRIFT as a pytest gate: scenarios run as test cases in a memory system's own repository.

Installed with the package (entry point ``pytest11``), and inert unless ``--drift-scenarios``
is given: then every (scenario, horizon, arm) is one test, which fails when a metric is below
its minimum (``--drift-min mvot=0.2``), above its maximum (``--drift-max``), or worse than a
stored baseline beyond the paired 95% interval (``--drift-baseline``)::

    pytest --drift-scenarios scenarios/ --drift-backend mypkg.memory:MyBackend \\
        --horizon short --drift-min mvot=0.2 --drift-output results/run.json -k ua-baseline-001

Worlds run only for the tests selected, each world once for all its arms, under the same gate,
sandbox and fault recording as ``drift run``. ``--drift-output`` writes the run's figures and
per-probe answers; that file is a baseline for a later run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ._options import add_options

if TYPE_CHECKING:
    from ._suite import DriftSuite

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]

_SUITE: pytest.StashKey[DriftSuite] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``drift`` option group (inert until ``--drift-scenarios`` is given)."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Check the options and open the scenarios, only when ``--drift-scenarios`` is given.

    Raises:
        pytest.UsageError: One line naming the bad option value.
    """
    if not config.getoption("drift_scenarios"):
        return
    from ._options import read_options
    from ._suite import DriftSuite

    config.addinivalue_line("markers", "drift: a DRIFT scenario run as a test case")
    config.stash[_SUITE] = DriftSuite(read_options(config))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add one test per (scenario, horizon, arm), before ``-k`` and ``-m`` select."""
    suite = config.stash.get(_SUITE, None)
    if suite is not None:
        items.extend(suite.collect(session))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write ``--drift-output`` and remove a temporary data folder."""
    suite = session.config.stash.get(_SUITE, None)
    if suite is not None:
        suite.finish()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Scenarios ``--horizon`` left out, the leaderboard of what ran, where the output went."""
    suite = terminalreporter.config.stash.get(_SUITE, None)
    if suite is None:
        return
    lines = suite.summary_lines()
    if lines:
        terminalreporter.section("DRIFT")
        for line in lines:
            terminalreporter.write_line(line)
