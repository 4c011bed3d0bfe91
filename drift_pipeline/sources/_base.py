"""What every world source is: where worlds come from, whether generated or imported.

A source has an identity (id, version, hash of its input), declares its horizons, and writes the
same five world tables (``latent_profiles``, ``event_schedules``, ``transcripts``,
``ground_truth``, ``probes``) plus a world manifest for each horizon. Everything downstream (the
memory loop, the reader, metrics, Dagster partitions) reads those tables and asks the source for
the few facts the tables do not hold: replicates, sessions per horizon, the entities' declared
context windows, and the entry that names it in a run's manifest.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version as package_version
from typing import TYPE_CHECKING, Any, NamedTuple

from drift_pipeline.keys import WorldKey
from drift_pipeline.storage import WORLD_TABLES, RootLike, StagedWrite, StorageRoot
from drift_pipeline.world import world_manifest_path

if TYPE_CHECKING:
    from drift_pipeline.scenario import HorizonName
    from drift_pipeline.world import WorldSummary
    from drift_pipeline.world.synthesis import Synthesizer

__all__ = ["ProgressHook", "SourceEntity", "SourceError", "SourceWorld", "WorldSource"]

ProgressHook = Callable[[int], None]
"""Called with a number of sessions written (for progress bars)."""


class SourceError(ValueError):
    """A source cannot be opened or read: one line per problem, naming what and where.

    Args:
        message: The first (often only) problem.
        more: Further problems, one line each (every invalid file of a folder, say).
    """

    def __init__(self, message: str, more: Sequence[str] = ()) -> None:
        super().__init__(message)
        self._lines = [message, *more]

    def lines(self) -> list[str]:
        """Every problem, one line each."""
        return list(self._lines)


@dataclass(frozen=True)
class SourceEntity:
    """An entity of a source, as far as the harness needs to know it.

    Attributes:
        entity_id: The id used in the tables (speaker, asker, subject).
        entity_type: Its registered type (``human``, ``assistant_agent``, …).
        context_window: The context window it declares, in tokens (agents); ``None`` if none.
    """

    entity_id: str
    entity_type: str
    context_window: int | None = None


class WorldSource(ABC):
    """Where a world comes from: a generated scenario or imported data.

    Subclasses give the identity and the horizons and implement :meth:`write`; the world
    manifest, the staleness check and the run-manifest entry have defaults that suit imported
    data. Sources must pickle (``drift run --jobs`` hands them to worker processes).

    Attributes:
        kind: The source's kind, recorded in manifests (``scenario``, or an importer's prefix).
        audit: How the answerability of its probes is audited, in one sentence.
        not_applicable: Metrics its data cannot support (a question-answering dataset has no
            action or canary questions): reported as not applicable, never as a figure.
    """

    kind: str = "source"
    audit: str = "not audited"
    not_applicable: frozenset[str] = frozenset()

    @property
    @abstractmethod
    def id(self) -> str:
        """The source's id: the ``scenario`` value of its tables and the first part of its keys."""

    @property
    @abstractmethod
    def version(self) -> str:
        """The version its author declares (recorded with every result)."""

    @property
    @abstractmethod
    def content_hash(self) -> str:
        """sha256 of the input the worlds are made from (a scenario file, a dataset file)."""

    @property
    @abstractmethod
    def origin(self) -> str:
        """Where it was read from (a path), for messages."""

    @property
    @abstractmethod
    def horizons(self) -> tuple[HorizonName, ...]:
        """The horizons it declares, in order (short, medium, long)."""

    @property
    @abstractmethod
    def replicates(self) -> int:
        """Independent replicates per horizon."""

    @abstractmethod
    def sessions(self, horizon: HorizonName) -> int:
        """Sessions per replicate at ``horizon``."""

    @abstractmethod
    def checkpoints(self, horizon: HorizonName) -> list[int]:
        """The checkpoints (sessions done when probes are asked) at ``horizon``."""

    @property
    def entities(self) -> tuple[SourceEntity, ...]:
        """Its entities (empty when it declares none, as imported data may)."""
        return ()

    def describe_audit(self) -> str:
        """How the answerability of its probes is audited (see :attr:`audit`)."""
        return self.audit

    def check(self) -> None:  # noqa: B027  # most sources have nothing to check
        """Raise if its worlds cannot be written (e.g. a paradigm without a generator).

        Raises:
            ValueError: One line saying why (``GenerationUnsupported`` for scenarios).
        """

    def world(self, horizon: HorizonName) -> WorldKey:
        """The key of its world at ``horizon``."""
        return WorldKey(self.id, horizon)

    def worlds(self, horizons: Sequence[HorizonName] = ()) -> list[SourceWorld]:
        """Its worlds at ``horizons`` (empty: every declared horizon), in declared order."""
        return [SourceWorld(self, h) for h in self.horizons if not horizons or h in horizons]

    @abstractmethod
    def write(
        self,
        horizon: HorizonName,
        writer: StagedWrite,
        synthesizer: Synthesizer | None = None,
        progress: ProgressHook | None = None,
        *,
        workers: int | None = None,
    ) -> WorldSummary:
        """Stage the world's five tables and its manifest (:meth:`world_manifest`).

        Args:
            horizon: The horizon to write.
            writer: Where to stage (committed by the caller).
            synthesizer: Writes generated sessions (generated sources only; others ignore it).
            progress: Called with the number of sessions written, as they are.
            workers: Processes that generate side by side (generated sources only).
        """

    def world_manifest(
        self, horizon: HorizonName, synthesizer: Synthesizer | None = None
    ) -> dict[str, object]:
        """Identity of a written world: a rerun with equal identity can reuse the tables.

        A source with metrics its data cannot support lists them (``not_applicable``), so that
        the world's cells can be scored without the source at hand (Dagster, stored cells).
        """
        manifest: dict[str, object] = {
            "source": self.kind,
            "scenario": self.id,
            "scenario_version": self.version,
            "scenario_sha256": self.content_hash,
            "horizon": horizon,
            "replicates": self.replicates,
            "drift_pipeline": _package_version(),
        }
        if self.not_applicable:
            manifest["not_applicable"] = sorted(self.not_applicable)
        return manifest

    def manifest_entry(self) -> dict[str, Any]:
        """The entry naming this source in a run's manifest (its ``scenarios`` list)."""
        entry: dict[str, Any] = {
            "id": self.id,
            "version": self.version,
            "sha256": self.content_hash,
            "source": self.kind,
            "replicates": self.replicates,
        }
        if self.not_applicable:
            entry["not_applicable"] = sorted(self.not_applicable)
        return entry

    def is_current(
        self, root: RootLike, horizon: HorizonName, synthesizer: Synthesizer | None = None
    ) -> bool:
        """Whether ``root`` holds all five tables of this world, written from this very input.

        ``synthesizer`` matters to generated sources only (see :meth:`world_manifest`).
        """
        storage = StorageRoot.from_url(root)
        try:
            recorded = json.loads(storage.read_text(world_manifest_path(self.id, horizon)))
        except (FileNotFoundError, ValueError):
            return False
        if recorded != self.world_manifest(horizon, synthesizer):
            return False
        world = self.world(horizon)
        return all(storage.partition_exists(table, world) for table in WORLD_TABLES)

    def stage_manifest(
        self, horizon: HorizonName, writer: StagedWrite, synthesizer: Synthesizer | None = None
    ) -> None:
        """Stage the world manifest of ``horizon`` beside its tables."""
        writer.put_text(
            world_manifest_path(self.id, horizon),
            json.dumps(self.world_manifest(horizon, synthesizer), indent=2, sort_keys=True) + "\n",
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r} from {self.origin!r})"


class SourceWorld(NamedTuple):
    """One world of a run: a source at one of its horizons."""

    source: WorldSource
    horizon: HorizonName

    @property
    def key(self) -> WorldKey:
        """The world's key."""
        return self.source.world(self.horizon)


@cache
def _package_version() -> str:
    # Reading the installed metadata parses files: once per process is enough.
    return package_version("drift-pipeline")
