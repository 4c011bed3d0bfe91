"""The tests: one per (scenario, horizon, arm), each world run once for the arms selected."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._checks import GateFailure, cell_problems
from ._options import GateOptions
from ._record import RunRecord, cell_record, load_baseline, write_record

if TYPE_CHECKING:
    from drift_pipeline.memory import Arm
    from drift_pipeline.pipeline import CellResult
    from drift_pipeline.sources import SourceWorld, WorldSource

__all__ = ["DriftItem", "DriftSuite"]


@dataclass
class WorldRun:
    """What running one world produced: its cells by arm key, or why it could not run."""

    cells: dict[str, CellResult] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    error: str | None = None


class DriftSuite:
    """The scenarios as tests, the worlds run so far and what they produced.

    Args:
        options: The checked options.

    Raises:
        pytest.UsageError: A scenario that cannot be opened, or no scenario declaring a
            horizon of ``--horizon`` (one line per problem).
    """

    def __init__(self, options: GateOptions) -> None:
        from drift_pipeline.memory import Arm, Gate
        from drift_pipeline.pipeline import HorizonNotDeclared, select_horizons
        from drift_pipeline.sources import SourceError, open_sources

        self.options = options
        try:
            opened = open_sources(options.sources)
            for source in opened:
                source.check()
            selection = select_horizons(opened, options.horizons)  # type: ignore[arg-type]
        except HorizonNotDeclared as error:
            raise pytest.UsageError("\n".join(error.lines)) from None
        except SourceError as error:
            raise pytest.UsageError("\n".join(error.lines())) from None
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
        self.sources = selection.sources
        self.notes = selection.notes
        """One line per scenario lacking a horizon asked for (left out, or run at fewer)."""
        gate = Gate.parse(options.gate)
        self.arms: list[Arm] = list(dict.fromkeys(Arm(b, gate) for b in options.backends))
        self.baseline = load_baseline(options.baseline) if options.baseline else None
        self.runs: dict[tuple[str, str], WorldRun] = {}
        self.records: list[RunRecord] = []
        self.leaks: dict[str, str] = {}
        """Backends allowed to leak across entities that the check saw leaking (marked)."""
        self._data: Path | None = options.data
        self._temporary = options.data is None
        self._items: list[DriftItem] = []

    # --- collection -----------------------------------------------------------------------------

    def worlds(self, source: WorldSource) -> list[SourceWorld]:
        """The source's worlds asked for: each selected horizon it declares (never another)."""
        return source.worlds(self.options.horizons)  # type: ignore[arg-type]

    def collect(self, session: pytest.Session) -> list[DriftItem]:
        """One item per world and arm, under a node per scenario file.

        Each file's items are reported as collected, so pytest counts and lists them.
        """
        items: list[DriftItem] = []
        for source in self.sources:
            origin = Path(source.origin).resolve()
            scenario = DriftScenario.from_parent(session, path=origin, suite=self)
            found = [
                DriftItem.from_parent(
                    scenario,
                    name=f"{source.id}[{world.horizon}-{arm.key}]",
                    world=world,
                    arm=arm,
                )
                for world in self.worlds(source)
                for arm in self.arms
            ]
            for item in found:
                item.add_marker("drift")
                item.extra_keyword_matches.update({source.id, item.world.horizon, item.arm.backend})
            report = pytest.CollectReport(scenario.nodeid, "passed", None, list(found))
            session.ihook.pytest_collectreport(report=report)
            items += found
        self._items = items
        return items

    # --- running --------------------------------------------------------------------------------

    @property
    def data(self) -> Path:
        """The storage root of this test run's tables."""
        if self._data is None:
            self._data = Path(tempfile.mkdtemp(prefix="drift-pytest-"))
        return self._data

    def world_run(self, world: SourceWorld, session: pytest.Session) -> WorldRun:
        """The world's cells; the first call runs every world selected, with its arms."""
        if not self.runs:
            self._run_selected(session)
        return self.runs.get((world.source.id, world.horizon), WorldRun(error="it was not run"))

    def _run_selected(self, session: pytest.Session) -> None:
        """Run the selected worlds: one run per set of horizons, each with its selected arms.

        Sources asked for the same horizons and arms share one run, which makes their worlds
        together.
        """
        selected = {id(item) for item in session.items}
        wanted: dict[str, tuple[WorldSource, dict[str, list[Arm]]]] = {}
        for item in self._items:
            if id(item) not in selected:
                continue
            _, arms_by_horizon = wanted.setdefault(item.world.source.id, (item.world.source, {}))
            arms_by_horizon.setdefault(item.world.horizon, []).append(item.arm)
        groups: dict[tuple[tuple[str, ...], tuple[Arm, ...]], list[WorldSource]] = {}
        for source, arms_by_horizon in wanted.values():
            arms = tuple(dict.fromkeys(a for listed in arms_by_horizon.values() for a in listed))
            groups.setdefault((tuple(arms_by_horizon), arms), []).append(source)
        for (selected_horizons, selected_arms), sources in groups.items():
            self._run(sources, selected_horizons, list(selected_arms))

    def _run(self, sources: list[WorldSource], horizons: tuple[str, ...], arms: list[Arm]) -> None:
        from drift_pipeline.memory import BackendStartError, IsolationError, LoopConfig
        from drift_pipeline.pipeline import RunOptions, run_benchmark
        from drift_pipeline.storage import RootBusy

        options = RunOptions(
            arms=arms,
            horizons=horizons,  # type: ignore[arg-type]
            out=self.data,
            loop=LoopConfig(
                call_timeout=self.options.call_timeout,
                max_fault_rate=self.options.max_fault_rate,
                simulated_clock=self.options.simulated_clock,
            ),
            backend_options={k: dict(v) for k, v in self.options.backend_options.items()},
            keep_going=True,
            allow_leaks=self.options.allow_leaks,
        )
        worlds = [(source, h) for source in sources for h in horizons]
        try:
            result = run_benchmark(sources, options)
        except (IsolationError, RootBusy, BackendStartError, ValueError) as error:
            for source, horizon in worlds:
                self.runs[(source.id, horizon)] = WorldRun(error=str(error))
            return
        from drift_pipeline.report import allowed_leaks

        self.leaks.update(allowed_leaks(result.conformance_summary()))
        # Arms that could not start (``backend ARM could not start: …``) and arms whose backend
        # failed the conformance check (``ARM: not scored: …``): one line each.
        lines = [*result.start_failures, *result.check_failures]
        by_id = {source.id: source for source in sources}
        for source, horizon in worlds:
            run = self.runs.setdefault((source.id, horizon), WorldRun())
            for arm in arms:
                said = [
                    line
                    for line in lines
                    if line.startswith((f"backend {arm.key} could not start", f"{arm.key}: "))
                ]
                if said:
                    run.failures[arm.key] = said[0]
        for cell in result.cells:
            self.runs[(cell.scenario, cell.horizon)].cells[cell.arm.key] = cell
            self.records.append(cell_record(self.data, by_id[cell.scenario], cell))

    # --- after the tests ------------------------------------------------------------------------

    def finish(self) -> None:
        """Write ``--drift-output``; remove the temporary data folder."""
        try:
            if self.options.output is not None and self.records:
                cells = [cell for run in self.runs.values() for cell in run.cells.values()]
                write_record(self.options.output, self.sources, cells, self.records)
        finally:
            if self._temporary and self._data is not None:
                shutil.rmtree(self._data, ignore_errors=True)

    def summary_lines(self) -> list[str]:
        """The scenarios ``--horizon`` left out, the leaderboard of what ran, where it went."""
        cells = [cell for run in self.runs.values() for cell in run.cells.values()]
        if not cells:
            return list(self.notes)
        from drift_pipeline.report import render_leaderboard, standings

        lines = [*self.notes, *render_leaderboard(standings(cells, None, self.leaks)).splitlines()]
        if self.options.output is not None:
            lines.append(f"figures and answers written to {self.options.output}")
        return lines


