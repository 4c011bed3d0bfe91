"""The worker's watch for model calls that go around the meter, client by client.

The watch patches the process's sockets for good, so it runs in a child process of its own:
the real ``openai`` client (sync and async), ``httpx`` and ``urllib`` call two loopback
OpenAI-compatible servers, one standing for the meter and one for an endpoint of the backend's
own, and only the calls to the second are counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from llm_server import FakeOpenAIServer

from drift_pipeline.memory._unmetered import is_model_path

CHILD = """
import asyncio, json, sys, urllib.request

from drift_pipeline.memory._unmetered import UnmeteredCalls

meter, own = sys.argv[1], sys.argv[2]
watch = UnmeteredCalls(meter)
watch.install()

import httpx
import openai

ask = [{"role": "user", "content": "hi"}]
seen = {}
openai.OpenAI(base_url=own, api_key="k", max_retries=0).chat.completions.create(
    model="m", messages=ask
)
seen["openai, own endpoint"] = watch.take()
openai.OpenAI(base_url=meter, api_key="k", max_retries=0).chat.completions.create(
    model="m", messages=ask
)
seen["openai, the meter"] = watch.take()


async def both():
    client = openai.AsyncOpenAI(base_url=own, api_key="k", max_retries=0)
    await client.chat.completions.create(model="m", messages=ask)
    await client.embeddings.create(model="e", input="hi")


asyncio.run(both())
seen["async openai, chat and embeddings"] = watch.take()
body = json.dumps({"model": "m", "messages": ask}).encode()
request = urllib.request.Request(own + "/chat/completions", data=body)
request.add_header("Content-Type", "application/json")
urllib.request.urlopen(request).read()
seen["urllib"] = watch.take()
httpx.post(own + "/chat/completions", json={"model": "m", "messages": ask})
seen["httpx"] = watch.take()
httpx.get(own + "/models")
seen["httpx, not a model call"] = watch.take()
print(json.dumps(seen))
"""


def test_calls_around_the_meter_are_counted_by_every_client(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    with FakeOpenAIServer() as meter, FakeOpenAIServer() as own:
        done = subprocess.run(
            [sys.executable, str(script), meter.base_url, own.base_url],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert len(own.requests) == 5 and len(meter.requests) == 1
    assert json.loads(done.stdout) == {
        "openai, own endpoint": 1,
        "openai, the meter": 0,
        "async openai, chat and embeddings": 2,
        "urllib": 1,
        "httpx": 1,
        "httpx, not a model call": 0,
    }


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/v1/chat/completions", True),
        ("/v1/embeddings?api-version=2024", True),
        ("http://proxy.example/v1/responses", True),
        ("/v1/messages", True),
        ("/v1beta/models/gemini:generateContent", True),
        ("/api/embed", True),
        ("/v1/models", False),
        ("/v3/workspaces/w/sessions/s/messages", False),  # a memory service's own API
        ("/v1/agents/a/messages", False),
        ("/search", False),
    ],
)
def test_model_paths(path: str, model: bool) -> None:
    assert is_model_path(path) is model
