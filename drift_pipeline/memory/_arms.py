"""Gates and arms (backend × gate), parsed in one place (spec §5.2).

Which gate kinds exist, and how each is written, comes from the gate registry (see
:mod:`._gates`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ._gates import GateStrategy, gate_registration, gate_text, parse_gate


@dataclass(frozen=True)
class Gate:
    """A budget-gate variant.

    Attributes:
        kind: A registered gate kind: ``hard`` (transcript gone after store), ``soft`` (the
            last ``size`` transcripts are appended to the reader's context at probe time),
            ``summary`` (the backend receives a ``size``-token reference summary instead of the
            transcript), or any variant registered with ``register_gate``.
        size: K for soft, N for summary, 0 for hard.
    """

    kind: str
    size: int = 0

    @classmethod
    def parse(cls, text: str) -> Gate:
        """Parse ``hard``, ``soft:K``, ``summary:N`` (or a registered variant's form).

        Raises:
            ValueError: Naming the accepted forms.
        """
        kind, size = parse_gate(text)
        return cls(kind, size)

    def strategy(self) -> GateStrategy:
        """The strategy of this gate: what the backend receives, what the reader gets added.

        Raises:
            ValueError: The kind is not registered.
        """
        registration = gate_registration(self.kind)
        if registration is None:
            raise ValueError(f"gate {str(self)!r}: unknown gate kind {self.kind!r}")
        return registration.strategy(self.size)

    def __str__(self) -> str:
        return gate_text(self.kind, self.size)


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
