"""The conformance check, in the run's sandboxed worker, on backends written outside the package.

It must refuse a backend that stores nothing, one that leaks across entities, one that never
becomes queryable (and one that becomes queryable late without saying so, one that mangles
non-ASCII text), each with a one-line reason, and pass an honest one and every built-in.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from llm_server import FakeOpenAIServer

from drift_pipeline.memory import (
    ConformanceReport,
    check_backend,
    check_backend_async,
    check_script,
)
from drift_pipeline.memory.backends import backend_names, built_in
from memory.plugins import _support

PLUGIN = "plugins.conformance"


CHECK = check_script()
"""What the check says and asks without a seed (as ``drift check-backend`` runs it)."""

REFUSED = {
    "Forgetful": ("round_trip", f"it stores nothing: the fact stored for {CHECK.entities[0]}"),
    "Leaky": ("scope", f"it leaks across entities: a fact stored for {CHECK.entities[1]}"),
    "NeverQueryable": ("round_trip", "it never became queryable after storing a fact"),
    "Laggard": ("round_trip", "implement wait_until_queryable()"),
    "Folding": ("awkward_messages", f"{CHECK.unicode.token!r} came back altered"),
}
"""Each broken backend, the check it fails and what its one-line reason says."""


@pytest.fixture(autouse=True)
def plugins_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(_support.PLUGINS_ROOT))
    yield


@pytest.fixture(scope="module")
def refusals() -> dict[str, ConformanceReport]:
    """The broken backends' reports, checked side by side (each in its own worker)."""

    async def all_of_them() -> list[ConformanceReport]:
        return await asyncio.gather(
            *(
                check_backend_async(f"{PLUGIN}:{name}", call_timeout=3.0, settle_s=1.0)
                for name in REFUSED
            )
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(_support.PLUGINS_ROOT))
        return dict(zip(REFUSED, asyncio.run(all_of_them()), strict=True))


@pytest.mark.parametrize("backend", sorted(REFUSED))
def test_refuses_a_broken_backend_with_a_one_line_reason(
    backend: str, refusals: dict[str, ConformanceReport]
) -> None:
    failed, reason = REFUSED[backend]
    report = refusals[backend]
    assert not report.passed
    assert report.reason is not None and reason in report.reason, report.reason
    assert "\n" not in report.line() and report.line().endswith(report.reason)
    assert report.checks[failed] is False
    assert report.checks["capabilities"] is None  # the checks stop at the first failure
    assert report.isolation  # it ran in the sandbox a run uses


def test_the_checks_names_and_facts_come_from_its_seed_and_a_fingerprinting_leak_is_caught() -> (
    None
):
    scripts = [check_script(seed) for seed in ("run-1", "run-2", "run-3")]
    assert check_script("run-1") == scripts[0]  # the same run checks alike
    assert len({s.entities for s in scripts}) == len({s.fact_a.token for s in scripts}) == 3
    for script in scripts:
        a, b = script.entities
        assert a != b and script.user not in (a, b)
        assert script.fact_a.token in script.fact_a.said and script.fact_a.token.isupper()
    # A backend that keeps entities apart only under names it knows for the check's is seen
    # leaking as soon as the names are drawn from a seed.
    report = check_backend(f"{PLUGIN}:LeakyOutsideTheCheck", seed="run-1")
    assert report.reason is not None and report.reason.startswith("it leaks across entities")
    assert report.checks["scope"] is False


def test_passes_an_honest_backend_and_reports_what_it_declares_and_measured() -> None:
    report = check_backend(f"{PLUGIN}:Honest")
    assert report.passed, report.reason
    assert set(report.checks.values()) == {True}
    declared = report.capabilities
    assert declared["stores_for_entity"] and declared["asynchronous"] and declared["snapshot"]
    assert not declared["counts_own_storage"] and not declared["keeps_nothing"]
    assert declared["service"] == {
        "service": "a log kept outside the package",
        "sdk_version": "0.1",
    }
    # Its wait sleeps 10 ms per store: counted as time-to-queryable, not hidden.
    assert len(report.queryable_ms) == 5 and min(report.queryable_ms) >= 9.0
    assert len(report.read_ms) >= 10 and 0 <= report.read_p50_ms() <= report.read_p95_ms()
    figures = report.to_json()
    assert figures["passed"] and figures["read_ms_p95"] == report.read_p95_ms()
    assert "queryable within" in report.line() and "read p50" in report.line()


