"""Resources: where tables live, where scenarios come from, and how the memory loop runs."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
from pydantic import Field

from drift_pipeline.memory import LoopConfig
from drift_pipeline.pipeline import ABLATIONS_FILE, Ablation, connect, load_ablations
from drift_pipeline.scenario import ScenarioError, scenario_files
from drift_pipeline.sources import (
    ScenarioSource,
    SourceError,
    WorldSource,
    data_path,
    names_imported_data,
    open_source,
)
from drift_pipeline.storage import StorageRoot

DATA_ROOT_ENV = "DRIFT_DATA_ROOT"
"""Environment variable naming the storage root (default ``data``)."""
SCENARIOS_ENV = "DRIFT_SCENARIOS"
"""Environment variable listing scenario files or folders and imported data (``locomo:FILE``),
``os.pathsep``-separated."""


class DriftStorage(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The storage root of every table: a local folder or ``s3://bucket/prefix``.

    Attributes:
        root: Where ``<table>/scenario=…/horizon=…[/arm=…]/part-0.parquet`` live. S3 roots take
            their endpoint from ``DRIFT_S3_ENDPOINT_URL`` and credentials from the standard AWS
            variables (set them for the code location and the run workers).
    """

    root: str = Field(default="data", description="Storage root: a folder or s3://bucket/prefix.")

    def path(self) -> StorageRoot:
        """The root (local folder or S3 prefix) every reader and writer goes through."""
        return StorageRoot.from_url(self.root)

    def connect(self) -> duckdb.DuckDBPyConnection:
        """DuckDB with one view per table found under the root."""
        return connect(self.path())


def default_storage() -> DriftStorage:
    """``DriftStorage`` rooted at ``$DRIFT_DATA_ROOT`` or ``data``."""
    return DriftStorage(root=os.environ.get(DATA_ROOT_ENV) or "data")


