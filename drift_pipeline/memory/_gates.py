"""Gate variants as registered strategies (spec §5.2): what crosses the budget gate, and when.

A gate variant is one :class:`GateStrategy` subclass and one :func:`register_gate` call (or, in
an installed package, one :class:`GateRegistration` named by an entry point of the group
``drift_pipeline.gates``). The registration carries the variant's syntax (``kind`` or
``kind:SIZE``), so arms parse without importing any strategy; the strategy says what the backend
receives for a session and what is appended to the reader's context at probe time. The memory
loop asks the strategy and knows no variant by name.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, overload

from drift_pipeline._lazy import Registry, RegistryError, is_target, resolve_target

from ._protocol import Message

__all__ = [
    "GATE_ENTRY_POINT_GROUP",
    "GateRegistration",
    "GateStrategy",
    "HardGate",
    "ReaderBuffer",
    "RecentTranscripts",
    "SoftGate",
    "SummaryGate",
    "gate_kinds",
    "gate_registration",
    "register_gate",
]

GATE_ENTRY_POINT_GROUP = "drift_pipeline.gates"
"""The entry-point group through which installed packages register gate variants."""

_SIZE_NAME = re.compile(r"^[A-Z]$")
_S = TypeVar("_S", bound="type[GateStrategy]")


class ReaderBuffer:
    """What a gate adds to the reader's context at probe time (this one: nothing).

    One per replicate: it sees every session right after it is stored.
    """

    def add(self, messages: list[Message]) -> None:
        """Take note of a stored session's transcript."""

    def text(self) -> str:
        """The text appended to every context of the checkpoint being probed ("" for none)."""
        return ""


class RecentTranscripts(ReaderBuffer):
    """The last ``keep`` transcripts, rendered ``[date] speaker: text``, blank-line separated."""

    def __init__(self, keep: int) -> None:
        self._recent: deque[str] = deque(maxlen=keep)

    def add(self, messages: list[Message]) -> None:
        """Keep this transcript, dropping the oldest beyond ``keep``."""
        self._recent.append(render_transcript(messages))

    def text(self) -> str:
        """The kept transcripts, oldest first."""
        return "\n\n".join(self._recent)


class GateStrategy:
    """How one gate variant treats sessions; the base passes transcripts through and adds nothing.

    Attributes:
        size: The variant's size (``K`` of ``soft:K``), 0 for a variant written without one.
    """

    def __init__(self, size: int = 0) -> None:
        self.size = size

    def backend_messages(self, messages: list[Message], timestamp: str) -> list[Message]:
        """What the backend's ``store()`` receives for one session.

        Args:
            messages: The session's transcript.
            timestamp: The session's timestamp (ISO 8601).
        """
        return messages

    def reader_buffer(self) -> ReaderBuffer:
        """A fresh buffer for one replicate (what the reader gets besides the backend's answer)."""
        return ReaderBuffer()


class HardGate(GateStrategy):
    """``hard``: the transcript is gone once stored; the reader sees only the backend's answer."""


class SoftGate(GateStrategy):
    """``soft:K``: the last K transcripts are appended to the reader's context at probe time."""

    def reader_buffer(self) -> ReaderBuffer:
        """The last ``size`` transcripts."""
        return RecentTranscripts(self.size)


class SummaryGate(GateStrategy):
    """``summary:N``: the backend receives an N-token reference summary instead of the transcript.

    The reference model is the reference compressor's summariser. Its ``speaker: sentence``
    lines go back to their speakers, and every participant keeps one message, so backends can
    still scope what they store by who took part in the session.
    """

    def backend_messages(self, messages: list[Message], timestamp: str) -> list[Message]:
        """One message per participant holding their lines of the session's summary."""
        # Imported here: the gate registry must not load a backend module.
        from .backends.reference_compressor import summarise_session

        summary = summarise_session(messages, self.size)
        lines: dict[str, list[str]] = {}
        roles: dict[str, str] = {}
        for message in messages:
            lines.setdefault(message["speaker"], [])
            roles.setdefault(message["speaker"], message["role"])
        for line in summary.splitlines()[1:]:  # the first line is the date
            speaker, sep, sentence = line.partition(": ")
            if sep and speaker in lines:
                lines[speaker].append(sentence)
        nothing = "(summary gate: nothing kept from this speaker)"
        return [
            Message(
                speaker=speaker,
                role=roles[speaker],
                content=" ".join(said) if said else nothing,
                timestamp=timestamp,
            )
            for speaker, said in lines.items()
        ]


def render_transcript(messages: list[Message]) -> str:
    """A transcript as the soft gate's buffer shows it: ``[date] speaker: text`` per line."""
    return "\n".join(f"[{m['timestamp'][:10]}] {m['speaker']}: {m['content']}" for m in messages)