def test_passes_every_built_in() -> None:
    names = [name for name in backend_names() if built_in(name)]
    assert {"amnesiac", "bm25", "fact_store", "full_context", "sentence_log"} <= set(names)

    # All at once, each in its own worker: on two loaded cores a built-in's 12,000-word store
    # (several CPU-seconds for fact_store) can pass a run's default 30 s call timeout. What
    # is checked is that each passes, so each call gets a longer timeout, as a run can give.
    async def all_of_them() -> list[ConformanceReport]:
        checks = (check_backend_async(name, call_timeout=180.0) for name in names)
        return await asyncio.gather(*checks)

    reports = asyncio.run(all_of_them())
    # leaky_shared keeps one store for every entity on purpose (it shows Privacy catching a
    # leak, never ranked): the check must catch it too. Every other built-in passes.
    failed = {r.backend: r.reason for r in reports if not r.passed}
    assert set(failed) == {"leaky_shared"}, [r.line() for r in reports if not r.passed]
    assert (failed["leaky_shared"] or "").startswith("it leaks across entities")
    # The amnesiac is a declared baseline: its empty memory is checked, not refused.
    amnesiac = reports[names.index("amnesiac")]
    assert amnesiac.capabilities["keeps_nothing"]
    assert any("keeps nothing" in note for note in amnesiac.notes)


def test_a_backend_that_calls_a_model_goes_through_a_meter_as_in_a_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-test-conformance-upstream-1414"
    with FakeOpenAIServer(api_key=key) as server:
        monkeypatch.setenv("DRIFT_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("DRIFT_LLM_API_KEY", key)
        report = check_backend(f"{PLUGIN}:ModelNotes")
        calls = len(server.requests)
        sent = set(server.authorization)
    assert report.passed, report.reason
    assert calls == 5  # one per stored session, forwarded with the user's key
    assert sent == {f"Bearer {key}"}
    assert any("its model calls during the check: 5 through the meter" in n for n in report.notes)
    assert key not in json.dumps(report.to_json())


def test_model_spend_is_judged_by_the_rule_a_run_charges_by(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Metered, self-reported or unknown, as a run would charge it; unknown passes, said so."""
    key, own_key = "sk-test-conformance-upstream-1732", "sk-test-conformance-own-2236"
    with (
        FakeOpenAIServer(api_key=key) as server,
        FakeOpenAIServer(api_key=own_key) as own,
    ):
        monkeypatch.setenv("DRIFT_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("DRIFT_LLM_API_KEY", key)

        async def all_of_them() -> list[ConformanceReport]:
            around = {"url": own.base_url, "key": own_key}
            checks = (
                check_backend_async(f"{PLUGIN}:ModelNotes"),
                check_backend_async(f"{PLUGIN}:OwnModelNotes", around),
                check_backend_async(f"{PLUGIN}:OwnModelNotes", {**around, "report": True}),
                check_backend_async(f"{PLUGIN}:ServiceModels"),
            )
            return list(await asyncio.gather(*checks))

        metered, around, reported, service = asyncio.run(all_of_them())
        own_calls = len(own.requests)
    assert own_calls == 10  # five stores by each of the two around the meter
    for report in (metered, around, reported, service):
        assert report.passed, report.reason  # an unknown spend is not a failure
    assert (metered.model_tokens, metered.unmetered_calls) == ("metered", 0)
    assert metered.capabilities["token_counts"] == "counted"
    assert "model tokens unknown" not in metered.line()

    # Calls to its own URL are seen by its worker, and a zero report does not cover them.
    assert (around.model_tokens, around.unmetered_calls) == ("unknown", 5)
    assert not around.capabilities["models_outside_meter"]
    assert "model tokens unknown: a run will not rank it" in around.line()
    assert "\n" not in around.line()
    assert any("5 request(s) to a model API sent around the meter" in n for n in around.notes)
    assert any("it calls models around the meter" in n for n in around.notes)

    # Reporting them is the way out: charged its report, as a run charges it.
    assert (reported.model_tokens, reported.unmetered_calls) == ("self-reported", 5)
    assert "model tokens unknown" not in reported.line()

    # Declared, with no counts: unknown without a single call seen.
    assert (service.model_tokens, service.unmetered_calls) == ("unknown", 0)
    assert service.capabilities["models_outside_meter"] is True
    assert service.capabilities["token_counts"] == "unknown"
    assert any("it declares models_outside_meter" in n for n in service.notes)
    shown = "\n".join(service.lines())
    assert "models_outside_meter yes" in shown and "model tokens: unknown" in shown
    summary = service.to_json()
    assert summary["model_tokens"] == "unknown" and summary["unmetered_calls"] == 0
    assert own_key not in json.dumps(around.to_json())


def test_without_an_endpoint_the_model_calls_are_refused_and_the_check_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DRIFT_LLM_BASE_URL", raising=False)
    report = check_backend(f"{PLUGIN}:ModelNotes")
    assert report.reason is not None
    assert report.reason.startswith("storing a fact failed: ")
    assert "DRIFT_LLM_BASE_URL" in report.reason


def test_a_key_the_backend_quotes_stays_out_of_the_report() -> None:
    key = "sk-test-conformance-option-2718"
    report = check_backend(f"{PLUGIN}:KeyQuoter", {"api_key": key})
    assert report.reason is not None
    assert report.reason.startswith(
        "storing a fact failed: PermissionError: key [redacted] was refused at "
    )
    assert key not in json.dumps(report.to_json())
