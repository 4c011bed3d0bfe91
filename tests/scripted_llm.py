"""A scripted reader and judge for :class:`llm_server.FakeOpenAIServer` (tests of the LLM path).

The script plays both roles by looking at the system prompt of each request, so one loopback
server serves a whole ``drift run --reader llm --judge llm``:

- reader: with nothing retrieved it answers "I don't know." (or the first option of an action
  probe); otherwise it repeats the first line of the memory (or the last option whose first
  word occurs in the memory, else the first option);
- answer judge: ``correct`` when one of the accepted spellings occurs in the answer;
- revision judge: a malformed reply (prose around the JSON), on purpose: every revision probe
  must come out as ``judge_error``;
- action judge: ``equivalent`` when the two actions are the same text, else ``better``; the
  action fits the profile when one of the profile's values occurs in it;
- reference compressor: the session's first four lines, as they came;
- the agent at a session start: a fixed greeting (only its first token is timed).

Everything is a pure function of the request, so a test can predict every verdict.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from typing import Any

from drift_pipeline.evaluation._prompts import load_prompt
from drift_pipeline.memory._first_token import FIRST_TOKEN_PROMPT

READER = load_prompt("reader").text
JUDGE_ANSWER = load_prompt("judge_answer").text
JUDGE_REVISION = load_prompt("judge_revision").text
JUDGE_ACTION = load_prompt("judge_action").text
COMPRESSOR = (
    (files("drift_pipeline.memory.backends") / "prompts" / "reference_compressor.md")
    .read_text(encoding="utf-8")
    .strip()
)
MALFORMED_REVISION = 'Sure! Here is my verdict: {"new_value_stated": true}'


def _user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in messages if m.get("role") == "user")


def _system(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in messages if m.get("role") == "system")


def read(user: str) -> str:
    """The scripted reader's answer to one reader request."""
    memory = user.split("MEMORY\n", 1)[1].split("\nEND OF MEMORY", 1)[0]
    options = (
        re.findall(r"(?m)^\d+\. (.*)$", user.split("Options:", 1)[1]) if "Options:" in user else []
    )
    if memory == "(nothing was retrieved)":
        return options[0] if options else "I don't know."
    if options:
        lowered = memory.lower()
        hits = [o for o in options if o.split()[0].lower() in lowered and o != options[0]]
        return hits[-1] if hits else options[0]
    return memory.splitlines()[0][:200]


def _spellings(line: str) -> list[str]:
    return re.findall(r'"([^"]*)"', line)


def judge_answer(user: str) -> dict[str, Any]:
    """The scripted answer judge's verdict (accepted spellings, or the decoy for negatives)."""
    answer = user.rsplit("Assistant's answer: ", 1)[1].lower()
    if "the claim that was never made:" in user.lower():
        decoys = _spellings(user.split("never made:", 1)[1].split("\n", 1)[0])
        said = any(d.lower() in answer for d in decoys if d)
        return {"verdict": "incorrect" if said else "correct", "reason": "decoy check"}
    line = next(x for x in user.splitlines() if x.startswith("Reference truth:"))
    ok = any(s.lower() in answer for s in _spellings(line) if s)
    return {"verdict": "correct" if ok else "incorrect", "reason": "spelling check"}


def judge_action(user: str) -> dict[str, Any]:
    """The scripted action judge's verdict."""
    memory_action = user.split("Memory-informed action: ", 1)[1].split("\n", 1)[0]
    amnesiac_action = user.split("No-memory action: ", 1)[1].split("\n", 1)[0]
    profile = [line.split(": ", 1)[-1] for line in user.splitlines() if line.startswith("- ")]
    fits = any(value and value.lower() in memory_action.lower() for value in profile)
    comparison = "equivalent" if memory_action == amnesiac_action else "better"
    return {"comparison": comparison, "fits_profile": fits, "reason": "scripted"}


def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The server's responder: reader or judge, by the request's system prompt."""
    system, user = _system(messages), _user(messages)
    if system == READER:
        return read(user)
    if system == JUDGE_ANSWER:
        return json.dumps(judge_answer(user))
    if system == JUDGE_REVISION:
        return MALFORMED_REVISION
    if system == JUDGE_ACTION:
        return json.dumps(judge_action(user))
    if system == COMPRESSOR:
        return "\n".join(user.splitlines()[:4])
    if system == FIRST_TOKEN_PROMPT:  # the agent's reply at a session start (only timed)
        return "Welcome back."
    raise AssertionError(f"unexpected system prompt: {system[:60]!r}")
