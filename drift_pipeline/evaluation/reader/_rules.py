"""The careful reader's cue words and patterns, read from ``rules.yaml`` once per process.

The reader's algorithm stays in code; what it looks for is data. Each row of the rules file
names a pattern (or a word list), the frame it signals, the side of the value it reads, how
far and what ends its reach, the conditions it needs, with a one-line purpose and examples. A
pattern is written in pieces joined with nothing, and ``{name}`` stands for one of the file's
shared fragments (``{words:id}``: a word list's words). The file is validated with pydantic; a
malformed row stops the reader with one line naming the rule and the field. The file's content
hash is part of the reader's version.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["RULES", "Example", "Rule", "RuleFile", "Rules", "TableRow", "load_rules"]

# The frames a rule can signal: counted (asserted, retracted, negated) or why a mention is not.
_Counted = Literal["asserted", "retracted", "negated"]
_NotMeant = Literal["sarcasm", "question", "hypothetical", "visit", "aside", "vague"]
_NotTheirs = Literal["third_party", "not_about_subject", "generic_word", "other_topic"]
FrameName = Literal[_Counted, _NotMeant, _NotTheirs]
Condition = str | list[str]
"""A state, ``pattern@side`` or a named set of them, with ``!`` before it (it does not hold),
or a list of these (any one holds)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Example(_Strict):
    """One example of a rule, run by the tests: a text its pattern reads, or a memory read whole.

    A text example says whether the pattern finds something in ``text`` (or exactly what). A
    reading example reads ``context`` for a probe about Rhiannon Price (its question, kind,
    slot, the value with its aliases and the slot's other values) and names the ``frame`` the
    value's mention gets by this rule.
    """

    text: str | None = None
    matches: bool | str = True
    context: str | None = None
    value: str | None = None
    aliases: list[str] = []
    question: str = "Where does Rhiannon work now?"
    kind: Literal["value", "temporal", "yes_no"] = "value"
    slot: str = "employer"
    others: list[str] = []
    frame: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Example:
        if (self.text is None) == (self.context is None):
            raise ValueError("an example has either a text or a context")
        if self.context is not None and (self.value is None or self.frame is None):
            raise ValueError("a context example needs a value and a frame")
        return self


class Alternative(_Strict):
    """One phrase of a rule written as alternatives.

    Attributes:
        p: The phrase (a regular expression).
        unsaid: The phrase says the statement was never meant (a joke, a slip).
        next_line: The phrase takes back a statement from the next line (false: only ever
            part of a same-line cue).
        unit: For a phrase of an answer's period: how it counts (days, a week or weekend, a
            weekday, the weekend after); offset: how many units from the day; to: the far end.
    """

    p: str
    unsaid: bool = False
    next_line: bool = True
    unit: Literal["day", "week", "weekend", "weekday", "next-weekend"] | None = None
    offset: int = 0
    to: int | None = None


TimeUnit = Literal[
    "day", "weekend", "week", "month", "year", "spring", "summer", "autumn", "winter"
]


class TableRow(_Strict):
    """One row of a table of words.

    The words (each read whole, in any case); for time words, the unit they name or count in,
    how many units from the day they point (a count word: the number; a weekday or a month: its
    place) and the far end of a span (a season's last month); for units of measure, the kind
    and the size in the kind's first unit; for currencies, the symbol and the code.
    """

    words: str | list[str]
    unit: TimeUnit | None = None
    offset: int = 0
    to: int | None = None
    kind: Literal["distance", "weight", "duration"] | None = None
    size: float = 1.0
    symbol: str | None = None
    code: str | None = None

    @property
    def spellings(self) -> tuple[str, ...]:
        """Each spelling of the row's words."""
        return (self.words,) if isinstance(self.words, str) else tuple(self.words)


