"""Model spend the harness's meter cannot see, through ``drift run`` as users run it.

Four backends live in a folder of the test's own (never in the repository). They are one memory
(a summary of each session by a model, kept for the entity it is stored for and read back
newest first) whose model is reached in four ways:

- ``ThroughMeter`` calls it through the endpoint its worker is given (the harness's meter) and
  reports what it spent: the metered arm, ranked;
- ``AroundMeter`` calls a second endpoint of its own (another loopback server, its own URL and
  key) and reports zero: the worker sees the calls, the spend is unknown, and the arm is marked
  and listed after the metered one, never ranked above it;
- ``UnknownSpend`` declares ``models_outside_meter`` (its model is elsewhere) and reports
  ``TokenCounts(write=None, read=None)``: marked, not ranked, TES and DRIFT-E not measured;
- ``OverReporter`` calls through the meter and reports three times what it spent: its report
  is shown and charged (a report above the meter is never replaced by the smaller figure),
  marked self-reported, with the gap.

Each passes the conformance check the run starts with, which says the same before any cell runs.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from llm_server import FakeOpenAIServer, echo_last_user

from drift_pipeline.cli import main
from drift_pipeline.evaluation import UNKNOWN_MODEL_TOKENS
from drift_pipeline.pipeline import connect
from drift_pipeline.report._html import render_html
from drift_pipeline.report._report_data import gather

from .plugins import _support

pytestmark = pytest.mark.slow  # a whole drift run through the sandbox (about 10 s of CPU)

UPSTREAM_KEY = "sk-test-meter-upstream-1414213562"
OWN_KEY = "sk-test-own-key-1732050807"
THROUGH, AROUND, UNKNOWN, OVER = (
    f"spenders:{name}" for name in ("ThroughMeter", "AroundMeter", "UnknownSpend", "OverReporter")
)

SOURCE = '''
"""One memory, its summary model reached four ways."""

import openai

from drift_pipeline.memory import TokenCounts

OWN_URL = {own_url!r}  # an endpoint of the backend's own, not the harness's meter


class _Summaries:
    own_endpoint = False
    model = "summary-model"

    def __init__(self):
        self.notes = {{}}
        self.client = None
        self.spent = {{"write": 0, "read": 0}}

    def _ask(self, text, phase):
        if self.client is None:
            if self.own_endpoint:
                self.client = openai.OpenAI(base_url=OWN_URL, api_key={own_key!r}, max_retries=0)
            else:
                self.client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL: the meter
        reply = self.client.chat.completions.create(
            model=self.model, messages=[{{"role": "user", "content": text}}]
        )
        self.spent[phase] += reply.usage.total_tokens
        return reply.choices[0].message.content

    async def store(self, session_id, messages, *, entity_id=None):
        text = " ".join(m["content"] for m in messages if m["role"] == "user")
        self.notes.setdefault(entity_id, []).append(self._ask(text[:400], "write"))

    async def retrieve(self, session_id, entity_id, query):
        self._ask(query, "read")  # a re-ranking call, say
        return "\\n".join(reversed(self.notes.get(entity_id, [])[-20:]))

    def token_counts(self):
        return TokenCounts(write=self.spent["write"], read=self.spent["read"])

    def snapshot(self):
        return "\\n".join(note for notes in self.notes.values() for note in notes)


class ThroughMeter(_Summaries):
    """Its model through the endpoint the worker is given; reports what it spent."""


class AroundMeter(_Summaries):
    """The same memory, its model reached with a URL and key of its own; reports zero."""

    own_endpoint = True
    model = "around-model"

    def token_counts(self):
        return TokenCounts()


class UnknownSpend(_Summaries):
    """Its model runs where the meter cannot see it, as it declares; it knows no tokens."""

    own_endpoint = True
    model = "unknown-model"
    models_outside_meter = True

    def token_counts(self):
        return TokenCounts(write=None, read=None)


class OverReporter(_Summaries):
    """Through the meter, reporting three times what it spent."""

    def token_counts(self):
        return TokenCounts(write=3 * self.spent["write"], read=3 * self.spent["read"])
'''


SCENARIO = """\
id: unmetered-t
seed: 4242
paradigm: user_assistant
replicates: 1
horizon:
  short: { sessions: 10, session_gap_days: 2 }
noise_ratio: 0.4
entities:
  - id: principal
    type: human
    profile:
      big_five: { O: 0.5, C: 0.5, E: 0.5, A: 0.5, N: 0.5 }
      event_distribution: { job_change: 0.2, relocation: 0.2, preference_reveal: 0.3 }
  - id: assistant
    type: assistant_agent
    capability_profile: { context_window: 32000 }
checkpoints:
  - { every: 5, probe_types: [recall, action, revision] }
