"""Typed keys of worlds and cells, parsed and spelled in this one place.

A *world* is one source at one horizon, a *cell* is one arm on one world. Their partition keys
are what Dagster shows and what storage folders are named after:

- world: ``<source id>/<horizon>`` (``ua-baseline-001/long``), mirroring the hive folders
  ``scenario=<source id>/horizon=<horizon>``;
- cell: ``<arm>|<source id>/<horizon>`` (``bm25@soft:3|ua-baseline-001/long``), the spelling
  Dagster gives a two-dimensional key (dimensions ordered by name, joined with ``|``).

The keys sit below every phase, so a cell key holds its arm as the arm's key string
(``<backend>@<gate>``); :meth:`drift_pipeline.memory.Arm.parse` turns it into the typed arm
where the memory loop needs one.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = [
    "ARM_SEPARATOR",
    "CELL_SEPARATOR",
    "HORIZON_NAMES",
    "WORLD_SEPARATOR",
    "CellKey",
    "HorizonName",
    "WorldKey",
]

HorizonName = Literal["short", "medium", "long"]
"""A horizon of a scenario (its own trajectory of sessions)."""
HORIZON_NAMES: tuple[HorizonName, ...] = ("short", "medium", "long")
"""Every horizon, shortest first; defined here, below the scenario models, so that parsing a
key or offering ``--horizon`` choices does not build them."""

WORLD_SEPARATOR = "/"
"""Between source id and horizon in a world key; mirrors the hive folders."""
CELL_SEPARATOR = "|"
"""Between arm key and world key in a cell key (Dagster's multi-partition separator)."""
ARM_SEPARATOR = "@"
"""Between backend and gate in an arm key."""

_UNSAFE = ("=", "\\", "\n", "\r")
"""Characters a partition value cannot hold: it names a ``key=value`` folder."""


def _folder_safe(value: str) -> bool:
    return bool(value) and value not in (".", "..") and not any(c in value for c in _UNSAFE)


class WorldKey(NamedTuple):
    """One world: a source (a scenario, or imported data) at one horizon.

    Attributes:
        source_id: The source's id (stored in the tables' ``scenario`` column).
        horizon: The horizon name.
    """

    source_id: str
    horizon: HorizonName

    @property
    def partition_key(self) -> str:
        """The partition key, ``<source id>/<horizon>``."""
        return f"{self.source_id}{WORLD_SEPARATOR}{self.horizon}"

    @property
    def partition_values(self) -> dict[str, str]:
        """The hive partition values of the world's tables (``scenario``, ``horizon``)."""
        return {"scenario": self.source_id, "horizon": self.horizon}

    def __str__(self) -> str:
        return self.partition_key

    @classmethod
    def of(cls, source_id: str, horizon: str) -> WorldKey:
        """The world of ``source_id`` at ``horizon`` (a stored ``horizon`` value, say), checked.

        Raises:
            ValueError: Naming the key and the expected form.
        """
        return cls.parse(f"{source_id}{WORLD_SEPARATOR}{horizon}")

    @classmethod
    def parse(cls, key: str) -> WorldKey:
        """Parse ``<source id>/<horizon>``.

        Raises:
            ValueError: Naming the key and the expected form.
        """
        source_id, sep, horizon = key.rpartition(WORLD_SEPARATOR)
        if (
            not sep
            or not _folder_safe(source_id)
            or WORLD_SEPARATOR in source_id
            or CELL_SEPARATOR in source_id
            or "..." in source_id
            or horizon not in HORIZON_NAMES
        ):
            raise ValueError(
                f"world key {key!r} is not '<scenario id>/<horizon>' with a horizon of "
                f"{', '.join(HORIZON_NAMES)}"
            )
        return cls(source_id, horizon)


class CellKey(NamedTuple):
    """One cell: an arm on a world.

    Attributes:
        world: The world.
        arm_key: The arm's key, ``<backend>@<gate>`` (``Arm.parse`` gives the typed arm).
    """

    world: WorldKey
    arm_key: str

    @property
    def partition_key(self) -> str:
        """The partition key, ``<arm>|<source id>/<horizon>``."""
        return f"{self.arm_key}{CELL_SEPARATOR}{self.world.partition_key}"

    @property
    def partition_values(self) -> dict[str, str]:
        """The hive partition values of the cell's tables (``scenario``, ``horizon``, ``arm``)."""
        return {**self.world.partition_values, "arm": self.arm_key}

    def __str__(self) -> str:
        return self.partition_key

    @classmethod
    def parse(cls, key: str) -> CellKey:
        """Parse ``<arm>|<source id>/<horizon>`` (also a Dagster ``MultiPartitionKey``).

        Only the arm key's shape is checked here (``<backend>@<gate>``); its gate is checked
        where it is parsed into an arm.

        Raises:
            ValueError: Naming the key and the expected form.
        """
        arm_key, sep, world = str(key).partition(CELL_SEPARATOR)
        if not sep or CELL_SEPARATOR in world:
            raise ValueError(f"cell key {key!r} is not '<arm>|<scenario id>/<horizon>'")
        backend, at, gate = arm_key.rpartition(ARM_SEPARATOR)
        if not at or not backend or not gate or not _folder_safe(arm_key) or "/" in arm_key:
            raise ValueError(f"cell key {key!r}: arm {arm_key!r} is not '<backend>@<gate>'")
        return cls(WorldKey.parse(world), arm_key)
