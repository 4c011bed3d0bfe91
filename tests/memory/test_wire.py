"""The worker protocol's JSON: fast where it can be, and accepting what the standard one does."""

from __future__ import annotations

import json

import pytest

from drift_pipeline.memory import _wire


def test_values_round_trip_as_the_standard_library_reads_them() -> None:
    value = {"ok": True, "ms": 0.1 + 0.2, "t0": 2**62, "context": "héllo\nwörld", "list": [None]}
    line = _wire.dumps(value)
    assert b"\n" not in line
    assert _wire.loads(line) == json.loads(line) == value


def test_what_orjson_refuses_is_written_and_read_as_the_standard_library_does() -> None:
    # A lone surrogate (a backend's broken text) and an integer past 64 bits.
    for value in ({"version": "v\ud800"}, {"write": 2**70}):
        line = _wire.dumps(value)
        assert line == json.dumps(value).encode()
        assert _wire.loads(line) == value


@pytest.mark.parametrize("line", [b"", b"{", b'{"a": 1', b"\xff\xfe{}", b"not json"])
def test_a_garbled_line_is_a_value_error(line: bytes) -> None:
    with pytest.raises(ValueError):
        _wire.loads(line)
