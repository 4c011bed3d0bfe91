"""Before a run scores anything: the conformance check of every arm that is not a built-in.

An arm whose backend fails it is not run; the run says why in one line and ends with the
invalid-arm status. A backend that keeps entities' memories together fails it too, unless the
run allows that backend to leak (``RunOptions.allow_leaks``, ``drift run --allow-leak NAME``):
it is then scored, its Privacy probes measuring the leak. Each checked backend's verdict, the
leak it showed and whether leaking was allowed go into the run manifest (what it runs against
is there too, under ``services``, as every cell reports it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from drift_pipeline.memory import (
    Arm,
    BackendInstance,
    BackendStartError,
    ConformanceReport,
    LoopConfig,
    check_backend,
)
from drift_pipeline.memory.backends import backend_needs, built_in, resolve_backend_options
from drift_pipeline.sources import WorldSource

__all__ = ["CHECK_ENV", "ArmChecks", "check_arms", "check_seed"]

CHECK_ENV: Final = "DRIFT_BACKEND_CHECK"
"""``0`` turns the check off: the harness's own tests of how a run contains a broken backend
run such backends on purpose. The manifest then says which arms went unchecked."""
_UNCHECKED: Final = f"not checked ({CHECK_ENV}=0)"


@dataclass
class ArmChecks:
    """The conformance reports of a run's checked backends, by backend."""

    reports: dict[str, ConformanceReport] = field(default_factory=dict)
    unchecked: tuple[str, ...] = ()
    """Backends that would have been checked, had the check not been turned off."""
    allowed_leaks: tuple[str, ...] = ()
    """Backends the run allowed to leak across entities (recorded even when unchecked)."""
    arms: tuple[Arm, ...] = ()
    """The arms whose backend was due for the check, whatever its verdict."""

    @property
    def failed(self) -> frozenset[str]:
        """The backends that failed: none of their arms runs."""
        return frozenset(name for name, report in self.reports.items() if not report.passed)

    def failure_lines(self, arms: Sequence[Arm]) -> list[str]:
        """One line per arm not scored because its backend failed the check once started."""
        failed = self.failed
        return [
            f"{arm.key}: not scored: failed the conformance check: "
            f"{self.reports[arm.backend].reason}"
            for arm in arms
            if arm.backend in failed and self.reports[arm.backend].start_error is None
        ]

    def start_failures(self, arms: Sequence[Arm]) -> list[BackendStartError]:
        """The arms whose backend could not even be built for the check.

        A run reports them as it reports any backend that cannot start (one line, its own exit
        status; with ``keep_going`` the other arms run), not as a check they failed.
        """
        return [
            BackendStartError(arm.key, error)
            for arm in arms
            if (error := self._start_error(arm.backend)) is not None
        ]

    def _start_error(self, backend: str) -> str | None:
        report = self.reports.get(backend)
        return report.start_error if report is not None else None

    def not_scored(self) -> dict[str, str]:
        """Each arm the check kept from being scored, by arm key, with why in one line.

        The run manifest records it (``not_scored``), so an arm asked for and refused is
        named there and not only missing from its ``arms``.
        """
        reasons: dict[str, str] = {}
        for arm in self.arms:
            report = self.reports.get(arm.backend)
            if report is None or report.passed:
                continue
            reasons[arm.key] = (
                f"could not start: {report.start_error}"
                if report.start_error is not None
                else f"failed the conformance check: {report.reason}"
            )
        return dict(sorted(reasons.items()))

    def manifest(self) -> dict[str, Any]:
        """What the manifest records: each checked backend's verdict.

        No timings: a manifest must read the same on a rerun.
        """
        verdicts: dict[str, Any] = {
            name: {
                "passed": report.passed,
                "reason": report.reason,
                "leak": report.leak,
                "leak_allowed": report.leak_allowed,
                # Where a run takes its LLM tokens from, judged on the check's calls.
                "model_tokens": report.model_tokens or None,
            }
            for name, report in self.reports.items()
        }
        for name in self.unchecked:
            verdicts[name] = {
                "passed": None,
                "reason": _UNCHECKED,
                "leak": None,
                "leak_allowed": name in self.allowed_leaks,
                "model_tokens": None,
            }
        return dict(sorted(verdicts.items()))


def check_arms(
    arms: Sequence[Arm],
    sources: Sequence[WorldSource],
    backend_options: dict[str, dict[str, Any]],
    backend_instances: dict[str, BackendInstance],
    loop: LoopConfig,
    allow_leaks: Collection[str] = (),
) -> ArmChecks:
    """Check, once each, the backends of ``arms`` that are not built-ins.

    With ``DRIFT_BACKEND_CHECK=0`` none is checked (see :data:`CHECK_ENV`). Each is built with
    the options the run gives it on the first source (a backend object from
    its packed instance), in a worker sandboxed like the run's, with the same timeout, clock
    and the variables its declared needs pass in. A backend named in ``allow_leaks`` may keep
    entities' memories together (the leak is recorded, not refused).

    Raises:
        ValueError: One line: a backend whose options cannot be resolved (a missing package,
            an unset model variable).
    """
    due = [
        backend
        for backend in dict.fromkeys(arm.backend for arm in arms)
        if backend in backend_instances or not built_in(backend)
    ]
    allowed = tuple(backend for backend in due if backend in allow_leaks)
    checked_arms = tuple(arm for arm in arms if arm.backend in due)
    if os.environ.get(CHECK_ENV, "1").strip() == "0":
        return ArmChecks(unchecked=tuple(due), allowed_leaks=allowed, arms=checked_arms)
    checks = ArmChecks(allowed_leaks=allowed, arms=checked_arms)
    for backend in due:
        instance = backend_instances.get(backend)
        if instance is not None:
            options = instance.worker_options()
        else:
            options = resolve_backend_options(backend, sources[0], backend_options.get(backend))
        env = backend_needs(backend, options).worker_env
        checks.reports[backend] = check_backend(
            backend,
            options,
            call_timeout=loop.call_timeout,
            isolate=loop.isolate,
            protect=loop.protect,
            env={name: os.environ[name] for name in env if name in os.environ},
            simulated_clock=loop.simulated_clock,
            allow_leak=backend in allowed,
            seed=check_seed(sources, backend),
        )
    return checks


def check_seed(sources: Sequence[WorldSource], backend: str) -> str:
    """What a run's check of ``backend`` draws its agents and facts from.

    The worlds the run scores and the backend: the same run checks alike (its manifest reads
    the same on a rerun), and no backend can recognise the check by a fixed name or sentence.
    """
    digest = hashlib.sha256()
    for part in (*sorted(source.content_hash for source in sources), backend):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()
