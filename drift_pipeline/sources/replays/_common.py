"""What the dataset importers share: reading a JSON file once, with its hash, and field checks.

Every problem is a :class:`~drift_pipeline.sources.SourceError` of one line that names the file,
the record and the field, so a malformed dataset never ends in a traceback.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from drift_pipeline.sources._base import SourceError

__all__ = [
    "NOT_APPLICABLE_WITHOUT_UPDATES",
    "DatasetFile",
    "Record",
    "profile_row",
    "read_json_array",
    "source_id_part",
]

NOT_APPLICABLE_WITHOUT_UPDATES: Final = frozenset(
    {"selectivity", "revision_accuracy", "action_alignment", "privacy", "drift_c"}
)
"""Metrics a question-answering replay cannot support: it labels no noise sessions, asks no
action or canary questions and (LoCoMo) no updates, so DRIFT-C has no honest components."""


@dataclass(frozen=True)
class DatasetFile:
    """A dataset file as read: its path (for messages), its sha256 and its top-level records."""

    path: str
    sha256: str
    records: list[Any]


def read_json_array(path: str, what: str) -> DatasetFile:
    """Read the JSON array at ``path`` (a ``what`` file), hashing the exact bytes read.

    Raises:
        SourceError: The file is not UTF-8 JSON or its top level is not a non-empty array.
    """
    raw = Path(path).read_bytes()
    try:
        records = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SourceError(f"{path}: not a {what} file (invalid JSON: {error})") from None
    if not isinstance(records, list) or not records:
        raise SourceError(f"{path}: not a {what} file (expected a non-empty JSON array)")
    return DatasetFile(path, hashlib.sha256(raw).hexdigest(), records)


@dataclass(frozen=True)
class Record:
    """One record of a dataset, named for messages (``data.json: conv-26 qa[3]``)."""

    path: str
    name: str
    data: Mapping[str, Any]

    def fail(self, message: str) -> SourceError:
        """A one-line error about this record."""
        return SourceError(f"{self.path}: {self.name}: {message}")

    def field(self, name: str, kind: type | tuple[type, ...]) -> Any:
        """The value of ``name``, which must be present and of ``kind``."""
        if name not in self.data or self.data[name] is None:
            raise self.fail(f"has no {name!r}")
        value = self.data[name]
        # bool is an int in Python; no dataset field here means a truth value by a number.
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            expected = " or ".join(k.__name__ for k in _kinds(kind))
            raise self.fail(f"field {name!r} is {type(value).__name__}, expected {expected}")
        return value

    def text(self, name: str) -> str:
        """A non-empty string field."""
        value = self.field(name, str)
        if not value.strip():
            raise self.fail(f"field {name!r} is empty")
        return str(value)

    def child(self, name: str, data: object) -> Record:
        """A nested record (``session_3[4]``), which must be a JSON object."""
        label = f"{self.name} {name}"
        if not isinstance(data, Mapping):
            raise SourceError(f"{self.path}: {label}: is {type(data).__name__}, expected object")
        return Record(self.path, label, data)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def source_id_part(text: str) -> str:
    """``text`` as part of a source id: lower case, runs of other characters as one ``-``."""
    return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-._") or "x"


def profile_row(entity_id: str, entity_type: str) -> dict[str, Any]:
    """A ``latent_profiles`` row for an entity the dataset names but does not describe."""
    return {
        "entity_id": entity_id,
        "entity_type": entity_type,
        "name": entity_id,
        "stable_attributes": "{}",
        "initial_state": "{}",
    }
