"""The careful reader's cue words and patterns, read from ``rules.yaml`` once per process.

The reader's algorithm stays in code; what it looks for is data. Each row of the rules file
names a pattern (or a word list), the frame it signals, the side of the value it reads, how
far and what ends its reach, with a one-line purpose and examples. A pattern is written in
pieces joined with nothing, and ``{name}`` stands for one of the file's shared fragments.
The file is validated with pydantic; a malformed row stops the reader with one line naming the
rule and the field. The file's content hash is part of the reader's version.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "RULES",
    "Example",
    "Rule",
    "RuleFile",
    "Rules",
    "TimeWord",
    "load_rules",
]

# Where a row reads: around the value in its clause, or in the wider text.
_ClauseSide = Literal["before", "after", "either", "window", "mention", "tail", "later"]
_WiderSide = Literal["sentence", "sentence_before", "next_sentence", "head", "next_lines"]
Side = Literal[_ClauseSide, _WiderSide]
# States of a mention that a row needs or excludes: of the value and its clause, of the words
# around it, of the line and the question.
_ValueState = Literal["negative-value", "presupposed", "still-now", "had-before", "today-after"]
_ClauseState = Literal["clause-opens", "capitalised", "been-in-clause", "your-own", "open-quote"]
_AfterState = Literal["time-ahead-after", "moved-to-right", "planned-before"]
_LineState = Literal["instruction", "asked-place", "assistant", "other-speaker", "in-aside"]
Condition = Literal[_ValueState, _ClauseState, _AfterState, _LineState]
# The frames a rule can signal: counted (asserted, retracted, negated) or why a mention is not.
_Counted = Literal["asserted", "retracted", "negated"]
_NotMeant = Literal["sarcasm", "question", "hypothetical", "visit", "aside", "vague"]
_NotTheirs = Literal["third_party", "not_about_subject", "generic_word", "other_topic"]
FrameName = Literal[_Counted, _NotMeant, _NotTheirs]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Example(_Strict):
    """One example of a rule, run by the tests.

    Attributes:
        text: The text the pattern reads (the side of the value it looks at), for a pattern
            example.
        matches: Whether the pattern finds something in ``text``, or exactly what it finds.
        context: A retrieved memory, for a reading example.
        value: The candidate value the reading example asks about.
        question: The probe's question (a reading example), about Rhiannon Price.
        kind: The probe's kind: a value, the date of an event (``value`` names the event),
            or whether something was ever said.
        slot: The probe's slot (a set-valued family such as ``constraint`` holds several).
        others: The slot's other values in the world (candidates the reader also looks for).
        frame: The frame the reader gives the value's mention in ``context``.
    """

    text: str | None = None
    matches: bool | str = True
    context: str | None = None
    value: str | None = None
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
        unsaid: The phrase says the statement was never meant (a joke, a slip): what it takes
            back was not said at all.
        next_line: The phrase takes back a statement from the next line; false for phrases
            that only ever appear in a same-line cue.
        unit: For a phrase that tells a period from a day: how it counts (days, a week or
            weekend, a weekday, the weekend after).
        offset: How many units from the day (a count in the phrase multiplies it).
        to: The far end of a span of days.
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


class TimeWord(_Strict):
    """One row of a table of time words.

    Attributes:
        words: The words (a phrase, or several spellings of one), each read whole, in any case.
        unit: The unit they name or count in.
        offset: How many units from the day they are counted from (``-1`` the one before);
            for a count word, the number; for a weekday or a month, its place (Monday 0,
            January 1).
        to: The far end of a span of offsets (a season's last month).
    """

    words: str | list[str]
    unit: TimeUnit | None = None
    offset: int
    to: int | None = None

    @property
    def spellings(self) -> tuple[str, ...]:
        """Each spelling of the row's words."""
        return (self.words,) if isinstance(self.words, str) else tuple(self.words)


class Rule(_Strict):
    """One row of the rules file.

    Attributes:
        id: The rule's name, as rationales cite it.
        purpose: One line: what the rule finds and why it matters.
        note: More about a rule, where one line is not enough.
        frame: The frame the rule signals; none for a part that other rules' code combines.
        code: The row is a compound case: the reader's code decides it by combining the rows
            it ``uses`` (a named case, so that rationales can cite it).
        uses: The rows a compound case combines.
        side: Which side of the value the rule reads (or several, tried in turn): the clause
            ``before`` or ``after`` it, ``either`` (both), the ``window`` (before it, from the
            previous value or agent), the sentence ``later`` than it up to the next value (when
            it says anything), the ``sentence``, the ``sentence_before`` it, its
            ``tail`` (up to the next ``;``), the ``next_sentence``, the ``mention`` with its
            clause before and its tail, a line's ``head``, the ``next_lines``.
        max_scope: How far the rule reaches, in words (or lines, for ``next_lines``): the
            cue nearest the value counts, and only within that many words of it.
        terminated_by: What ends its scope: a pattern rule's id (the cue must not be parted
            from the value by it), or ``the next value``.
        when: States of the mention the row needs (the value opens its stretch of the
            clause, the question asks for a place, …).
        unless: States of the mention in which the row does not apply (the value's own
            wording negates, the sentence is an instruction, …).
        needs: A pattern rule that must find something on the side before this row's own
            pattern is tried: a quick test in front of a slow pattern.
        cue: How the rationale names the cue: ``{}`` is the words found.
        strip: Characters stripped from the words found (``true``: white space).
        pattern: A regular expression, in pieces joined with nothing. A row with no pattern
            (nor words) fires on its ``when`` states alone.
        ignore_case: Match without regard to case.
        words: A word list (each piece split on spaces).
        phrases: A list of phrases, each taken whole ("what if").
        alternatives: Phrases of one rule, with what each says.
        table: Time words with the unit they name and how far they point.
        examples: At least one.
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    purpose: str = Field(min_length=8)
    note: str | None = None
    frame: FrameName | None = None
    code: bool = False
    uses: list[str] = []
    side: Side | list[Side] | None = None
    max_scope: int | None = Field(default=None, ge=1)
    terminated_by: str | None = None
    when: list[Condition] = []
    unless: list[Condition] = []
    needs: str | None = None
    cue: str | None = None
    strip: bool | str = False
    pattern: str | list[str] | None = None
    ignore_case: bool = False
    words: list[str] | None = None
    phrases: list[str] | None = None
    alternatives: list[Alternative] | None = None
    table: list[TimeWord] | None = None
    examples: list[Example] = Field(min_length=1)

    @property
    def listed(self) -> bool:
        """Whether the rule is a list of words (a word list, phrases or a table)."""
        return self.words is not None or self.phrases is not None or self.table is not None

    @model_validator(mode="after")
    def _one_body(self) -> Rule:
        kinds = (self.pattern, self.words, self.phrases, self.alternatives, self.table)
        bodies = len([b for b in kinds if b is not None])
        if self.code and (bodies or self.frame is None or any(e.text for e in self.examples)):
            raise ValueError("a compound case names its frame and reads contexts, with no body")
        if bodies > 1 or (bodies == 0 and not self.when and not self.code):
            raise ValueError(
                "a rule has one of pattern, words, phrases, alternatives, table (or only states)"
            )
        if bodies == 0 and any(e.text is not None for e in self.examples):
            raise ValueError("a rule of states alone has reading examples (contexts)")
        if self.listed and any(e.text is None for e in self.examples):
            raise ValueError("a word list's examples are texts (a word in or out of the list)")
        return self


class RuleFile(_Strict):
    """The rules file: version, order of the frame steps, fragments, rules and lexicon."""

    version: int
    order: list[str] = []
    fragments: dict[str, str | list[str]] = {}
    rules: list[Rule]
    lexicon: list[list[str]] = []


def _joined(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


# "{name}" is a fragment; "{words:id}" a word-list rule's words as alternatives, longest first.
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
        for rule in spec.rules:
            unknown = [used for used in rule.uses if used not in self.by_id]
            if unknown:
                raise ValueError(f"{source}: rule {rule.id!r}: uses: no rule {unknown[0]!r}")
        unknown = [step for step in spec.order if step not in self.by_id]
        if unknown:
            raise ValueError(f"{source}: order: no rule or compound case {unknown[0]!r}")
        fragments = {name: _joined(text) for name, text in spec.fragments.items()}
        for rule in spec.rules:
            if rule.listed:
                listed = sorted(self.words(rule.id), key=lambda w: (-len(w), w))
                fragments[f"words:{rule.id}"] = "|".join(map(re.escape, listed))
        self._fragments: dict[str, str] = {}
        for name in fragments:
            self._fragments[name] = self._expand(fragments[name], fragments)
        self.patterns: dict[str, re.Pattern[str]] = {}
        self._ids: dict[re.Pattern[str], str] = {}
        for rule in spec.rules:
            if rule.pattern is not None:
                text = self._expand(_joined(rule.pattern), self._fragments)
                try:
                    self.patterns[rule.id] = re.compile(
                        text, re.IGNORECASE if rule.ignore_case else 0
                    )
                except re.error as error:
                    raise ValueError(f"{source}: rule {rule.id!r}: pattern: {error}") from None
                self._ids.setdefault(self.patterns[rule.id], rule.id)
        self.word_sets = {rule.id: self.words(rule.id) for rule in spec.rules if rule.listed}
        self.tables = {rule.id: tuple(rule.table) for rule in spec.rules if rule.table is not None}

    @staticmethod
    def _expand(text: str, fragments: dict[str, str]) -> str:
        def fragment(match: re.Match[str]) -> str:
            found = fragments.get((match.group(1) or "") + match.group(2))
            return match.group(0) if found is None else Rules._expand(found, fragments)

        return _FRAGMENT.sub(fragment, text)

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

    def id_of(self, pattern: re.Pattern[str]) -> str:
        """The id of the rule whose compiled pattern this is."""
        return self._ids[pattern]

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

    def expand(self, text: str) -> str:
        """``text`` with the file's fragments (``{name}``, ``{words:id}``) written out."""
        return self._expand(text, self._fragments)


def _where(error: ValidationError, raw: object, source: str) -> str:
    """One line for the first validation error: the rule's id and the field."""
    first = error.errors()[0]
    loc = list(first["loc"])
    where = ".".join(str(part) for part in loc) or "file"
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(raw, dict):
        rows = raw.get(str(loc[0]))
        row = rows[loc[1]] if isinstance(rows, list) and loc[1] < len(rows) else None
        rule_id = row.get("id", f"#{loc[1] + 1}") if isinstance(row, dict) else f"#{loc[1] + 1}"
        field = ".".join(str(part) for part in loc[2:]) or "row"
        where = f"rule {rule_id!r}: {field}"
    return f"{source}: {where}: {first['msg']}"


def load_rules(path: Path | None = None) -> Rules:
    """Read and compile a rules file (default: the shipped ``rules.yaml``).

    Args:
        path: Another rules file, e.g. a draft under test.

    Returns:
        The compiled rules.

    Raises:
        ValueError: One line naming the rule and the field that is wrong.
    """
    if path is None:
        data = files(__package__).joinpath("rules.yaml").read_bytes()
        source = "rules.yaml"
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