class ScenarioCatalog(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Where world partitions find their sources, and the ablation list.

    Attributes:
        paths: Scenario files or folders (folders contribute their ``*.yaml``, and an
            ``ablations.yaml`` in a folder lists the ablation arms), and imported data named
            as ``drift run`` names it (``locomo:FILE.json``): every world they hold is a world
            partition.
    """

    paths: list[str] = Field(
        default=["scenarios"],
        description="Scenario files or folders of them, or PREFIX:PATH of imported data.",
    )

    def files(self) -> list[Path]:
        """Every scenario file, in the order given."""
        return scenario_files([p for p in self.paths if not names_imported_data(p)])

    def imported(self) -> list[str]:
        """Every ``PREFIX:PATH`` entry, in the order given."""
        return [p for p in self.paths if names_imported_data(p)]

    def scenarios(self) -> list[WorldSource]:
        """Every source, validated: the scenario files', then the imported data's.

        Raises:
            ScenarioError: If a scenario file is invalid.
            SourceError: If imported data cannot be read.
        """
        found: list[WorldSource] = [_load(str(path), *_stamp(path)) for path in self.files()]
        for text in self.imported():
            found.extend(_open_imported(text, *_stamp(data_path(text))))
        return found

    def load(self, scenario_id: str) -> WorldSource:
        """The source with this id (another file being invalid does not matter).

        Raises:
            LookupError: If no valid file under ``paths`` declares it (naming the paths, and
                the invalid files, one of which may be the one meant).
        """
        invalid: list[str] = []
        for path in self.files():
            try:
                loaded = _load(str(path), *_stamp(path))
            except ScenarioError as error:
                invalid.append(error.lines()[0])
                continue
            if loaded.id == scenario_id:
                return loaded
        for text in self.imported():
            try:
                opened = _open_imported(text, *_stamp(data_path(text)))
            except (SourceError, OSError) as error:
                invalid.append(str(error).splitlines()[0])
                continue
            for source in opened:
                if source.id == scenario_id:
                    return source
        hint = f"; invalid files: {' | '.join(invalid)}" if invalid else ""
        raise LookupError(
            f"no scenario with id {scenario_id!r} in {', '.join(self.paths)} "
            f"(set the catalog paths, {SCENARIOS_ENV}){hint}"
        )

    def ablations(self) -> list[Ablation]:
        """Ablations listed in ``ablations.yaml`` of every folder in ``paths``."""
        found: list[Ablation] = []
        for item in self.paths:
            if Path(item).is_dir():
                found.extend(load_ablations(Path(item) / ABLATIONS_FILE))
        return found


def default_catalog() -> ScenarioCatalog:
    """``ScenarioCatalog`` over ``$DRIFT_SCENARIOS`` or ``scenarios``."""
    return ScenarioCatalog(paths=catalog_paths(os.environ.get(SCENARIOS_ENV, "")) or ["scenarios"])


def catalog_paths(value: str) -> list[str]:
    """The entries of a ``DRIFT_SCENARIOS`` value.

    On POSIX the separator is ``:``, which also ends an importer's prefix: a piece that is a
    bare prefix (``locomo``) and no existing path is joined to the piece after it
    (``locomo:/data/locomo10.json``).
    """
    pieces = value.split(os.pathsep)
    entries: list[str] = []
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        if (
            re.fullmatch(r"[a-z][a-z0-9_]+", piece)
            and not Path(piece).exists()
            and index + 1 < len(pieces)
        ):
            piece = f"{piece}:{pieces[index + 1]}"
            index += 1
        if piece:
            entries.append(piece)
        index += 1
    return entries


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=256)
def _load(path: str, mtime_ns: int, size: int) -> ScenarioSource:
    # Keyed by modification stamp: an edited file is read again, an unchanged one is not.
    return ScenarioSource.load(path)


@lru_cache(maxsize=16)
def _open_imported(text: str, mtime_ns: int, size: int) -> tuple[WorldSource, ...]:
    # A dataset holds many worlds and every asset run asks for one: read it once per stamp.
    return tuple(open_source(text))


class MemoryLoop(dg.ConfigurableResource):  # type: ignore[type-arg]
    """How cells run their backends (the same settings as ``drift run``).

    Attributes:
        call_timeout: Seconds before a store/retrieve call is a fault.
        isolate: Sandbox the backends (off only for debugging; recorded in the manifest).
        concurrency: Replicates run at once.
        backend_options: Constructor options per backend name.
        max_consecutive_faults: Faulted calls of one kind in a row in a replicate after which
            its remaining calls of that kind are recorded as skipped (0: never skip).
        max_fault_rate: Share of a cell's calls that may fault or be skipped; past it the cell
            is invalid (reported with its fault rate, never ranked).
        simulated_clock: Backends' clocks read each session's simulated time during its
            calls (off: the real time).
    """

    call_timeout: float = Field(default=30.0, description="Seconds before a call is a fault.")
    isolate: bool = Field(default=True, description="Run backends in the sandbox.")
    concurrency: int = Field(default=4, description="Replicates run at once per cell.")
    backend_options: dict[str, dict[str, Any]] = Field(
        default={}, description="Constructor options per backend name."
    )
    max_consecutive_faults: int = Field(
        default=LoopConfig.max_consecutive_faults,
        description="Faulted calls of one kind in a row in a replicate before its remaining "
        "calls of that kind are skipped (0: never).",
    )
    max_fault_rate: float = Field(
        default=LoopConfig.max_fault_rate,
        description="Share of a cell's calls that may fault or be skipped before it is invalid.",
    )
    simulated_clock: bool = Field(
        default=LoopConfig.simulated_clock,
        description="Backends' clocks read each session's simulated time during its calls.",
    )

    def config(self, root: StorageRoot) -> LoopConfig:
        """The loop settings, with a local storage root protected from backends."""
        return LoopConfig(
            self.call_timeout,
            self.isolate,
            root.protect_paths(),
            self.concurrency,
            max_consecutive_faults=self.max_consecutive_faults,
            max_fault_rate=self.max_fault_rate,
            simulated_clock=self.simulated_clock,
        )
