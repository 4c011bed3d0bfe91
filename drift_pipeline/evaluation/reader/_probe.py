"""What the reader is told about a probe: the subject, the question and the candidate values.

Each value is looked for in all its phrasings: the probe's own aliases first, then the
paraphrases a careful reader knows without being told, from the lexicon of the rules file ("NYC"
is New York, "veggie" is vegetarian), the same amount in other units and spellings ("10 km" is
"6.2 miles", "$2,000" is "two grand"), a long name's initials and a negative habit said of
someone else. A lexicon group applies to a value when one of the value's phrases is in it
(compared normalised). Groups are kept small and unambiguous on purpose: a phrase that could
name two values of one slot ("LA", "Georgia") is left out, because a wrong paraphrase turns
into a false accept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from drift_pipeline.textmatch import normalise

from ._dates import answer_periods
from ._rules import RULES

__all__ = [
    "LEXICON_GROUPS",
    "Candidate",
    "ProbeKind",
    "ReaderOption",
    "ReaderProbe",
    "Role",
    "expand_phrases",
]

ProbeKind = Literal["value", "yes_no", "temporal", "action"]
Role = Literal["current", "deprecated", "decoy", "other", "option"]

_R, _WORDS = RULES.patterns, RULES.word_sets
LEXICON_GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(group) for group in RULES.spec.lexicon)
"""The shipped groups (from the rules file), each a tuple of phrasings of one value."""
_NUMBER_WORDS = RULES.rule("number-words").phrases or []
# Units a careful reader converts, and currencies with their symbols, codes and words.
_UNITS, _CURRENCIES = RULES.tables["units"], {r.symbol: r for r in RULES.tables["currencies"]}


def _unit_variants(phrase: str) -> list[str]:
    """The same quantity in the other unit of its kind ("10 km" → "6.2 miles").

    A converted amount is given to one decimal, and as a whole number only when that is
    within 1% (so "6 miles" is not taken for 10 km, but "62 miles" is 100 km).
    """
    match = _R["quantity"].match(phrase)
    own = next((u for u in _UNITS if match and match.group(2).lower() in u.spellings), None)
    if match is None or own is None:
        return []
    amount, variants = float(match.group(1)), []
    if amount.is_integer() and amount <= 20:  # "2 km" is also "two kilometres"
        word = _NUMBER_WORDS[int(amount)]
        variants += [f"{word} {spelling}" for spelling in own.spellings if spelling != "k"]
    for unit in _UNITS:
        if unit.kind == own.kind and unit != own:
            converted = amount * own.size / unit.size
            numbers = {f"{converted:.1f}"}
            if converted < 10:  # "45 minutes" is "0.75 hours", not "0.8"
                numbers.add(f"{converted:.2f}".rstrip("0").rstrip("."))
            if abs(converted - round(converted)) <= 0.01 * converted:
                numbers.add(str(round(converted)))
            variants += [f"{n} {s}" for n in sorted(numbers) for s in unit.spellings if s != "k"]
    return variants


def _money_variants(phrase: str) -> list[str]:
    """A sum of money in its other spellings ("$2,000" → "2000 dollars", "two grand", "2k")."""
    match = _R["money"].match(phrase)
    if not match:
        return []
    symbol, digits = match.group(1), match.group(2).replace(",", "")
    amount, currency = int(digits), _CURRENCIES[symbol]
    code, words = currency.code, currency.spellings
    plain, spoken = {digits, f"{amount:,}"}, set()
    grand: list[str] = []  # "two grand" names the sum with no currency word after it
    if amount % 1000 == 0:
        plain.add(f"{amount // 1000}k")
    if amount % 1000 == 0 and amount // 1000 <= 20:
        thousands = amount // 1000
        spoken.add(f"{_NUMBER_WORDS[thousands]} thousand")
        grand = [f"{_NUMBER_WORDS[thousands]} grand", f"{thousands} grand"]
    elif amount % 100 == 0 and amount // 100 <= 20:
        spoken.add(f"{_NUMBER_WORDS[amount // 100]} hundred")
        if amount > 1000:
            plain.add(f"{amount / 1000:.1f}k")
    variants = [f"{symbol}{p}" for p in sorted(plain)]
    variants += [f"{p} {code}" for p in sorted(plain)] + [f"{code} {p}" for p in sorted(plain)]
    variants += [f"{p} {word}" for word in words for p in sorted(plain | spoken)]
    return variants + grand


def _acronyms(phrase: str) -> list[str]:
    """The initials of a name of three or more capitalised words ("National Health Service")."""
    # Shorter initials are too often another name's.
    words = [w for w in phrase.replace("-", " ").split() if w.lower() not in _WORDS["acronym-skip"]]
    if len(words) < 3 or not all(w[:1].isupper() and w[1:2].islower() for w in words):
        return []
    return ["".join(w[0] for w in words)]


def _third_person(phrase: str) -> list[str]:
    """A first-person negative habit said of someone else ("don't eat meat": "never eats meat")."""
    match = _R["plain-negative"].match(phrase.strip())
    if not match:
        return []
    verb, rest = match.group(1), match.group(2)
    verb_s = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")
    return [f"doesn't {verb}{rest}", f"does not {verb}{rest}", f"never {verb_s}{rest}"]


@lru_cache(maxsize=1)
def _by_phrase() -> dict[str, tuple[str, ...]]:
    index: dict[str, tuple[str, ...]] = {}
    for group in LEXICON_GROUPS:
        for phrase in group:
            index[normalise(phrase)] = index.get(normalise(phrase), ()) + group
    return index


def expand_phrases(phrases: Iterable[str]) -> tuple[str, ...]:
    """``phrases`` followed by every lexicon paraphrase of them, without duplicates, in order.

    Args:
        phrases: One value's spellings (its text and aliases).
    """
    seen: dict[str, str] = {}
    given = [p for p in phrases if p and p.strip()]
    for phrase in given + [o for p in given for o in _by_phrase().get(normalise(p), ())]:
        seen.setdefault(normalise(phrase), phrase)
    for phrase in [o for p in seen.values() for o in _third_person(p)]:
        seen.setdefault(normalise(phrase), phrase)
    # A sum of money is never a weight: "3000 pounds" beside "£3,000" is sterling.
    money = any(_R["money"].match(p) for p in seen.values())
    for phrase in list(seen.values()):
        units = [] if money else _unit_variants(phrase)
        for other in (*units, *_money_variants(phrase), *_acronyms(phrase)):
            if normalise(other):
                seen.setdefault(normalise(other), other)
    return tuple(seen.values())


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
        return next((c.role for c in self.candidates if c.value == value), None)

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
        family, _, key = slot.partition("/")
        if exclusive is None:
            exclusive = family not in _WORDS["set-slot-families"]
        if topic is None:
            topic = key.split("_") if family in _WORDS["topic-families"] and key else ()
        aliases = [str(a) for a in row.get("aliases") or []]
        old = _candidate([str(d) for d in row.get("deprecated") or []], "deprecated")
        extra = [c for d in decoys for c in _candidate(d, "decoy")]
        extra += [c for o in others for c in _candidate(o, "other")]
        common: dict[str, Any] = {
            "probe_id": str(row.get("probe_id") or ""),
            "question": str(row.get("question") or ""),
            "subject_names": tuple(dict.fromkeys([*subject_names, str(row.get("subject") or "")])),
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
            chosen = [c for n, o in enumerate(options) for c in _candidate(o.terms, "option", n)]
            return cls(
                kind="action",
                candidates=_dedupe((*chosen, *old, *extra)),
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
            event = _candidate([str(t) for t in row.get("evidence_terms") or []], "current")
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
    return (
        [Candidate(str(spellings[0]), role, expand_phrases(spellings), option)] if spellings else []
    )


def _dedupe(candidates: Iterable[Candidate]) -> tuple[Candidate, ...]:
    """Drop repeated values and phrases already claimed by an earlier (higher-priority) value."""
    seen_values: set[str] = set()
    claimed: set[str] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        phrases = tuple(p for p in candidate.phrases if p.lower() not in claimed)
        if candidate.value in seen_values or not phrases:
            continue
        seen_values.add(candidate.value)
        claimed.update(p.lower() for p in phrases)
        kept.append(Candidate(candidate.value, candidate.role, phrases, candidate.option))
    return tuple(kept)
