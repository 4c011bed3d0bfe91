"""The JSON of the memory loop's worker protocol, on its hot path.

Every session crosses to its worker and every answer comes back as a line of JSON, so encoding
and parsing are a large share of what the loop costs per session; orjson does both several
times faster than the standard library. Where orjson refuses a value the standard library
takes (a lone surrogate in a backend's text, an integer past 64 bits), the standard library
writes or reads it, so the protocol accepts exactly what it accepted before.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps", "loads"]


def dumps(value: Any) -> bytes:
    """``value`` as JSON bytes, without a line break (the caller ends the line)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value).encode()


def loads(line: bytes) -> Any:
    """The value of one line of JSON.

    Raises:
        ValueError: The line is not JSON (not UTF-8, cut short, garbled).
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)
