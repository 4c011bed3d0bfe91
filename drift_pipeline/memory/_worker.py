"""The backend worker: runs one memory system, answering JSON-line requests (DESIGN §5).

Started by :mod:`._sandbox` after isolation. Requests come on stdin, responses go on the
original stdout; the backend's own prints are redirected to stderr so they can never corrupt the
protocol. Responses are plain JSON (never pickle), so a hostile backend cannot run code in the
harness through them.

Requests: ``{"op": "init", "backend": spec, "options": {...}}``,
``{"op": "store", "session_id": ..., "messages": [...], "snapshot": bool}``,
``{"op": "retrieve", "session_id": ..., "entity_id": ..., "query": ...}``,
``{"op": "snapshot"}``, ``{"op": "close"}``.
Every response has ``ok``, ``ms`` (time inside the backend call), ``write``/``read`` (the
backend's LLM token counters) and, on failure, ``error`` (one line).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import time
from typing import Any

from drift_pipeline.tokens import LineCounter, encoding

from ._protocol import MemoryBackend


def _one_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return _printable(text[:500])


def _printable(text: str) -> str:
    """``text`` as valid UTF-8 (a lone surrogate would break the harness's Parquet writer)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Worker:
    def __init__(self) -> None:
        self.backend: MemoryBackend | None = None
        self.loop = asyncio.new_event_loop()
        self.storage = LineCounter()
        self.last_context: str | None = None

    def _counts(self) -> dict[str, Any]:
        if self.backend is None:
            return {"write": 0, "read": 0}
        try:
            counts = self.backend.token_counts()
            return {"write": int(counts.write), "read": int(counts.read)}
        except Exception as error:  # a broken counter is a fault, not a crash
            return {"write": 0, "read": 0, "counts_error": _one_line(error)}

    def _run(self, value: Any) -> Any:
        return self.loop.run_until_complete(value) if inspect.isawaitable(value) else value

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "init":
            from .backends import load_backend

            # Load the tokenizer now (a few hundred ms, once), so that no store's timing, the
            # backend's or the harness's round trip, pays for it.
            encoding()
            started = time.perf_counter()
            self.backend = load_backend(request["backend"], request.get("options") or {})
            return {
                "ok": True,
                "ms": (time.perf_counter() - started) * 1000,
                "version": str(getattr(self.backend, "version", "")),
                **self._counts(),
            }
        assert self.backend is not None, "init must come first"
        if op == "store":
            started = time.perf_counter()
            self._run(self.backend.store(request["session_id"], request["messages"]))
            elapsed = (time.perf_counter() - started) * 1000
            snapshot = self.backend.snapshot()
            if not isinstance(snapshot, str):
                raise TypeError(f"snapshot() returned {type(snapshot).__name__}, expected str")
            if not _is_utf8(snapshot):
                raise ValueError("snapshot() returned text that is not valid Unicode (surrogates)")
            response: dict[str, Any] = {
                "ok": True,
                "ms": elapsed,
                "storage_tokens": self.storage.count(snapshot),
                **self._counts(),
            }
            if request.get("snapshot"):
                response["snapshot"] = snapshot
            return response
        if op == "retrieve":
            started = time.perf_counter()
            context = self._run(
                self.backend.retrieve(request["session_id"], request["entity_id"], request["query"])
            )
            elapsed = (time.perf_counter() - started) * 1000
            if not isinstance(context, str):
                return {
                    "ok": False,
                    "ms": elapsed,
                    **self._counts(),
                    "error": f"retrieve() returned {type(context).__name__}, expected str",
                }
            if not _is_utf8(context):
                return {
                    "ok": False,
                    "ms": elapsed,
                    **self._counts(),
                    "error": "retrieve() returned text that is not valid Unicode (surrogates)",
                }
            if context == self.last_context:
                # The same text as the previous answer (a full-context memory answers every
                # question of a checkpoint alike): say so instead of sending it again.
                return {"ok": True, "ms": elapsed, "same_context": True, **self._counts()}
            self.last_context = context
            return {"ok": True, "ms": elapsed, "context": context, **self._counts()}
        if op == "snapshot":
            snapshot = self.backend.snapshot()
            return {"ok": True, "ms": 0.0, "snapshot": _printable(str(snapshot)), **self._counts()}
        raise ValueError(f"unknown op {op!r}")


def main() -> None:
    """Serve requests until ``close`` or end of input."""
    protocol_in = os.fdopen(os.dup(0), "rb", buffering=0)
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    # Backends that print must not corrupt the protocol: fd 1 now goes to stderr.
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    worker = _Worker()
    reader = protocol_in
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = reader.read(1 << 20)
            if not chunk:
                return
            buffer += chunk
        line, _, buffer = buffer.partition(b"\n")
        request = json.loads(line)
        if request.get("op") == "close":
            protocol_out.write(b'{"ok": true, "ms": 0}\n')
            return
        started = time.perf_counter()
        try:
            response = worker.handle(request)
        except Exception as error:
            # The time the call took before it raised still counts as its latency.
            elapsed = (time.perf_counter() - started) * 1000
            response = {"ok": False, "ms": elapsed, "error": _one_line(error), **worker._counts()}
        response["isolation"] = os.environ.get("DRIFT_ISOLATION", "process")
        protocol_out.write(json.dumps(response).encode() + b"\n")


if __name__ == "__main__":
    main()
