"""``scenarios/ablations.yaml``: named groups of extra arms (gate variants, backend variants).

``drift run --ablation NAME`` runs one entry's arms; the Dagster project registers every entry's
arms as ``arm`` partitions, and ``drift backfill --ablation NAME`` reruns one entry on every world.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from drift_pipeline.memory import Arm

ABLATIONS_FILE = "ablations.yaml"
"""File name of the ablation list inside a scenario folder."""


@dataclass(frozen=True)
class Ablation:
    """One named ablation: a description and the arms it adds."""

    name: str
    description: str
    arms: tuple[Arm, ...]


class AblationError(ValueError):
    """``ablations.yaml`` is malformed; the message names the file, the entry and the fix."""


def load_ablations(path: Path) -> list[Ablation]:
    """Read an ablation file; a missing file means no ablations.

    Args:
        path: The YAML file (``{ablations: {name: {description, arms: [backend@gate, …]}}}``).

    Returns:
        The ablations in file order.

    Raises:
        AblationError: On unreadable YAML, a wrong shape or an arm that does not parse.
    """
    if not path.exists():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise AblationError(
            f"{path}: cannot read ablations: {str(error).splitlines()[0]}"
        ) from None
    entries = data.get("ablations") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise AblationError(f"{path}: expected a mapping 'ablations: {{name: {{arms: [...]}}}}'")
    ablations: list[Ablation] = []
    for name, entry in entries.items():
        where = f"{path}: ablations.{name}"
        if not isinstance(entry, dict) or not isinstance(entry.get("arms"), list):
            raise AblationError(f"{where}: expected a mapping with a list 'arms: [backend@gate]'")
        arms: list[Arm] = []
        for key in entry["arms"]:
            try:
                arms.append(Arm.parse(str(key)))
            except ValueError as error:
                raise AblationError(f"{where}: {error}") from None
        ablations.append(Ablation(str(name), str(entry.get("description", "")), tuple(arms)))
    return ablations


def find_ablations(paths: Iterable[str | Path]) -> list[Ablation]:
    """The ablations of every scenario folder among ``paths`` (a file stands for its folder).

    Args:
        paths: Scenario files or folders, as ``drift run`` and the scenario catalog take them.

    Returns:
        The ablations of each folder's ``ablations.yaml``, folders in the order given.

    Raises:
        AblationError: If an ``ablations.yaml`` is malformed.
    """
    folders: dict[Path, None] = {}
    for item in paths:
        path = Path(item)
        folders[path if path.is_dir() else path.parent] = None
    return [ablation for folder in folders for ablation in load_ablations(folder / ABLATIONS_FILE)]


def ablation_arms(ablations: Sequence[Ablation], names: Sequence[str]) -> list[Arm]:
    """The arms of the named ablations, in the order named, each once.

    Raises:
        AblationError: Naming an unknown ablation and the known ones.
    """
    found = {ablation.name: ablation for ablation in ablations}
    arms: list[Arm] = []
    for name in names:
        if name not in found:
            known = ", ".join(found) or "none"
            raise AblationError(f"ablation {name!r} is not in {ABLATIONS_FILE} (known: {known})")
        arms.extend(arm for arm in found[name].arms if arm not in arms)
    return arms