class Rule(_Strict):
    """One row of the rules file: the head of ``rules.yaml`` says what each field means.

    A row has one body: a ``pattern`` (pieces joined with nothing; ``ignore_case`` to match in
    any case), a word list (``words``, split on spaces), whole ``phrases``, ``alternatives``
    (phrases with what each says) or a ``table`` (words with what each row means); a row of
    ``when``/``unless`` conditions alone fires on them. A ``revise`` row changes only the
    frames it ``revises`` (none: any); ``note`` says more than the one-line ``purpose``.
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    purpose: str = Field(min_length=8)
    note: str | None = None
    frame: FrameName | None = None
    revises: list[FrameName] = []
    side: str | list[str] | None = None
    max_scope: int | None = Field(default=None, ge=1)
    terminated_by: str | None = None
    when: list[Condition] = []
    unless: list[Condition] = []
    skip_agent: bool = False
    skip_asked: bool = False
    cancel_pairs_in: str | None = None
    cue: str | None = None
    strip: bool | str = False
    pattern: str | list[str] | None = None
    ignore_case: bool = False
    words: list[str] | None = None
    phrases: list[str] | None = None
    alternatives: list[Alternative] | None = None
    table: list[TableRow] | None = None
    examples: list[Example] = Field(min_length=1)

    @property
    def listed(self) -> bool:
        """Whether the rule is a list of words (a word list, phrases or a table)."""
        return self.words is not None or self.phrases is not None or self.table is not None

    @model_validator(mode="after")
    def _one_body(self) -> Rule:
        bodies = [self.pattern, self.words, self.phrases, self.alternatives, self.table]
        count = len([b for b in bodies if b is not None])
        if count > 1 or (count == 0 and not (self.when or self.unless)):
            raise ValueError(
                "a rule has one of pattern, words, phrases, alternatives, table (or only states)"
            )
        if count == 0 and any(e.text is not None for e in self.examples):
            raise ValueError("a rule of states alone has reading examples (contexts)")
        if self.listed and any(e.text is None for e in self.examples):
            raise ValueError("a word list's examples are texts (a word in or out of the list)")
        return self


class RuleFile(_Strict):
    """The rules file: version, frame steps, named conditions, fragments, rules and lexicon."""

    version: int
    order: list[str] = []
    revise: list[str] = []
    states: dict[str, list[Condition]] = {}
    fragments: dict[str, str | list[str]] = {}
    rules: list[Rule]
    lexicon: list[list[str]] = []


def _patterns_named(conditions: list[Condition], states: dict[str, list[Condition]]) -> set[str]:
    """The pattern rules that ``pattern@side`` conditions name, within named sets too."""
    found: set[str] = set()
    for item in conditions:
        for one in [item] if isinstance(item, str) else item:
            name, _, side = one.lstrip("!").partition("@")
            found |= {name} if side else _patterns_named(states.get(name, []), {})
    return found


def _joined(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


# The C loader, where PyYAML has it, reads the file five times faster (every process loads it).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FRAGMENT = re.compile(r"\{(words:)?([a-z][a-z-]*)\}")


class Rules:
    """The compiled rules of one rules file.

    Attributes:
        source: The file read.
        digest: The first 12 hex digits of the file's sha256.
        by_id: Each rule by id.
        patterns: Each pattern rule's compiled pattern, by id.
        word_sets: Each word-list rule's words, by id.
        tables: Each table rule's rows, by id.
    """

    def __init__(self, spec: RuleFile, source: str, digest: str) -> None:
        self.source, self.digest, self.spec = source, digest, spec
        self.by_id: dict[str, Rule] = {}
        for rule in spec.rules:
            if rule.id in self.by_id:
                raise ValueError(f"{source}: rule {rule.id!r}: id: used twice")
            self.by_id[rule.id] = rule
        for where, steps in (("order", spec.order), ("revise", spec.revise)):
            unknown = [step for step in steps if step not in self.by_id]
            if unknown:
                raise ValueError(f"{source}: {where}: no rule {unknown[0]!r}")
        for rule in spec.rules:  # a condition's pattern must be a pattern row of this file
            for name in _patterns_named([*rule.when, *rule.unless], spec.states):
                if getattr(self.by_id.get(name), "pattern", None) is None:
                    raise ValueError(f"{source}: rule {rule.id!r}: when: no pattern rule {name!r}")
        fragments = {name: _joined(text) for name, text in spec.fragments.items()}
        for rule in spec.rules:
            if rule.listed:
                listed = sorted(self.words(rule.id), key=lambda w: (-len(w), w))
                fragments[f"words:{rule.id}"] = "|".join(map(re.escape, listed))
        self._fragments = {name: self._expand(text, fragments) for name, text in fragments.items()}
        self.patterns: dict[str, re.Pattern[str]] = {}
        for rule in spec.rules:
            if rule.pattern is not None:
                flags = re.IGNORECASE if rule.ignore_case else 0
                try:
                    self.patterns[rule.id] = re.compile(self.expand(_joined(rule.pattern)), flags)
                except re.error as error:
                    raise ValueError(f"{source}: rule {rule.id!r}: pattern: {error}") from None
        self.word_sets = {rule.id: self.words(rule.id) for rule in spec.rules if rule.listed}
        self.tables = {rule.id: tuple(rule.table) for rule in spec.rules if rule.table is not None}

    @staticmethod
    def _expand(text: str, fragments: dict[str, str]) -> str:
        def fragment(match: re.Match[str]) -> str:
            found = fragments.get((match.group(1) or "") + match.group(2))
            return match.group(0) if found is None else Rules._expand(found, fragments)

        return _FRAGMENT.sub(fragment, text)

    def expand(self, text: str) -> str:
        """``text`` with the file's fragments (``{name}``, ``{words:id}``) written out."""
        return self._expand(text, self._fragments)

    def rule(self, rule_id: str) -> Rule:
        """The row named ``rule_id`` (``KeyError`` naming it when there is none)."""
        try:
            return self.by_id[rule_id]
        except KeyError:
            raise KeyError(f"{self.source}: no rule {rule_id!r}") from None

    def pattern(self, rule_id: str) -> re.Pattern[str]:
        """The compiled pattern of a pattern rule."""
        try:
            return self.patterns[rule_id]
        except KeyError:
            raise KeyError(f"{self.source}: no pattern rule {rule_id!r}") from None

    def words(self, rule_id: str) -> frozenset[str]:
        """The word set of a word-list rule."""
        rule = self.rule(rule_id)
        if not rule.listed:
            raise KeyError(f"{self.source}: rule {rule_id!r} is not a word list")
        split = (w for piece in rule.words or () for w in piece.split(" ") if w)
        table = (w for row in rule.table or () for w in row.spellings)
        return frozenset((*split, *(rule.phrases or ()), *table))

    def offsets(self, rule_id: str) -> dict[str, int]:
        """A table rule's offset for each spelling of its rows (a weekday's place, a number)."""
        return {word: row.offset for row in self.tables[rule_id] for word in row.spellings}

    def alternation(
        self, rule_id: str, keep: Callable[[Alternative], bool] = lambda _: True
    ) -> re.Pattern[str]:
        """The kept alternatives of a rule as one word-bounded pattern, in the file's order."""
        rule = self.rule(rule_id)
        kept = [self.expand(a.p) for a in rule.alternatives or [] if keep(a)]
        flags = re.IGNORECASE if rule.ignore_case else 0
        return re.compile(r"\b(?:" + "|".join(kept) + r")\b", flags)


