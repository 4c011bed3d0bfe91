"""What the reader is told about a probe: the subject, the question and the candidate values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._lexicon import expand_phrases
from ._relative_time import answer_periods
from ._rules import RULES

__all__ = ["Candidate", "ProbeKind", "ReaderOption", "ReaderProbe", "Role"]

ProbeKind = Literal["value", "yes_no", "temporal", "action"]
Role = Literal["current", "deprecated", "decoy", "other", "option"]

SET_SLOT_FAMILIES = RULES.words("set-slot-families")

TOPIC_FAMILIES = RULES.words("topic-families")


@dataclass(frozen=True)
class Candidate:
    """One value the memory might state.

    Attributes:
        value: Its canonical text.
        role: ``current`` (the latent answer), ``deprecated`` (the value it replaced), ``decoy``
            (never true), ``other`` (another value of the slot in the world) or ``option`` (an
            action probe's option, by index in :attr:`ReaderProbe.options`).
        phrases: Its spellings: the world's aliases followed by lexicon paraphrases.
        option: The option's index (``option`` candidates only).
    """

    value: str
    role: Role
    phrases: tuple[str, ...]
    option: int | None = None


@dataclass(frozen=True)
class ReaderOption:
    """An action probe's option.

    Attributes:
        text: What the option says.
        terms: Phrases of the value that supports it (empty for the no-memory default).
        utility: +1 right, 0 neutral, −1 wrong under the latent profile.
    """

    text: str
    terms: tuple[str, ...]
    utility: int


@dataclass(frozen=True)
class ReaderProbe:
    """A probe as the reader and the judge see it.

    Attributes:
        probe_id: Probe id.
        kind: ``value`` (what is X now), ``yes_no`` (has X ever said Y; the truth is no),
            ``temporal`` (on what date did X change), ``action`` (choose an option).
        question: The question asked.
        subject_names: How the memory may name the subject: display names, entity id, speaker
            name (``principal``); ``user`` and the like are always understood.
        answer: The latent answer (a value, ``no`` for yes/no probes, a date for temporal ones).
        candidates: Every value the reader looks for, with its role.
        event_value: Temporal probes: the value whose change is asked about.
        answer_dates: Temporal probes: the latent date or period in every accepted spelling
            (``YYYY-MM-DD``, or ``YYYY-MM-DD/YYYY-MM-DD`` for a period).
        options: Action probes' options.
        correct_option: Index of the right option.
        default_option: Index of the option an agent with no memory picks.
        exclusive: Whether the slot holds one value at a time (then a later assertion of a
            different value replaces an earlier one).
        slot: The slot asked about.
        topic: Words the asserting sentence must contain, for slots whose values are shared
            across topics (a view on remote work is not a view on electric cars).
        other_speakers: The names of the world's other people, in a world of several: what a
            line headed by one of them says is theirs, not the subject's.
    """

    probe_id: str
    kind: ProbeKind
    question: str
    subject_names: tuple[str, ...]
    answer: str
    candidates: tuple[Candidate, ...]
    event_value: str | None = None
    answer_dates: frozenset[str] = field(default_factory=frozenset)
    options: tuple[ReaderOption, ...] = ()
    correct_option: int | None = None
    default_option: int | None = None
    exclusive: bool = True
    slot: str = ""
    topic: tuple[str, ...] = ()
    other_speakers: tuple[str, ...] = ()

    def role_of(self, value: str | None) -> Role | None:
        """The role of the candidate whose canonical text is ``value``."""
        for candidate in self.candidates:
            if candidate.value == value:
                return candidate.role
        return None

    @classmethod
    def from_row(
        cls,
        row: Mapping[str, Any],
        *,
        subject_names: Iterable[str] = (),
        decoys: Sequence[Sequence[str]] = (),
        others: Sequence[Sequence[str]] = (),
        exclusive: bool | None = None,
        topic: Sequence[str] | None = None,
        other_speakers: Iterable[str] = (),
    ) -> ReaderProbe:
        """Build from a ``probes`` table row plus what the world knows beyond it.

        Args:
            row: A probes row (``probe_type``, ``subtype``, ``subject``, ``question``, ``answer``,
                ``aliases``, ``deprecated``, ``options``, ``polarity``, ``slot``,
                ``evidence_terms``; ``correct_option``/``default_option`` for actions).
            subject_names: The subject's display name(s).
            decoys: Spellings of each decoy value (values that never held).
            others: Spellings of each other value the slot takes in the world.
            exclusive: Whether the slot holds one value at a time; by default every slot but
                the accumulating families (constraints, habits, preferences, completed tasks).
            topic: Words the asserting sentence must contain; by default, for an opinion slot
                (``opinion/remote_work``), the words of its topic key.
            other_speakers: The names of the world's other people (none in a world of one).
        """
        slot = str(row.get("slot") or "")
        if exclusive is None:
            exclusive = slot.split("/")[0] not in SET_SLOT_FAMILIES
        names = tuple(dict.fromkeys([*subject_names, str(row.get("subject") or "")]))
        family, _, key = slot.partition("/")
        if topic is None:
            topic = key.split("_") if family in TOPIC_FAMILIES and key else ()
        aliases = [str(a) for a in row.get("aliases") or []]
        deprecated = [str(d) for d in row.get("deprecated") or []]
        extra = [
            *(c for d in decoys for c in _candidate(d, "decoy")),
            *(c for o in others for c in _candidate(o, "other")),
        ]
        old = _candidate(deprecated, "deprecated")
        common: dict[str, Any] = {
            "probe_id": str(row.get("probe_id") or ""),
            "question": str(row.get("question") or ""),
            "subject_names": names,
            "answer": str(row.get("answer") or ""),
            "exclusive": exclusive,
            "slot": slot,
            "topic": tuple(word.lower() for word in topic if word),
            "other_speakers": tuple(dict.fromkeys(s for s in other_speakers if s)),
        }
        if row.get("probe_type") == "action":
            options = tuple(
                ReaderOption(str(o["text"]), tuple(o.get("terms") or ()), int(o["utility"]))
                for o in row.get("options") or []
            )
            candidates = [
                c for index, o in enumerate(options) for c in _candidate(o.terms, "option", index)
            ]
            return cls(
                kind="action",
                candidates=_dedupe((*candidates, *old, *extra)),
                options=options,
                correct_option=row.get("correct_option"),
                default_option=row.get("default_option"),
                **common,
            )
        if row.get("polarity") == "negative":
            decoy = _candidate(aliases, "decoy")
            return cls(kind="yes_no", candidates=_dedupe((*decoy, *extra)), **common)
        # A "when" question whose answer names no date or period ("four months", "Boston") is
        # read as a value question.
        temporal = row.get("subtype") == "temporal"
        dates = answer_periods([common["answer"], *aliases]) if temporal else frozenset()
        if dates:
            terms = [str(t) for t in row.get("evidence_terms") or []]
            event = _candidate(terms, "current")
            return cls(
                kind="temporal",
                candidates=_dedupe((*event, *old, *extra)),
                event_value=event[0].value if event else None,
                answer_dates=dates,
                **common,
            )
        current = _candidate([*aliases, common["answer"]], "current")
        return cls(kind="value", candidates=_dedupe((*current, *old, *extra)), **common)


def _candidate(spellings: Sequence[str], role: Role, option: int | None = None) -> list[Candidate]:
    """The value its first spelling names, with every phrasing of it (none without spellings)."""
    if not spellings:
        return []
    return [Candidate(str(spellings[0]), role, expand_phrases(spellings), option)]


def _dedupe(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    """Drop repeated values and phrases already claimed by an earlier (higher-priority) value."""
    seen_values: set[str] = set()
    claimed: set[str] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        if candidate.value in seen_values:
            continue
        phrases = tuple(p for p in candidate.phrases if p.lower() not in claimed)
        if not phrases:
            continue
        seen_values.add(candidate.value)
        claimed.update(p.lower() for p in phrases)
        kept.append(Candidate(candidate.value, candidate.role, phrases, candidate.option))
    return tuple(kept)