"""
"""The smallest world with probes at two checkpoints (one replicate)."""
SESSIONS = 10


@dataclass
class Run:
    code: int
    stdout: str
    out: Path
    summary: dict[str, Any]
    own_requests: list[dict[str, Any]]

    def query(self, sql: str, *params: object) -> list[dict[str, Any]]:
        return _support.query(self.out, sql, *params)

    def arm(self, backend: str) -> dict[str, Any]:
        return next(arm for arm in self.summary["arms"] if arm["backend"] == backend)

    def row(self, backend: str) -> str:
        return next(line for line in self.stdout.splitlines() if line.startswith(backend + "@"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("unmetered")
    outside = folder / "outside"
    outside.mkdir()
    scenario = folder / "unmetered-t.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out, summary = folder / "data", folder / "summary.json"
    with (
        FakeOpenAIServer(echo_last_user, api_key=UPSTREAM_KEY) as upstream,
        FakeOpenAIServer(echo_last_user, api_key=OWN_KEY) as own,
        pytest.MonkeyPatch.context() as patch,
    ):
        source = SOURCE.format(own_url=own.base_url, own_key=OWN_KEY)
        (outside / "spenders.py").write_text(textwrap.dedent(source))
        # The workers import from the harness's path: the outside folder travels with it.
        patch.syspath_prepend(str(outside))
        patch.setenv("DRIFT_LLM_BASE_URL", upstream.base_url)
        patch.setenv("DRIFT_LLM_API_KEY", UPSTREAM_KEY)
        backends = [arg for spec in (THROUGH, AROUND, UNKNOWN, OVER) for arg in ("--backend", spec)]
        # In this process, as users' scripts call it (the workers are separate all the same).
        done = CliRunner().invoke(
            main,
            ["run", str(scenario), "--out", str(out), "--json", str(summary), *backends],
            catch_exceptions=False,
        )
        own_requests = list(own.requests)
    payload = json.loads(summary.read_text()) if summary.exists() else {}
    yield Run(done.exit_code, done.output, out, payload, own_requests)


def test_a_backend_calling_its_model_around_the_meter_is_seen_and_never_ranked_above_its_twin(
    run: Run,
) -> None:
    assert run.code == 0, run.stdout
    made = sum(1 for body in run.own_requests if body["model"] == "around-model")
    # The conformance check, before the run, saw its calls around the meter and said so.
    checked = run.summary["conformance"][AROUND]
    assert checked["passed"] and checked["model_tokens"] == "unknown"
    assert checked["unmetered_calls"] > 0
    check_line = next(line for line in run.stdout.splitlines() if line.startswith(f"{AROUND}: "))
    assert check_line.endswith("; model tokens unknown: a run will not rank it)")
    calls = made - checked["unmetered_calls"]
    assert calls > 2 * SESSIONS  # its stores, the reads before sessions, the probes' retrieves
    # The worker saw every one of them go past the meter, booked to the call it was made in.
    seen = run.query(
        "select (select sum(unmetered_calls) from {memory_snapshots} where backend = ?) "
        "+ (select sum(unmetered_calls) from {retrievals} where backend = ?) as n",
        AROUND,
        AROUND,
    )[0]["n"]
    assert seen == calls
    twin, around = run.arm(THROUGH), run.arm(AROUND)
    assert around["llm_tokens"]["source"] == "unknown"
    assert around["llm_tokens"]["unmetered_calls"] == calls
    assert around["llm_tokens"]["metered"] == 0 and around["llm_tokens"]["reported"] == 0
    assert twin["llm_tokens"]["source"] == "metered" and not twin["llm_tokens"]["gap_shown"]
    # Never cheaper than the metered twin: the twin is ranked, the arm whose spend is unknown
    # is listed after every ranked arm with no rank, its cost-dependent figures bounds.
    assert twin["ranked"] and twin["rank"] is not None
    assert not around["ranked"] and around["rank"] is None and around["valid"]
    order = [arm["backend"] for arm in run.summary["arms"]]
    assert order.index(THROUGH) < order.index(AROUND)
    assert all(arm["ranked"] for arm in run.summary["arms"][: order.index(AROUND)])
    # The known part of its cost is below the twin's, and it says it is only a lower bound;
    # its MVOT and DRIFT-C on that part are at least the twin's, and say they are upper bounds.
    assert around["token_cost_per_session"]["bound"] == "lower"
    assert around["token_cost_per_session"]["value"] < twin["token_cost_per_session"]["value"]
    assert "bound" not in twin["token_cost_per_session"]
    for name in ("mvot", "drift_c", "drift_c_lift"):
        assert around[name]["bound"] == "upper"
        assert around[name]["value"] >= twin[name]["value"] - 1e-9, name
    for name in ("tes", "drift_e"):
        assert around[name]["value"] is None and around["not_measured"][name] == (
            UNKNOWN_MODEL_TOKENS
        )
    assert around["verification"]["checks"]["cost"] is False
    # The terminal says it on the row and under the table.
    assert "[model tokens unknown; not ranked]" in run.row(AROUND)
    assert "≤" in run.row(AROUND) and "not measured" in run.row(AROUND)
    note = next(line for line in run.stdout.splitlines() if line.startswith(f"{AROUND}@hard: "))
    assert f"called a model endpoint other than the meter {calls} times" in note
    assert "its token cost is at least" in note and "not ranked" in note


def test_a_backend_that_says_its_tokens_are_unknown_is_marked_and_not_ranked(run: Run) -> None:
    assert run.summary["conformance"][UNKNOWN]["model_tokens"] == "unknown"
    arm = run.arm(UNKNOWN)
    assert arm["llm_tokens"]["source"] == "unknown"
    assert arm["llm_tokens"]["reported"] is None  # unknown, never zero
    assert arm["llm_tokens"]["models_outside_meter"] is True
    assert not arm["ranked"] and arm["rank"] is None
    assert arm["tes"]["value"] is None and arm["drift_e"]["value"] is None
    assert arm["not_measured"]["tes"] == UNKNOWN_MODEL_TOKENS
    assert arm["bounds"]["mvot"] == "upper" and arm["bounds"]["token_cost_per_session"] == "lower"
    nulls = run.query(
        "select count(*) as n, count(reported_write_tokens) as known from {memory_snapshots} "
        "where backend = ?",
        UNKNOWN,
    )[0]
    assert nulls == {"n": SESSIONS, "known": 0}
    declared = run.query(
        "select bool_and(models_outside_meter) as d from {memory_snapshots} where backend = ?",
        UNKNOWN,
    )[0]["d"]
    assert declared is True
    assert "[model tokens unknown; not ranked]" in run.row(UNKNOWN)
    assert any(
        line.startswith(f"{UNKNOWN}@hard: model tokens unknown: it declares models")
        and "reports no token counts" in line
        for line in run.stdout.splitlines()
    )
    cell = next(c for c in run.summary["cells"] if c["backend"] == UNKNOWN)
    assert cell["metrics"]["mvot"]["bound"] == "upper"
    assert cell["bounds"]["token_cost_per_session"] == "lower"


def test_a_backend_reporting_more_than_the_meter_counted_is_charged_its_report(run: Run) -> None:
    checked = run.summary["conformance"]
    assert checked[OVER]["model_tokens"] == "self-reported"
    assert checked[THROUGH]["model_tokens"] == "metered"
    through = next(line for line in run.stdout.splitlines() if line.startswith(f"{THROUGH}: "))
    assert through.startswith(f"{THROUGH}: passed") and "model tokens unknown" not in through
    arm = run.arm(OVER)
    tokens = arm["llm_tokens"]
    assert tokens["source"] == "self-reported" and tokens["gap_shown"]
    assert tokens["reported"] == 3 * tokens["metered"] > 0
    assert tokens["charged"] == tokens["reported"]
    assert tokens["gap"] == pytest.approx(2.0)
    # Its store rows are charged what it reported, never the smaller metered figure.
    charged = run.query(
        "select sum(write_tokens) as charged, sum(metered_write_tokens) as metered, "
        "sum(reported_write_tokens) as reported from {memory_snapshots} where backend = ?",
        OVER,
    )[0]
    assert charged["charged"] == charged["reported"] == 3 * charged["metered"]
    # Self-reported is believed, so it is ranked, with the mark, and its cost is above the twin's.
    assert arm["ranked"]
    twin = run.arm(THROUGH)
    assert arm["token_cost_per_session"]["value"] > twin["token_cost_per_session"]["value"]
    assert "[tokens self-reported]" in run.row(OVER)
    assert any(
        line.startswith(f"{OVER}@hard: LLM tokens self-reported: its token_counts() reported")
        and "(+200%)" in line
        for line in run.stdout.splitlines()
    )
    assert arm["verification"]["checks"]["cost"] is None


def test_the_html_report_and_the_cost_curves_carry_the_marks(run: Run) -> None:
    with connect(run.out) as con:
        data = gather(run.out, con)
        curves = con.execute(
            "select arm, bool_and(model_tokens = 'unknown') as unknown from cost_curves "
            "where backend like 'spenders:%' group by arm order by arm"
        ).fetchall()
    assert dict(curves) == {
        f"{AROUND}@hard": True,
        f"{OVER}@hard": False,
        f"{THROUGH}@hard": False,
        f"{UNKNOWN}@hard": True,
    }
    page = render_html(data, [], {})
    assert "model tokens unknown; not ranked" in page and "tokens self-reported" in page
    assert page.count("not measured") >= 2 * 2  # TES and DRIFT-E of both unknown arms
    assert "≤" in page
    assert f"{AROUND}@hard: model tokens unknown" in page  # the note under the table
    assert any(row["tokens_unknown"] for row in data.cost_curve)


def test_keys_never_reach_a_file(run: Run) -> None:
    for path in run.out.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert UPSTREAM_KEY.encode() not in content and OWN_KEY.encode() not in content, path
