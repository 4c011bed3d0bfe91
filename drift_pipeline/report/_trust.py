"""How far to trust a leaderboard row: its verification status and the reasons behind it.

A row is ``verified`` when these checks hold (anything else makes it ``unverified``, with one
reason per failed or missing check):

- **sanity**: every sanity arm that ran beside it (trivial strategies no one would call a
  memory) scored DRIFT-C at least :data:`SANITY_MARGIN` below the best reference arm (the
  package's own reference memories, never an arm under test) and below the arm it imitates.
  When none ran, nothing shows that the probes reward memory alone.
- **above sanity** (an arm under test, a vendor's backend or an adapter, beside a sanity arm):
  it scored DRIFT-C above every sanity arm. One that a trivial strategy matched is unverified
  on its own row; the other rows are not.
- **fault rate**: its share of faulted or skipped calls stayed under the run's limit.
- **audit**: the answerability audit of every world it ran on passed (each probe answerable
  from its evidence sessions), where the audit was run.
- **cost**: the harness metered its model tokens. Tokens only its backend reported
  (self-reported) could not be checked; a model spend it could not see at all (unknown) leaves
  its cost figures bounds, and the arm is not ranked.
- **judged**: the reader and judge answered every probe it rests on (its own answers, the
  amnesiac's and the reference compressor's); an arm with a failed call is not ranked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from drift_pipeline.memory.backends import built_in

if TYPE_CHECKING:
    from ._leaderboard import ArmStanding

RANK_METRIC: Final = "drift_c"

__all__ = [
    "SANITY_ARMS",
    "SANITY_MARGIN",
    "UNVERIFIED",
    "VERIFIED",
    "Verification",
    "verify_rows",
]

SANITY_ARMS: Final[Mapping[str, str]] = {
    "recency_buffer": "full_context",
    "tagged_buffer": "full_context",
    "keyword_lines": "fact_store",
    "session_dates": "temporal_graph",
    # The dated log of every first-person user sentence: the floor a slot memory must clear.
    "sentence_log": "fact_store",
    # sentence_log's log handed to the probes only, nothing to the agent's own reads.
    "exam_only": "fact_store",
}
"""Each sanity backend and the reference backend it imitates."""
SANITY_TWINS: Final[Mapping[str, str]] = {"exam_only": "sentence_log"}
"""Sanity backends that hold the same memory as another arm and must not beat it by the margin."""
NOT_REFERENCES: Final = frozenset({*SANITY_ARMS, "amnesiac"})
"""The package's own backends that are not reference memories (the best of the rest sets the
sanity bound)."""
SANITY_MARGIN: Final = 0.10
"""DRIFT-C a sanity arm must stay below the best reference arm."""
VERIFIED: Final = "verified"
UNVERIFIED: Final = "unverified"


@dataclass(frozen=True)
class Verification:
    """A row's verification status with the checks behind it.

    Attributes:
        checks: Check name (``sanity``, ``fault_rate``, ``audit``, ``cost``; for an arm under
            test beside a sanity arm, ``above_sanity``) → whether it passed (``None``: it could
            not be run).
        reasons: One line per check that failed or could not be run.
    """

    checks: dict[str, bool | None]
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def status(self) -> str:
        """``verified`` when every check passed, else ``unverified``."""
        return VERIFIED if all(v is True for v in self.checks.values()) else UNVERIFIED

    def to_json(self) -> dict[str, Any]:
        """The status, each check's outcome and the reasons, as the JSON summary holds them."""
        return {"status": self.status, "checks": dict(self.checks), "reasons": list(self.reasons)}

    def line(self) -> str:
        """``verified``, or ``unverified: reason; reason`` (the terminal's column)."""
        if self.status == VERIFIED:
            return VERIFIED
        return f"{UNVERIFIED}: {'; '.join(self.reasons)}"


def _drift_c(row: ArmStanding) -> float | None:
    # An arm that is not ranked (an unknown cost: its DRIFT-C is an upper bound) holds no
    # sanity arm to account.
    figure = row.rows.get(RANK_METRIC)
    return None if figure is None or not row.ranked else figure.value


def is_reference(backend: str) -> bool:
    """Whether ``backend`` is a reference memory: one of the package's own, not a sanity arm.

    Nor the amnesiac. An arm under test (``module:Class``, an installed plugin, an adapter to a
    service) never is, however it scores: the sanity arms are held against the references.
    """
    return backend not in NOT_REFERENCES and built_in(backend)


