"""``scenarios/ablations.yaml``: named groups of extra arms (gate variants, backend variants).

Plain Python (no Dagster): the arm partitions are filled from it, and a rerun of one ablation is
a selection of its arms.
"""

from __future__ import annotations

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
