"""What backends written outside the repository are charged, through ``drift run`` as users run it.

Two backends live in a folder of the test's own (never in the repository), loaded by
``--backend module:Class``:

- one calls a model with the real ``openai`` client through the endpoint its worker is given
  (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``: the harness's token meter) and reports zero tokens
  from ``token_counts()``: it is charged what the meter counted, and its row shows the gap;
- one has the spec's three methods only (no ``snapshot()``): it is run and ranked, with
  Selectivity and storage marked not measured, never zero.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import unchecked
from llm_server import FakeOpenAIServer, echo_last_user, word_count

from drift_pipeline.evaluation import NO_SNAPSHOT

from .plugins import _support

pytestmark = pytest.mark.slow  # a whole drift run through the sandbox

DRIFT = str(Path(sys.executable).with_name("drift"))
UPSTREAM_KEY = "sk-test-meter-upstream-2718281828"
CALLER = "outside_caller:ModelCaller"
THREE = "spec_shaped:ThreeMethods"

CALLER_SOURCE = '''
"""Summarises each session with a model, through whatever endpoint its environment names."""

import openai


class ModelCaller:
    name = "model_caller"

    def __init__(self):
        self.notes = []
        self.client = None

    def _ask(self, text):
        if self.client is None:
            self.client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL, OPENAI_API_KEY
        reply = self.client.chat.completions.create(
            model="summary-model", messages=[{"role": "user", "content": text}]
        )
        return reply.choices[0].message.content

    async def store(self, session_id, messages):
        text = " ".join(m["content"] for m in messages if m["role"] == "user")
        self.notes.append(self._ask(text[:400]))

    async def retrieve(self, session_id, entity_id, query):
        self._ask(query)  # a re-ranking call, say
        return "\\n".join(self.notes[-20:])

    def token_counts(self):
        from drift_pipeline.memory import TokenCounts

        return TokenCounts()  # claims to spend nothing

    def snapshot(self):
        return "\\n".join(self.notes)
'''

THREE_SOURCE = '''
"""The spec's own backend shape: store, retrieve and token_counts, nothing else."""

from drift_pipeline.memory import TokenCounts


class ThreeMethods:
    def __init__(self):
        self.lines = []

    async def store(self, session_id, messages):
        self.lines += [m["content"] for m in messages if m["role"] == "user"]

    async def retrieve(self, session_id, entity_id, query):
        return "\\n".join(self.lines[-40:])

    def token_counts(self):
        return TokenCounts()