def _where(error: ValidationError, raw: Any, source: str) -> str:
    """One line for the first validation error: the rule's id and the field."""
    first = error.errors()[0]
    loc = first["loc"]
    where = ".".join(map(str, loc)) or "file"
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        row = raw["rules"][loc[1]]  # the error's place exists in the file read
        rule_id = row.get("id", f"#{loc[1] + 1}") if isinstance(row, dict) else f"#{loc[1] + 1}"
        where = f"rule {rule_id!r}: {'.'.join(map(str, loc[2:])) or 'row'}"
    return f"{source}: {where}: {first['msg']}"


def load_rules(path: Path | None = None) -> Rules:
    """Read and compile a rules file (default: the shipped ``rules.yaml``).

    Args:
        path: Another rules file, e.g. a draft under test.

    Raises:
        ValueError: One line naming the rule and the field that is wrong.
    """
    if path is None:
        data, source = files(__package__).joinpath("rules.yaml").read_bytes(), "rules.yaml"
    else:
        data, source = path.read_bytes(), str(path)
    try:
        raw = yaml.load(data, Loader=_LOADER)
    except yaml.YAMLError as error:
        raise ValueError(f"{source}: not YAML: {str(error).splitlines()[0]}") from None
    try:
        spec = RuleFile.model_validate(raw)
    except ValidationError as error:
        raise ValueError(_where(error, raw, source)) from None
    return Rules(spec, source, hashlib.sha256(data).hexdigest()[:12])


RULES = load_rules()
"""The shipped rules, read once when the reader is imported."""