@dataclass(frozen=True)
class GateRegistration:
    """One gate variant: its syntax, and where its strategy is.

    Attributes:
        kind: Lower-case name, the gate's text before any ``:`` (``soft``).
        target: The :class:`GateStrategy` subclass, or its ``"package.module:Class"``.
        size_name: The size's letter in the accepted form (``K`` for ``soft:K``), ``None`` for
            a variant written as its bare kind (``hard``).
        max_digits: Most digits the size may have.
    """

    kind: str
    target: str | type[GateStrategy]
    size_name: str | None = None
    max_digits: int = 6

    def __post_init__(self) -> None:
        _GATES.check_name(self.kind)
        if self.size_name is not None and not _SIZE_NAME.match(self.size_name):
            raise RegistryError(f"gate {self.kind!r}: size_name must be one capital letter")
        if isinstance(self.target, str) and not is_target(self.target):
            raise RegistryError(f"gate {self.kind!r}: {self.target!r} is not 'package.module:Name'")

    @property
    def form(self) -> str:
        """The accepted form, as error messages list it (``soft:K``)."""
        return self.kind if self.size_name is None else f"{self.kind}:{self.size_name}"

    def strategy(self, size: int) -> GateStrategy:
        """Build the strategy for one gate of this kind, importing it if needed.

        Raises:
            RegistryError: The target cannot be imported or is not a ``GateStrategy``.
        """
        target: object = self.target
        if isinstance(target, str):
            target = resolve_target(target, f"gate {self.kind!r}")
        if not (isinstance(target, type) and issubclass(target, GateStrategy)):
            raise RegistryError(f"gate {self.kind!r}: {self.target!r} is not a GateStrategy")
        return target(size)


def _registration(kind: str, value: object) -> GateRegistration:
    if not isinstance(value, GateRegistration):
        raise TypeError(f"{value!r:.60} is not a GateRegistration")
    if value.kind != kind:
        raise TypeError(f"the registration it names is of kind {value.kind!r}")
    return value


_GATES: Registry[GateRegistration] = Registry("gate", GATE_ENTRY_POINT_GROUP, _registration)


@overload
def register_gate(
    kind: str, *, size_name: str | None = ..., max_digits: int = ...
) -> Callable[[_S], _S]: ...


@overload
def register_gate(
    kind: str, target: _S, *, size_name: str | None = ..., max_digits: int = ...
) -> _S: ...


@overload
def register_gate(
    kind: str, target: str, *, size_name: str | None = ..., max_digits: int = ...
) -> GateRegistration: ...


def register_gate(
    kind: str,
    target: type[GateStrategy] | str | None = None,
    *,
    size_name: str | None = None,
    max_digits: int = 6,
) -> object:
    """Register a gate variant: ``kind`` alone, or ``kind:SIZE`` when ``size_name`` is given.

    Use as a class decorator (``@register_gate("decay", size_name="D")``), call it with the class,
    or give the class's ``"package.module:Class"`` so that it is imported only when a loop runs it.

    Args:
        kind: Lower-case name, the gate's text before any ``:``.
        target: The strategy class or its import path.
        size_name: The size's letter in the accepted form; ``None``: the variant takes no size.
        max_digits: Most digits the size may have.

    Returns:
        The class (decorator form: a decorator returning it); for an import path, the
        registration.

    Raises:
        RegistryError: A malformed kind or target, or a kind already registered to something
            else.
    """

    def add(registration: GateRegistration) -> GateRegistration:
        _GATES.register(registration.kind, registration)
        return registration

    def decorate(cls: _S) -> _S:
        add(GateRegistration(kind, cls, size_name, max_digits))
        return cls

    if isinstance(target, str):
        return add(GateRegistration(kind, target, size_name, max_digits))
    if target is not None:
        return decorate(target)
    return decorate


def gate_kinds() -> list[str]:
    """The registered gate kinds, in registration order (the built-ins first, installed last)."""
    return _GATES.names()


def gate_registration(kind: str) -> GateRegistration | None:
    """The registration of ``kind`` (registered in code or by an installed package), or ``None``.

    Raises:
        RegistryError: An installed package's gate entry point is broken (one line naming it).
    """
    return _GATES.get(kind) if kind in _GATES else None


def parse_gate(text: str) -> tuple[str, int]:
    """Split a gate's text into its registered kind and size (0 for a size-less kind).

    Raises:
        ValueError: Naming the accepted forms, or that the size must be positive.
    """
    kind, sep, argument = text.strip().partition(":")
    registration = gate_registration(kind)
    if registration is None or (registration.size_name is None) != (not sep):
        raise _not_one_of(text)
    if registration.size_name is None:
        return kind, 0
    if not re.fullmatch(rf"\d{{1,{registration.max_digits}}}", argument):
        raise _not_one_of(text)
    size = int(argument)
    if size <= 0:
        raise ValueError(f"gate {text!r}: the size must be > 0")
    return kind, size


def gate_text(kind: str, size: int) -> str:
    """A gate written as it parses: ``hard``, ``soft:3``."""
    registration = _GATES.get(kind) if _GATES.holds(kind) else None
    sized = registration.size_name is not None if registration is not None else size != 0
    return f"{kind}:{size}" if sized else kind


def _not_one_of(text: str) -> ValueError:
    registrations = [_GATES.get(kind) for kind in _GATES.names()]
    forms = ", ".join(registration.form for registration in registrations)
    sizes = list(dict.fromkeys(r.size_name for r in registrations if r.size_name is not None))
    bounds = f" ({', '.join(sizes)} > 0)" if sizes else ""
    return ValueError(f"gate {text!r} is not one of: {forms}{bounds}")


register_gate("hard", HardGate)
register_gate("soft", SoftGate, size_name="K", max_digits=4)
register_gate("summary", SummaryGate, size_name="N", max_digits=6)