def sanity_failures(rows: Sequence[ArmStanding]) -> tuple[bool | None, list[str]]:
    """Whether the sanity arms among ``rows`` lost to the references; a line per one that did not.

    Returns:
        ``(None, [why])`` when no sanity arm ran or no reference arm has a DRIFT-C; else
        whether every sanity arm lost, with a line per sanity arm that did not.
    """
    sanity = [r for r in rows if r.backend in SANITY_ARMS]
    references = {
        r.backend: value
        for r in rows
        if is_reference(r.backend) and (value := _drift_c(r)) is not None
    }
    if not sanity:
        return None, ["no sanity arm ran beside it (e.g. --backend sentence_log)"]
    if not references:
        return None, [
            "no reference arm with a DRIFT-C to hold the sanity arms against "
            "(e.g. --backend fact_store)"
        ]
    best_name, best = max(references.items(), key=lambda item: item[1])
    # A twin is compared under the same gate: the same memory seeing the same sessions.
    twins = {(r.backend, r.gate): value for r in rows if (value := _drift_c(r)) is not None}
    failures = []
    for row in sanity:
        value = _drift_c(row)
        if value is None:
            failures.append(f"sanity arm {row.arm} has no DRIFT-C")
            continue
        if value > best - SANITY_MARGIN:
            failures.append(
                f"sanity arm {row.arm} did not stay {SANITY_MARGIN:.2f} DRIFT-C below "
                f"{best_name} ({value:.3f} vs {best:.3f})"
            )
        twin = SANITY_TWINS.get(row.backend)
        twin_value = twins.get((twin, row.gate)) if twin is not None else None
        if twin_value is not None and value > twin_value + SANITY_MARGIN:
            failures.append(
                f"sanity arm {row.arm} beat {twin}, the same memory, by more than "
                f"{SANITY_MARGIN:.2f} DRIFT-C ({value:.3f} vs {twin_value:.3f})"
            )
        imitated = references.get(SANITY_ARMS[row.backend])
        if imitated is not None and value >= imitated:
            failures.append(
                f"sanity arm {row.arm} reached {SANITY_ARMS[row.backend]} "
                f"({value:.3f} vs {imitated:.3f})"
            )
    return not failures, failures


def _above_sanity(row: ArmStanding, rows: Sequence[ArmStanding]) -> tuple[bool, list[str]] | None:
    """Whether an arm under test beat every sanity arm beside it; a line per one that did not.

    ``None`` for a reference, a sanity arm or the amnesiac, and for an arm with no DRIFT-C or
    no sanity arm with one beside it.
    """
    value = _drift_c(row)
    if value is None or row.backend in NOT_REFERENCES or is_reference(row.backend):
        return None
    trivial = {
        other.arm: figure
        for other in rows
        if other.backend in SANITY_ARMS and (figure := _drift_c(other)) is not None
    }
    if not trivial:
        return None
    lines = [
        f"{arm}, a trivial strategy, scored at least as high as it ({figure:.3f} vs {value:.3f})"
        for arm, figure in trivial.items()
        if figure >= value
    ]
    return not lines, lines


def verify_rows(
    rows: Sequence[ArmStanding],
    max_fault_rate: float | None = None,
    audits: Mapping[str, str | None] | None = None,
) -> dict[str, Verification]:
    """Each row's verification (see the module's description), by arm.

    Args:
        rows: The standings shown together (the sanity arms are looked for among them).
        max_fault_rate: The run's limit, for the reason line (``None``: not recorded).
        audits: World id → the answerability audit's failure (``None``: passed); ``None`` or
            empty when the audit was not run.
    """
    sanity, sanity_reasons = sanity_failures(rows)
    audit: bool | None = None
    audit_reasons: list[str] = ["the answerability audit was not run on its worlds"]
    if audits:
        failed = {world: why for world, why in audits.items() if why is not None}
        audit = not failed
        audit_reasons = [f"audit failed on {world}: {why}" for world, why in sorted(failed.items())]
    limit = "" if max_fault_rate is None else f" (limit {max_fault_rate:.1%})"
    out = {}
    for row in rows:
        reasons = [] if sanity else list(sanity_reasons)
        checks: dict[str, bool | None] = {"sanity": sanity}
        # The sanity arms are the references' yardstick; an arm under test that one of them
        # matched is unverified on its own row (its own check), and no other row is.
        above = _above_sanity(row, rows)
        if above is not None:
            checks["above_sanity"] = above[0]
            reasons += above[1]
        if not row.valid:
            reasons.append(f"{row.fault_rate:.1%} of its calls faulted or were skipped{limit}")
        if not audit:
            reasons += audit_reasons
        cost, why = _cost_check(row)
        if why:
            reasons.append(why)
        if row.judge_failures is not None:
            reasons.append(f"{row.judge_failures.line()}: not ranked")
        checks |= {"fault_rate": row.valid, "audit": audit, "cost": cost}
        checks["judged"] = row.judge_failures is None
        out[row.arm] = Verification(checks, tuple(reasons))
    return out


def _cost_check(row: ArmStanding) -> tuple[bool | None, str]:
    """Whether the arm's model tokens were metered (``None``: only self-reported), and why not."""
    tokens = row.llm_tokens
    if tokens is None or tokens.source == "metered":
        return True, ""
    if tokens.cost_known:
        return None, "its LLM tokens are self-reported, not checked by the harness's meter"
    return False, (
        "its model tokens are unknown (models the meter cannot see): its cost figures are "
        "bounds and it is not ranked"
    )
