"""Gate variants and arms (backend × gate), parsed in one place (spec §5.2, DESIGN §5)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

GateKind = Literal["hard", "soft", "summary"]
_GATE = re.compile(r"^(hard|soft:(\d{1,4})|summary:(\d{1,6}))$")


@dataclass(frozen=True)
class Gate:
    """A budget-gate variant.

    Attributes:
        kind: ``hard`` (transcript gone after store), ``soft`` (the last ``size`` transcripts are
            appended to the reader's context at probe time), ``summary`` (the backend receives a
            ``size``-token reference summary instead of the transcript).
        size: K for soft, N for summary, 0 for hard.
    """

    kind: GateKind
    size: int = 0

    @classmethod
    def parse(cls, text: str) -> Gate:
        """Parse ``hard``, ``soft:K`` or ``summary:N``.

        Raises:
            ValueError: Naming the accepted forms.
        """
        match = _GATE.match(text.strip())
        if not match:
            raise ValueError(f"gate {text!r} is not one of: hard, soft:K, summary:N (K, N > 0)")
        if match.group(2):
            size = int(match.group(2))
            kind: GateKind = "soft"
        elif match.group(3):
            size = int(match.group(3))
            kind = "summary"
        else:
            return cls("hard")
        if size <= 0:
            raise ValueError(f"gate {text!r}: the size must be > 0")
        return cls(kind, size)

    def __str__(self) -> str:
        return self.kind if self.kind == "hard" else f"{self.kind}:{self.size}"


class Arm(NamedTuple):
    """One backend under one gate: the unit that gets its own tables and metrics."""

    backend: str
    gate: Gate

    @property
    def key(self) -> str:
        """Partition key, ``<backend>@<gate>`` (``bm25@hard``, ``pkg.mod:Cls@soft:3``)."""
        return f"{self.backend}@{self.gate}"

    @classmethod
    def parse(cls, key: str) -> Arm:
        """Parse an arm key.

        Raises:
            ValueError: If it is not ``<backend>@<gate>``.
        """
        backend, sep, gate = key.rpartition("@")
        if not sep or not backend:
            raise ValueError(f"arm {key!r} is not '<backend>@<gate>'")
        return cls(backend, Gate.parse(gate))
