"""A scripted transcript writer for :class:`llm_server.FakeOpenAIServer` (LLM synthesis tests).

It reads each synthesis prompt (the exchanges asked for, the phrases the event must contain)
and writes valid turns. :func:`fail_rule` makes chosen sessions fail verification, picked by a
hash of the session's date line (stable across retries): bucket 0 never expresses its event,
bucket 1 is unparsable on the first try only, bucket 2 (noise) asserts a move in the first
person. Everything is a pure function of the request.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from drift_pipeline.entities import _vocab as vocab

FailRule = Callable[[str, int], str | None]
"""(user prompt, attempt) -> a bad reply to send instead, or None to answer well."""

PHRASES = re.compile(r'exact phrases: ((?:"[^"]*"(?: or )?)+)')


def date_bucket(prompt: str) -> int:
    """A stable number per session (its date line never changes between attempts)."""
    date = re.search(r"Date of this conversation: (.+)", prompt)
    assert date
    return int(hashlib.sha256(date.group(1).encode()).hexdigest(), 16) % 10


def good_reply(prompt: str) -> str:
    exchanges = int(re.search(r"Exchanges to write: (\d+)", prompt).group(1))  # type: ignore[union-attr]
    phrases = PHRASES.search(prompt)
    turns: list[dict[str, str]] = []
    for index in range(exchanges):
        text = f"Could you convert {10 + index} miles to kilometres?"
        kind = "task"
        if index == 0 and phrases:
            phrase = re.findall(r'"([^"]*)"', phrases.group(1))[0]
            text = f"Quick note, it is {phrase} these days. {text}"
            kind = "event"
        turns.append({"speaker": "user", "kind": kind, "text": text})
        turns.append({"speaker": "assistant", "kind": "task", "text": f"About {16 + index} km."})
    return json.dumps({"turns": turns})


def scripted(fail: FailRule | None = None) -> Callable[[list[dict[str, Any]], dict[str, Any]], str]:
    def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        prompt = messages[-1]["content"]
        retry = re.search(r"Attempt (\d+): an earlier draft was rejected", prompt)
        attempt = int(retry.group(1)) - 1 if retry else 0
        bad = fail(prompt, attempt) if fail else None
        return bad if bad is not None else good_reply(prompt)

    return responder


def fail_rule(prompt: str, attempt: int) -> str | None:
    """Buckets 0: event never expressed; 1: first try unparsable; 2: noise asserts a move."""
    bucket = date_bucket(prompt)
    is_event = PHRASES.search(prompt) is not None
    if bucket == 0 and is_event:
        no_event = {"speaker": "user", "kind": "task", "text": "Convert 3 miles, please."}
        reply = {"speaker": "assistant", "kind": "task", "text": "About 4.8 km."}
        return json.dumps({"turns": [no_event, reply]})
    if bucket == 1 and attempt == 0:
        return "Sure! Here is the conversation you asked for."
    if bucket == 2 and not is_event:
        city = next(c.text for c in vocab.CITIES if c.text not in prompt)
        claim = {"speaker": "user", "kind": "task", "text": f"I moved to {city} last week."}
        reply = {"speaker": "assistant", "kind": "task", "text": "Congratulations!"}
        return json.dumps({"turns": [claim, reply]})
    return None
