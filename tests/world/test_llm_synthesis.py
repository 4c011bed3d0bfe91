"""Worlds written by the LLM synthesizer against a loopback OpenAI-compatible server.

The server's scripted responder reads the prompt (exchanges asked for, phrases the event must
contain) and writes valid turns; chosen sessions are scripted to fail verification, so the
retry, the fallback and its record are exercised through the real ``openai`` client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import COMMUTER, HABIT_LOOP, Worlds, table_sql, tree_bytes, write_scenario
from llm_server import TEST_API_KEY, FakeOpenAIServer
from scripted_synthesis import fail_rule, scripted

from drift_pipeline.llm import LLMClient, LLMConfig
from drift_pipeline.scenario import LoadedScenario, load_scenario
from drift_pipeline.world import generate_replicate, generate_worlds, world_manifest_path
from drift_pipeline.world.synthesis import LLMSynthesizer, TemplateSynthesizer
from drift_pipeline.world.synthesis.grammar import ALL_DECOY_FAMILIES, ALL_EVENT_FAMILIES


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)


def _scenarios(folder: Path) -> list[LoadedScenario]:
    return [
        load_scenario(write_scenario(folder, COMMUTER)),
        load_scenario(write_scenario(folder, HABIT_LOOP)),
    ]


def _synthesizer(server: FakeOpenAIServer, cache: Path) -> LLMSynthesizer:
    config = LLMConfig(base_url=server.base_url, model="fake-writer", backoff_base_s=0.01)
    return LLMSynthesizer(LLMClient(config, cache))


def _generate(server: FakeOpenAIServer, scenarios: list[LoadedScenario], out: Path) -> None:
    generate_worlds(scenarios, out, ("short",), _synthesizer(server, out / "llm_cache"))


@pytest.fixture(scope="module")
def llm_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Worlds, FakeOpenAIServer]:
    """One generation with scripted failures (audited by the generator itself)."""
    folder = tmp_path_factory.mktemp("llm-world")
    mp = pytest.MonkeyPatch()
    mp.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
    try:
        with FakeOpenAIServer(scripted(fail_rule), api_key=TEST_API_KEY) as server:
            _generate(server, _scenarios(folder / "scenarios"), folder / "out")
    finally:
        mp.undo()
    return Worlds(folder / "out", {}, []), server


def test_every_session_is_asked_for_and_verified(
    llm_world: tuple[Worlds, FakeOpenAIServer],
) -> None:
    worlds, server = llm_world
    sessions = worlds.query("select count(*) as n from {event_schedules}")[0]["n"]
    assert sessions == 3 * 40 + 2 * 50
    prompts = [body["messages"][-1]["content"] for body in server.requests]
    first_attempts = [p for p in prompts if "an earlier draft was rejected" not in p]
    assert len(first_attempts) == sessions  # one first request per session, none repeated
    # Every session with a planned event or decoy passes the grammar's plan to the model.
    planned = [p for p in first_attempts if "exact phrases:" in p]
    assert planned and all("Plan for this conversation." in p for p in planned)
    assert all("The change comes across" in p for p in planned)
    assert all(body["response_format"]["type"] == "json_schema" for body in server.requests)
    assert set(server.authorization) == {f"Bearer {TEST_API_KEY}"}
    # Every event is carried by a labelled user turn of the principal.
    missing = worlds.query(
        """
        select e.scenario, e.replicate, e.session_index from {event_schedules} e
        where e.event_id is not null and not exists (
            select 1 from {transcripts} t
            where t.scenario = e.scenario and t.replicate = e.replicate
              and t.session_index = e.session_index and t.label_event_id = e.event_id
              and t.role = 'user')
        """
    )
    assert missing == []


def test_llm_text_is_what_the_world_holds(llm_world: tuple[Worlds, FakeOpenAIServer]) -> None:
    worlds, _ = llm_world
    rows = worlds.query(
        "select count(*) as n from {transcripts} where content like 'Could you convert %' "
        "or content like 'Quick note, it is %'"
    )
    users = worlds.query("select count(*) as n from {transcripts} where role = 'user'")
    fallback = worlds.query(
        f"select count(*) as n from {table_sql(worlds.root, 'synthesis_fallbacks')}"
    )
    assert rows[0]["n"] > 0.7 * users[0]["n"]
    assert fallback[0]["n"] > 0


def test_failures_retry_then_fall_back_with_a_record(
    llm_world: tuple[Worlds, FakeOpenAIServer],
) -> None:
    worlds, server = llm_world
    records = worlds.query(
        f"select * from {table_sql(worlds.root, 'synthesis_fallbacks')} "
        "order by scenario, replicate, session_index"
    )
    prompts = [body["messages"][-1]["content"] for body in server.requests]
    prefixes = ("the event value was not said by the person", "a first-person claim")
    assert all(r["reason"].startswith(prefixes) for r in records)
    assert any(r["reason"].startswith("the event value was not said") for r in records)
    assert any(r["reason"].startswith("a first-person claim") for r in records)
    assert all(r["attempts"] == 3 for r in records)
    assert all(r["synthesizer"] == "llm@1" and r["fallback"] == "template@4" for r in records)
    assert all(r["session_id"].startswith("short-r") for r in records)
    # Each record names the families of the plan the grammar then wrote the session with.
    families = {
        family.family_id
        for pool in (*ALL_EVENT_FAMILIES.values(), *ALL_DECOY_FAMILIES.values())
        for family in pool
    }
    event_failures = [r for r in records if r["reason"].startswith("the event value")]
    assert all(r["planned"].split()[0].startswith("event:") for r in event_failures)
    assert all(set(r["planned"].split()) <= families for r in records if r["planned"])
    # Unparsable first replies were retried and accepted: none of them fell back.
    rejected_then_accepted = [p for p in prompts if "reply is not JSON" in p]
    assert rejected_then_accepted
    assert not any(r["reason"].startswith("unparsable") for r in records)
    # Every retry was a new prompt (attempt number and reason), never a repeat of the last.
    assert len(prompts) == len(set(prompts))  # no request repeated (the cache would serve it)
    # One request per session, one more per unparsable first reply, two more per fallback.
    sessions = worlds.query("select count(*) as n from {event_schedules}")[0]["n"]
    assert len(prompts) == sessions + len(rejected_then_accepted) + 2 * len(records)


def test_fallback_sessions_are_the_template_sessions(
    llm_world: tuple[Worlds, FakeOpenAIServer], tmp_path: Path
) -> None:
    worlds, _ = llm_world
    records = worlds.query(
        f"select scenario, replicate, session_index from "
        f"{table_sql(worlds.root, 'synthesis_fallbacks')} where scenario = 'test-commuter-a'"
    )
    assert records
    spec = load_scenario(write_scenario(tmp_path, COMMUTER)).spec
    template = {
        replicate: generate_replicate(spec, "short", replicate, TemplateSynthesizer())
        for replicate in {r["replicate"] for r in records}
    }
    for record in records:
        expected = [
            (t.turn_index, t.speaker, t.content, t.label_event_id, t.label_kind)
            for t in template[record["replicate"]].turns
            if t.session_index == record["session_index"]
        ]
        stored = worlds.query(
            "select turn_index, speaker, content, label_event_id, label_kind from {transcripts} "
            "where scenario = 'test-commuter-a' and replicate = ? and session_index = ? "
            "order by turn_index",
            record["replicate"],
            record["session_index"],
        )
        assert [tuple(row.values()) for row in stored] == expected


def test_manifest_records_the_pin_without_key_or_endpoint(
    llm_world: tuple[Worlds, FakeOpenAIServer],
) -> None:
    worlds, _ = llm_world
    manifest = json.loads(
        (worlds.root / world_manifest_path("test-habit-loop-c", "short")).read_text()
    )
    assert manifest["synthesizer"] == "llm@1"
    pin = manifest["synthesizer_pin"]
    assert pin["model"] == "fake-writer"
    assert pin["prompt_version"].startswith("synthesis-2+")
    assert pin["fallback"] == "template@4"
    assert "127.0.0.1" not in json.dumps(manifest)


def test_no_file_written_holds_the_key(llm_world: tuple[Worlds, FakeOpenAIServer]) -> None:
    worlds, _ = llm_world
    files = [p for p in worlds.root.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" and "llm_cache" in p.parts for p in files)
    assert any(p.suffix == ".parquet" for p in files)
    assert all(TEST_API_KEY.encode() not in p.read_bytes() for p in files)


def test_rerun_is_byte_identical_and_sends_nothing(tmp_path: Path) -> None:
    scenarios = _scenarios(tmp_path / "scenarios")
    out = tmp_path / "out"
    with FakeOpenAIServer(scripted(fail_rule)) as server:
        _generate(server, scenarios, out)
        first_requests = len(server.requests)
    before = tree_bytes(out)
    with FakeOpenAIServer(scripted(fail_rule)) as again:  # another port: the cache still applies
        _generate(again, scenarios, out)
        assert again.requests == []
    assert first_requests > 0
    assert tree_bytes(out) == before
    # A resumed run: half the cache lost, only the lost half is asked for again.
    entries = sorted((out / "llm_cache").rglob("*.json"))
    for path in entries[::2]:
        path.unlink()
    with FakeOpenAIServer(scripted(fail_rule)) as resumed:
        _generate(resumed, scenarios, out)
        assert len(resumed.requests) == len(entries[::2])
    # Tables and manifests are identical; re-fetched cache entries differ only in latency.
    assert _without_cache(tree_bytes(out)) == _without_cache(before)


def _without_cache(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if not name.startswith("llm_cache/")}


def test_session_without_prepare_matches_prepared(tmp_path: Path) -> None:
    spec = load_scenario(write_scenario(tmp_path, HABIT_LOOP)).spec
    with FakeOpenAIServer(scripted(fail_rule)) as server:
        prepared = generate_replicate(spec, "short", 0, _synthesizer(server, tmp_path / "c"))
        synthesizer = _synthesizer(server, tmp_path / "c")
        synthesizer.prepare = None  # type: ignore[assignment,method-assign]
        one_by_one = generate_replicate(spec, "short", 0, synthesizer)
    assert one_by_one.turns == prepared.turns
    assert one_by_one.synthesis_fallbacks == prepared.synthesis_fallbacks