'''


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path
    summary: dict[str, Any]
    bodies: list[dict[str, Any]]

    def query(self, sql: str, *params: object) -> list[dict[str, Any]]:
        return _support.query(self.out, sql, *params)


def _drift_run(folder: Path) -> Run:
    """``drift run`` of both outside backends against a loopback endpoint, as a user runs it."""
    outside = folder / "outside"
    outside.mkdir()
    (outside / "outside_caller.py").write_text(textwrap.dedent(CALLER_SOURCE))
    (outside / "spec_shaped.py").write_text(textwrap.dedent(THREE_SOURCE))
    scenario = _support.write_scenario(folder / "scenarios", "meter-t")
    out, summary = folder / "data", folder / "summary.json"
    with FakeOpenAIServer(echo_last_user, api_key=UPSTREAM_KEY) as server:
        env = {
            **os.environ,
            "PYTHONPATH": str(outside),
            "DRIFT_LLM_BASE_URL": server.base_url,
            "DRIFT_LLM_API_KEY": UPSTREAM_KEY,
            **unchecked(
                f"{CALLER} and {THREE}",
                "both pool every entity's memory, as the minimal three-method shape does; "
                "every call the model endpoint sees is what is counted",
            ),
        }
        done = subprocess.run(
            [
                *(DRIFT, "run", str(scenario), "--out", str(out), "--json", str(summary)),
                *("--backend", CALLER, "--backend", THREE),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        bodies = list(server.requests)
    payload = json.loads(summary.read_text()) if summary.exists() else {}
    return Run(done.returncode, done.stdout, done.stderr, out, payload, bodies)


@pytest.fixture(scope="module")
def metered_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _drift_run(tmp_path_factory.mktemp("metered-run"))


def _spent(body: dict[str, Any]) -> int:
    """What the endpoint billed for one call (its usage counts words)."""
    messages = body["messages"]
    return sum(word_count(m["content"]) for m in messages) + word_count(
        echo_last_user(messages, body)
    )


def _arm(run: Run, backend: str) -> dict[str, Any]:
    return next(arm for arm in run.summary["arms"] if arm["backend"] == backend)


def test_a_backend_reporting_zero_is_charged_what_it_spent_through_the_meter(
    metered_run: Run,
) -> None:
    assert metered_run.code == 0, metered_run.stderr
    sessions = _support.SESSIONS * _support.REPLICATES
    probes = metered_run.query("select count(*) as n from {probes}")[0]["n"]
    # One call per store and per retrieve (the probes' and the read before each session)
    # reached the user's endpoint, with the user's key.
    assert len(metered_run.bodies) == sessions + probes + sessions
    costs = metered_run.query(
        "select sum(write_tokens) as w, sum(metered_write_tokens) as m, "
        "sum(reported_write_tokens) as r from {memory_snapshots} where backend = ?",
        CALLER,
    )[0]
    reads = metered_run.query(
        "select sum(llm_read_tokens) as w, sum(reported_read_tokens) as r from {retrievals} "
        "where backend = ?",
        CALLER,
    )[0]
    session_reads = metered_run.query(
        "select sum(metered_read_tokens) as m, sum(reported_read_tokens) as r "
        "from (select backend, unnest(session_metered_read_tokens) as metered_read_tokens, "
        "unnest(session_reported_read_tokens) as reported_read_tokens from {memory_snapshots}) "
        "where backend = ?",
        CALLER,
    )[0]
    total = sum(_spent(body) for body in metered_run.bodies)
    assert costs["w"] == costs["m"] > 0 and costs["r"] == 0 and reads["r"] == 0
    assert session_reads["m"] > 0 and session_reads["r"] == 0
    # Every call booked, to its store or retrieve.
    assert costs["w"] + reads["w"] + session_reads["m"] == total
    # Each session's row is charged its own call (the harness batches stores; booking is by
    # the call's time inside that store).
    per_row = metered_run.query(
        "select min(metered_write_tokens) as lo from {memory_snapshots} where backend = ?",
        CALLER,
    )[0]
    assert per_row["lo"] > 0
    audit = _arm(metered_run, CALLER)["llm_tokens"]
    assert audit["metered"] == total and audit["reported"] == 0
    assert audit["source"] == "metered" and audit["gap_shown"] and audit["gap"] == -1.0


def test_its_leaderboard_row_shows_the_gap(metered_run: Run) -> None:
    row = next(line for line in metered_run.stdout.splitlines() if line.startswith(CALLER))
    assert "[token report gap -100%]" in row
    assert any(
        line.startswith(f"{CALLER}@hard: metered") and "reported 0 (-100%)" in line
        for line in metered_run.stdout.splitlines()
    )


def test_the_users_key_never_reaches_a_worker_or_a_file(metered_run: Run) -> None:
    for path in metered_run.out.rglob("*"):
        if path.is_file():
            assert UPSTREAM_KEY.encode() not in path.read_bytes(), path


def test_a_backend_with_the_specs_three_methods_is_ranked_with_selectivity_not_measured(
    metered_run: Run,
) -> None:
    lines = metered_run.stdout.splitlines()
    header = next(line for line in lines if line.startswith("arm "))
    row = next(line for line in lines if line.startswith(f"{THREE}@hard"))
    assert "not ranked" not in row
    assert row[header.index("Select.") :].startswith("not measured")
    arm = _arm(metered_run, THREE)
    assert arm["not_measured"]["selectivity"] == NO_SNAPSHOT
    assert arm["selectivity"]["value"] is None
    # Every other figure is computed as usual: it is ranked by a DRIFT-C of its own.
    assert arm["drift_c"]["value"] is not None and arm["mvot"]["value"] is not None
    assert any(f"{THREE}@hard: selectivity" in line and "not measured" in line for line in lines)
    storage = metered_run.query(
        "select count(*) as n, count(storage_tokens) as known from {memory_snapshots} "
        "where backend = ?",
        THREE,
    )[0]
    assert storage == {"n": _support.SESSIONS * _support.REPLICATES, "known": 0}
    cell = next(c for c in metered_run.summary["cells"] if c["backend"] == THREE)
    assert cell["tokens"]["storage_per_session"] is None


def test_the_metered_figures_are_the_same_on_a_rerun(
    metered_run: Run, tmp_path_factory: pytest.TempPathFactory
) -> None:
    again = _drift_run(tmp_path_factory.mktemp("metered-rerun"))
    assert again.code == 0, again.stderr
    sql = (
        "select arm, replicate, session_index, write_tokens, metered_write_tokens, "
        "reported_write_tokens, storage_tokens from {memory_snapshots} "
        "order by arm, replicate, session_index"
    )
    assert again.query(sql) == metered_run.query(sql)
    reads = (
        "select arm, replicate, probe_id, llm_read_tokens, metered_read_tokens from {retrievals} "
        "order by arm, replicate, probe_id"
    )
    assert again.query(reads) == metered_run.query(reads)
