"""The token meter of one cell: where each worker's model calls go, and who pays for them.

Every worker of a cell calls models through the cell's :class:`~drift_pipeline.llm.TokenMeter`
with a key of its own (one per replicate, so concurrent replicates are told apart). It finds the
meter as ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (what the ``openai`` client reads by default);
a registered backend that declares a model (:class:`~.backends.LLMAccess`) also gets the
meter's address in its endpoint option and the meter's key as ``DRIFT_LLM_API_KEY``, and the
endpoint it was configured with becomes its upstream. The user's own key stays in the harness.

What a cell is charged (:func:`charge`): the metered tokens of every store and retrieve; a
backend's ``token_counts()`` is recorded beside them. A cell whose backend reports more than the
meter counted (by more than the tolerance of :mod:`._charging`) is charged its own report
instead: a system whose model calls go around the meter, with its own key to a remote host,
cannot be metered, and its unseen spend must never make it cheaper than it says. Its figures are
then self-reported, and every view says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drift_pipeline.llm import (
    API_KEY_ENV,
    BASE_URL_ENV,
    CompletionCache,
    MeterAccount,
    TokenMeter,
    Upstream,
)

from ._charging import SELF_REPORTED, token_source

__all__ = ["CellMeter", "charge", "start_cell_meter"]


@dataclass
class CellMeter:
    """A started meter and how one arm's workers use it.

    Attributes:
        meter: The cell's meter.
        options: The backend's options for its workers (a declared endpoint option points at
            the meter).
        llm_key_variable: Whether the workers' ``DRIFT_LLM_API_KEY`` is the meter's key too
            (a backend that declares a model reads its key from there).
        cache: The meter's reply cache for this arm (see :func:`start_cell_meter`).
    """

    meter: TokenMeter
    options: dict[str, Any]
    llm_key_variable: bool = False
    cache: CompletionCache | None = None

    def account(self, label: str) -> MeterAccount:
        """A key for one worker (``label``: ``arm#replicate``)."""
        return self.meter.open_account(label, cache=self.cache)

    def environment(self, account: MeterAccount) -> dict[str, str]:
        """The variables that point a worker's model clients at the meter with its key."""
        env = account.environment()
        if self.llm_key_variable:
            env[API_KEY_ENV] = account.key
            env[BASE_URL_ENV] = account.base_url
        return env

    def close(self) -> None:
        """Stop the meter."""
        self.meter.close()


def start_cell_meter(
    backend: str, options: dict[str, Any], cache_dir: Path | None = None
) -> CellMeter:
    """Start the meter of one arm's cell.

    The upstream is the endpoint option of a backend that declares a model (as the harness
    filled it from ``DRIFT_LLM_BASE_URL``, or as configured), else ``DRIFT_LLM_BASE_URL``; with
    neither, the meter refuses every call with an error naming the variable.

    Args:
        backend: The arm's backend spec.
        options: Its constructor options.
        cache_dir: The arm's persisted completion cache (a backend that caches its completions
            has one). The meter keeps its replies there instead of the worker: a backend's own
            cache would answer a rerun without a call, and the meter would then see nothing.
    """
    from .backends import backend_needs

    try:
        needs = backend_needs(backend, options)
    except ValueError:
        needs = None  # the worker reports a broken registration itself, when it starts
    access = needs.llm if needs is not None else None
    configured = str(options.get(access.base_url_option) or "") if access is not None else ""
    upstream = Upstream(configured) if configured else Upstream.from_env()
    meter = TokenMeter(upstream).start()
    worker_options = dict(options)
    if access is not None:
        worker_options[access.base_url_option] = meter.url
    cache = CompletionCache(cache_dir) if cache_dir is not None else None
    return CellMeter(meter, worker_options, access is not None, cache)


def charge(
    snapshots: dict[str, list[Any]], retrievals: dict[str, list[Any]]
) -> tuple[list[int], list[int]]:
    """The LLM tokens charged per store and per retrieve (see the module docstring).

    Args:
        snapshots: The cell's store rows, with ``metered_write_tokens`` and
            ``reported_write_tokens`` (and the agent's reads before each session, in
            ``session_metered_read_tokens`` and ``session_reported_read_tokens``).
        retrievals: Its retrieve rows, with ``metered_read_tokens`` and
            ``reported_read_tokens``.

    Returns:
        ``write_tokens`` per store and ``llm_read_tokens`` per retrieve.
    """
    metered = sum(snapshots["metered_write_tokens"]) + sum(retrievals["metered_read_tokens"])
    metered += sum(map(sum, snapshots.get("session_metered_read_tokens", ())))
    # Every call counts, the reads before sessions too: the cell is self-reported exactly when
    # its audit says so (see evaluation's TokenAudit). A report the backend did not know for
    # some call (None) is no figure to charge.
    reports = [
        *snapshots["reported_write_tokens"],
        *retrievals["reported_read_tokens"],
        *(r for reads in snapshots.get("session_reported_read_tokens", ()) for r in reads),
    ]
    reported = None if None in reports else sum(reports)
    if token_source(metered, reported, unseen_spend=False) == SELF_REPORTED:
        return list(snapshots["reported_write_tokens"]), list(retrievals["reported_read_tokens"])
    return list(snapshots["metered_write_tokens"]), list(retrievals["metered_read_tokens"])
