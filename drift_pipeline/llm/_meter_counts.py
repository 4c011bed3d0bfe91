"""How many tokens one OpenAI-compatible call spent, from its request and its reply.

The reply's own ``usage`` wins where the endpoint gives one (its model's tokenizer, its bill);
otherwise the text is counted with the project's tokenizer (:mod:`drift_pipeline.tokens`), with
OpenAI's published chat framing. Streamed replies are counted from their events: a final usage
event when the request asked for one (``stream_options.include_usage``), else the streamed text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drift_pipeline.tokens import count_tokens

__all__ = ["CallTokens", "StreamTally", "count_reply", "count_request"]

# Chat framing tokens per message and per reply (OpenAI's published accounting).
_TOKENS_PER_MESSAGE = 3
_TOKENS_PER_REPLY = 3


@dataclass(frozen=True)
class CallTokens:
    """What one call cost.

    Attributes:
        prompt_tokens: Tokens the model read (embeddings: the inputs).
        completion_tokens: Tokens it wrote (0 for embeddings).
        source: ``usage`` (the endpoint's own figures) or ``tiktoken`` (counted here).
    """

    prompt_tokens: int
    completion_tokens: int
    source: str

    @property
    def total(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def _message_text(message: Mapping[str, Any]) -> str:
    """A reply message's (or a streamed delta's) text and its tool calls' arguments."""
    parts = [_text_of(message.get("content"))]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            parts.append(str(function.get("arguments") or ""))
    return "".join(parts)


def _inputs_tokens(value: Any) -> int:
    """Tokens of an ``input``/``prompt`` field: text, a list of texts, or token ids."""
    if isinstance(value, str):
        return count_tokens(value)
    if isinstance(value, list):
        if all(isinstance(item, int) for item in value):
            return len(value)  # already token ids
        return sum(_inputs_tokens(item) for item in value)
    return 0


def count_request(kind: str, body: Mapping[str, Any]) -> int:
    """Prompt tokens of a request, counted locally (used when the reply has no usage).

    Args:
        kind: ``chat``, ``completions``, ``embeddings`` or ``responses``.
        body: The request's JSON body.
    """
    if kind == "chat":
        messages = body.get("messages") or []
        return _TOKENS_PER_REPLY + sum(
            _TOKENS_PER_MESSAGE + count_tokens(_text_of(m.get("content")))
            for m in messages
            if isinstance(m, Mapping)
        )
    if kind == "completions":
        return _inputs_tokens(body.get("prompt"))
    if kind in ("embeddings", "responses"):
        return _inputs_tokens(body.get("input"))
    return 0


def _usage(usage: Any) -> tuple[int, int] | None:
    """(prompt, completion) from a ``usage`` object of any of the APIs, if it has them."""
    if not isinstance(usage, Mapping):
        return None
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    if not isinstance(prompt, int):
        return None
    completion = usage.get("completion_tokens", usage.get("output_tokens")) or 0
    return prompt, int(completion) if isinstance(completion, int) else 0


def _reply_text(kind: str, reply: Mapping[str, Any]) -> str:
    """The generated text of a whole (unstreamed) reply."""
    parts: list[str] = []
    if kind == "responses":
        for item in reply.get("output") or []:
            if isinstance(item, Mapping):
                parts += [_text_of(item.get("content"))]
        return "".join(parts)
    for choice in reply.get("choices") or []:
        if not isinstance(choice, Mapping):
            continue
        if kind == "completions":
            parts.append(str(choice.get("text") or ""))
            continue
        parts.append(_message_text(choice.get("message") or {}))
    return "".join(parts)


def count_reply(kind: str, body: Mapping[str, Any], reply: Any) -> CallTokens:
    """What a successful unstreamed call cost: the reply's usage, else counted here."""
    if isinstance(reply, Mapping) and (usage := _usage(reply.get("usage"))) is not None:
        return CallTokens(usage[0], usage[1], "usage")
    completion = (
        count_tokens(_reply_text(kind, reply))
        if kind != "embeddings" and isinstance(reply, Mapping)
        else 0
    )
    return CallTokens(count_request(kind, body), completion, "tiktoken")


class StreamTally:
    """Counts a streamed reply from its server-sent events, as they pass through."""

    def __init__(self, kind: str, body: Mapping[str, Any]) -> None:
        self.kind = kind
        self.body = body
        self._parts: list[str] = []
        self._usage: tuple[int, int] | None = None

    def event(self, data: bytes) -> None:
        """Take one event's ``data:`` payload (``[DONE]`` and non-JSON payloads are ignored)."""
        try:
            chunk = json.loads(data)
        except ValueError:
            return
        if not isinstance(chunk, Mapping):
            return
        response = chunk.get("response")
        for holder in (chunk, response if isinstance(response, Mapping) else {}):
            if (usage := _usage(holder.get("usage"))) is not None:
                self._usage = usage
        if self.kind == "responses":
            if chunk.get("type") == "response.output_text.delta":
                self._parts.append(str(chunk.get("delta") or ""))
            return
        for choice in _choices(chunk.get("choices")):
            if self.kind == "completions":
                self._parts.append(str(choice.get("text") or ""))
                continue
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                self._parts.append(_message_text(delta))

    def tokens(self) -> CallTokens:
        """What the stream cost, once it has ended."""
        if self._usage is not None:
            return CallTokens(self._usage[0], self._usage[1], "usage")
        return CallTokens(
            count_request(self.kind, self.body), count_tokens("".join(self._parts)), "tiktoken"
        )


def _choices(value: Any) -> Iterable[Mapping[str, Any]]:
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []
