"""The completion cache: content keys, atomic local entries, and an ``s3://`` cache (moto)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import TEST_API_KEY, FakeOpenAIServer

from drift_pipeline.llm import CompletionCache, LLMClient, LLMConfig, cache_key
from drift_pipeline.storage import S3_ENDPOINT_ENV

MESSAGES = [{"role": "user", "content": "Which city?"}]


def _config(server: FakeOpenAIServer) -> LLMConfig:
    return LLMConfig(base_url=server.base_url, model="fake-model", backoff_base_s=0.01)


def test_key_is_stable_and_ignores_dict_order() -> None:
    one = cache_key(
        model="m",
        messages=[{"role": "user", "content": "x"}],
        parameters={"temperature": 0.0, "max_tokens": 5},
        prompt_version="v1",
    )
    two = cache_key(
        model="m",
        messages=[{"content": "x", "role": "user"}],
        parameters={"max_tokens": 5, "temperature": 0.0},
        prompt_version="v1",
    )
    assert one == two and len(one) == 64
    assert one != cache_key(
        model="m", messages=[{"role": "user", "content": "x"}], parameters={}, prompt_version="v1"
    )


def test_entries_are_whole_files_and_bad_ones_are_misses(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path)
    key = "ab" + "0" * 62
    assert cache.get(key) is None
    cache.put(key, {"text": "hello", "prompt_tokens": 1})
    path = tmp_path / "ab" / f"{key}.json"
    assert json.loads(path.read_text())["text"] == "hello"
    assert [p.name for p in (tmp_path / "ab").iterdir()] == [path.name]  # no temp file left
    path.write_text("{not json")
    assert cache.get(key) is None
    path.write_text(json.dumps({"format": 999, "text": "old layout"}))
    assert cache.get(key) is None


def test_a_corrupt_entry_is_fetched_again_and_repaired(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server, LLMClient(_config(server), tmp_path) as client:
        first = client.complete(MESSAGES, prompt_version="v1")
        entry = next(tmp_path.rglob("*.json"))
        entry.write_text("{truncated")
        again = client.complete(MESSAGES, prompt_version="v1")
        third = client.complete(MESSAGES, prompt_version="v1")
        assert len(server.requests) == 2
    assert not again.cached and third.cached
    assert again.text == first.text == third.text


@pytest.fixture
def s3_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, object]]:
    """An empty ``s3://`` prefix on moto's real S3 HTTP server on loopback."""
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        nowhere = str(tmp_path / "no-aws-config")
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(name, raising=False)
        for name, value in {
            "AWS_ACCESS_KEY_ID": "drift-test-key",
            "AWS_SECRET_ACCESS_KEY": "drift-test-secret",
            "AWS_CONFIG_FILE": nowhere,
            "AWS_SHARED_CREDENTIALS_FILE": nowhere,
            S3_ENDPOINT_ENV: endpoint,
        }.items():
            monkeypatch.setenv(name, value)
        fs = s3fs.S3FileSystem(
            endpoint_url=endpoint,
            key="drift-test-key",
            secret="drift-test-secret",
            use_listings_cache=False,
            skip_instance_cache=True,
        )
        bucket = f"drift-{uuid.uuid4().hex[:12]}"
        fs.mkdir(bucket)
        yield f"s3://{bucket}/run/llm_cache", fs
    finally:
        server.stop()


def test_an_s3_cache_makes_the_rerun_free(
    s3_root: tuple[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, fs = s3_root
    monkeypatch.setenv("DRIFT_LLM_API_KEY", TEST_API_KEY)
    with FakeOpenAIServer(api_key=TEST_API_KEY) as server:
        with LLMClient(_config(server), url) as client:
            first = client.complete(MESSAGES, prompt_version="v1", stream=True)
        with LLMClient(_config(server), url) as client:
            again = client.complete(MESSAGES, prompt_version="v1")
        assert len(server.requests) == 1
    assert again.cached and again.text == first.text and again.ttft_ms == first.ttft_ms
    keys = fs.find(url.removeprefix("s3://"))  # type: ignore[attr-defined]
    assert [k.rsplit("/", 1)[-1] for k in keys] == [f"{first.cache_key}.json"]
    assert all(TEST_API_KEY.encode() not in bytes(fs.cat_file(k)) for k in keys)  # type: ignore[attr-defined]
