"""What the token meter adds to a backend's model call: ``meter_overhead_ms_p99``.

A minimal OpenAI-compatible endpoint runs on loopback (a fixed chat completion with its usage,
answered at once), so nearly all of a call's time is HTTP and the meter's own work. The same
request is sent alternately straight to it and through a :class:`~drift_pipeline.llm.TokenMeter`
over kept-alive connections, one of each in turn, so both see the same load. The figure is the
p99 of the metered round trips minus the p99 of the direct ones: what metering adds to the tail
of a call's latency. (On a loaded machine the direct calls' own p99 is several milliseconds of
scheduling; subtracting it leaves the meter's share.) Every metered call must also be booked,
with the tokens the endpoint's usage gives: a meter that lost calls would look fast.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from drift_pipeline.llm import MeterBooking, TokenMeter, Upstream

from ._measure import nearest_rank

CALLS = 3000
WARMUP = 100
_USAGE_TOKENS = 660
_PROMPT = " ".join(f"word{i % 97}" for i in range(300))  # a session-sized user message
_REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a short summary " * 20},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 600, "completion_tokens": 60, "total_tokens": _USAGE_TOKENS},
    }
).encode()


class _Endpoint(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(_REPLY)))
        self.end_headers()
        self.wfile.write(_REPLY)


def _call(connection: http.client.HTTPConnection, body: bytes, key: str) -> float:
    started = time.perf_counter()
    connection.request(
        "POST",
        "/v1/chat/completions",
        body=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"bench endpoint answered HTTP {response.status}")
    return (time.perf_counter() - started) * 1000


@dataclass(frozen=True)
class MeterOverhead:
    """One measurement: every round trip, both ways, and what the meter booked.

    Attributes:
        direct_ms: Round trips straight to the endpoint.
        metered_ms: Round trips through the meter, alternated with the direct ones.
        booked: What the meter booked for the metered calls (warm-up calls included).
        sent: Metered calls made (warm-up calls included).
    """

    direct_ms: list[float]
    metered_ms: list[float]
    booked: MeterBooking
    sent: int

    @property
    def p99_added_ms(self) -> float:
        """p99 through the meter minus p99 direct: the figure ``drift bench`` reports."""
        return nearest_rank(self.metered_ms, 99.0) - nearest_rank(self.direct_ms, 99.0)

    @property
    def median_added_ms(self) -> float:
        """The same at the median."""
        return nearest_rank(self.metered_ms, 50.0) - nearest_rank(self.direct_ms, 50.0)


def measure_meter_overhead(calls: int = CALLS) -> MeterOverhead:
    """Time ``calls`` chat calls each way, alternated (after :data:`WARMUP` of each)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    host, port = server.server_address[:2]
    body = json.dumps(
        {"model": "bench", "messages": [{"role": "user", "content": _PROMPT}]}
    ).encode()
    booked = MeterBooking()
    try:
        with TokenMeter(Upstream(f"http://{host!s}:{port}/v1")) as meter:
            account = meter.open_account("bench#0")
            meter_port = int(meter.url.split(":")[2].split("/")[0])
            direct = http.client.HTTPConnection(str(host), port)
            metered = http.client.HTTPConnection("127.0.0.1", meter_port)
            straight: list[float] = []
            through: list[float] = []
            for index in range(WARMUP + calls):
                a = _call(direct, body, "unused")
                b = _call(metered, body, account.key)
                if index >= WARMUP:
                    straight.append(a)
                    through.append(b)
                booked = booked + account.book()  # as the loop does after each backend call
            direct.close()
            metered.close()
    finally:
        server.shutdown()
        server.server_close()
    return MeterOverhead(straight, through, booked, WARMUP + calls)


def meter_overhead_ms_p99(calls: int = CALLS) -> float:
    """What the meter adds to the p99 of a call's latency, in ms (see the module docstring).

    Raises:
        RuntimeError: The meter did not book every call it passed on, with its usage.
    """
    measured = measure_meter_overhead(calls)
    booked = measured.booked
    if booked.calls != measured.sent or booked.total != _USAGE_TOKENS * measured.sent:
        raise RuntimeError(
            f"the token meter booked {booked.calls} of {measured.sent} calls "
            f"({booked.total} tokens, expected {_USAGE_TOKENS * measured.sent})"
        )
    return measured.p99_added_ms
