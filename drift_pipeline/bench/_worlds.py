"""The worlds the bench measures on: the canonical scenario and variants derived from it.

Variants (a 5000-session horizon) are written as YAML into the bench's own temporary folder,
never into the repository; they keep the canonical scenario's id, so its derived seed, and
change only the horizon.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from drift_pipeline.scenario import HorizonName, LoadedScenario, load_scenario
from drift_pipeline.world import generate_worlds

CANONICAL_FILE = "ua-baseline-001.yaml"
"""The canonical scenario (the specification's own example), inside the suite folder."""

LONG: HorizonName = "long"


def derive_horizon(canonical: Path, sessions: int, folder: Path) -> Path:
    """Write a copy of ``canonical`` whose only horizon is ``long`` with ``sessions`` sessions.

    The session gap is the canonical long horizon's; checkpoints stay as declared (each applies
    to every horizon at least that long; the final session is always one).

    Args:
        canonical: The canonical scenario file.
        sessions: Sessions of the derived long horizon.
        folder: Where to write the derived file (created if missing).

    Returns:
        The derived file's path (``<stem>-long<sessions>.yaml``).

    Raises:
        ValueError: The canonical file has no long horizon.
    """
    data: dict[str, Any] = yaml.safe_load(canonical.read_text(encoding="utf-8"))
    horizons = data.get("horizon") or {}
    if LONG not in horizons:
        raise ValueError(f"{canonical}: horizon.long is missing; the bench derives from it")
    data["horizon"] = {LONG: {**horizons[LONG], "sessions": sessions}}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{canonical.stem}-long{sessions}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@dataclass
class BenchWorkspace:
    """A temporary folder holding every world and output of one bench run.

    Attributes:
        suite: The canonical suite folder (``scenarios/``).
        folder: The temporary folder; removed by :meth:`close`.
        log: Progress lines.
    """

    suite: Path
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="drift-bench-")))
    log: Callable[[str], None] = lambda _line: None
    _worlds: dict[int, tuple[LoadedScenario, Path]] = field(default_factory=dict)

    @property
    def canonical(self) -> Path:
        """The canonical scenario file."""
        return self.suite / CANONICAL_FILE

    def path(self, name: str) -> Path:
        """A fresh path inside the workspace (not created)."""
        return self.folder / name

    def long_world(self, sessions: int | None = None) -> tuple[LoadedScenario, Path]:
        """The canonical long-horizon world (or a ``sessions``-long variant), generated once.

        Returns:
            The scenario and the storage root holding its world.
        """
        key = sessions or 0
        if key not in self._worlds:
            if sessions is None:
                loaded = load_scenario(self.canonical)
            else:
                loaded = load_scenario(
                    derive_horizon(self.canonical, sessions, self.path("scenarios"))
                )
            root = self.path(f"world-{LONG}{sessions or ''}")
            self.log(f"generating {loaded.spec.id} {LONG} ({sessions or 'canonical'}) → {root}")
            generate_worlds([loaded], root, (LONG,))
            self._worlds[key] = (loaded, root)
        return self._worlds[key]

    def adopt_long_world(self, loaded: LoadedScenario, root: Path) -> None:
        """Use an already generated canonical long world (the generation measurement's)."""
        self._worlds.setdefault(0, (loaded, root))

    def close(self) -> None:
        """Remove the temporary folder."""
        shutil.rmtree(self.folder, ignore_errors=True)