class DriftScenario(pytest.File):
    """A scenario file (or imported dataset) whose worlds and arms are the tests below it."""

    def __init__(self, *, suite: DriftSuite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> list[pytest.Item]:
        """Nothing by pytest's own walk: the suite makes the items (see DriftSuite.collect)."""
        return []


class DriftItem(pytest.Item):
    """One (scenario, horizon, arm): passes when its cell meets every bound and the baseline."""

    parent: DriftScenario

    def __init__(self, *, world: SourceWorld, arm: Arm, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = self.parent.suite
        self.world = world
        self.arm = arm

    def runtest(self) -> None:
        """Run the world if it has not run, then check this arm's cell.

        Raises:
            GateFailure: The cell is below a bound, worse than the baseline, invalid, or missing.
        """
        run = self.suite.world_run(self.world, self.session)
        where = f"{self.world.source.id} {self.world.horizon} {self.arm.key}"
        if run.error is not None:
            raise GateFailure(f"{where}: the run could not be made: {run.error}")
        if self.arm.key in run.failures:
            raise GateFailure(f"{where}: {run.failures[self.arm.key]}")
        cell = run.cells.get(self.arm.key)
        if cell is None:
            raise GateFailure(f"{where}: the run produced no cell for this arm")
        problems = cell_problems(self.suite, self.world, cell)
        if problems:
            raise GateFailure("\n".join([f"{where}:", *problems]))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        """The gate's own message (metric, figures, probes), without a traceback."""
        if isinstance(excinfo.value, GateFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the test comes from, as pytest prints it."""
        return self.path, None, f"drift: {self.name}"
