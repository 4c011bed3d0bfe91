"""Store/retrieve latency of the built-in backends at scale (not a test; run it by hand).

    .venv/bin/python tests/memory/backends/bench_backends.py [--sessions 5000] [--queries 200]

Stores N synthetic sessions of 10 turns (5 human, 5 assistant; about one in three carries a
first-person fact, the rest is small talk) into each backend, then times ``retrieve`` for a set
of questions asked by the assistant. The first retrieve is reported on its own (a backend that
builds or refreshes an index lazily pays for it there). Prints p50/p99 milliseconds per backend.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time

import numpy as np

from drift_pipeline.memory._protocol import MemoryBackend, Message
from drift_pipeline.memory.backends import backend_names, load_backend

CITIES = ["Leeds", "Porto", "Kyoto", "Austin", "Tromso", "Accra", "Hobart", "Quito", "Graz"]
COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark Labs"]
HOBBIES = ["bouldering", "pottery", "chess", "sailing", "baking", "birdwatching", "karate"]
FOODS = ["sushi", "cilantro", "olives", "durian", "tofu", "anchovies", "kimchi"]
FACTS = [
    "I moved to {city} last month.",
    "I just started at {company}!",
    "I work at {company} now.",
    "I've taken up {hobby} recently.",
    "I hate {food}.",
    "I prefer {hobby} to {hobby2}.",
    "I'm no longer vegetarian.",
    "I'm vegetarian.",
    "Please always reply in {lang}.",
]
SMALL_TALK = [
    "Can you suggest a film for tonight?",
    "Thanks, that's really helpful!",
    "I'm a bit tired today.",
    "What's a good way to store fresh herbs?",
    "Haha, that's a fun fact about {city}.",
    "Could you summarise that article for me?",
    "I have a meeting at {hour} so let's be quick.",
    "Is it going to rain in {city} this weekend?",
]
REPLIES = [
    "Sure, here is a short answer with a couple of options to consider.",
    "Good question. The usual advice is to keep things simple and check the details.",
    "Noted. Let me know if you want me to go deeper on any of this.",
]
QUESTIONS = [
    "Where does the principal live now?",
    "Where does the principal work?",
    "What hobbies does the principal have?",
    "Which foods does the principal dislike?",
    "Is the principal vegetarian?",
    "Which language should replies be in?",
    "What does the principal prefer?",
]


def _fill(template: str, rng: random.Random) -> str:
    hobby, hobby2 = rng.sample(HOBBIES, 2)
    return template.format(
        city=rng.choice(CITIES),
        company=rng.choice(COMPANIES),
        hobby=hobby,
        hobby2=hobby2,
        food=rng.choice(FOODS),
        lang=rng.choice(["Spanish", "English", "French"]),
        hour=rng.randint(1, 5),
    )


def synthetic_sessions(count: int, seed: int = 7) -> list[list[Message]]:
    """``count`` sessions of 10 turns between ``principal`` and ``assistant``, one day apart."""
    rng = random.Random(seed)
    sessions: list[list[Message]] = []
    for number in range(count):
        day = f"{2027 + number // 365:04d}-{1 + (number // 28) % 12:02d}-{1 + number % 28:02d}"
        stamp = f"{day}T09:00:00"
        signal = rng.random() < 0.3
        messages: list[Message] = []
        for turn in range(5):
            pool = FACTS if signal and turn == 2 else SMALL_TALK
            text = _fill(rng.choice(pool), rng)
            messages.append(
                Message(speaker="principal", role="user", content=text, timestamp=stamp)
            )
            reply = rng.choice(REPLIES)
            messages.append(
                Message(speaker="assistant", role="assistant", content=reply, timestamp=stamp)
            )
        sessions.append(messages)
    return sessions


def _percentiles(samples: list[float]) -> tuple[float, float]:
    p50, p99 = np.percentile(np.array(samples) * 1000.0, [50, 99])
    return float(p50), float(p99)


async def bench(name: str, sessions: list[list[Message]], queries: int) -> dict[str, float]:
    """Time one backend; return latencies in milliseconds."""
    backend: MemoryBackend = load_backend(name, {})
    store_times: list[float] = []
    for number, messages in enumerate(sessions):
        started = time.perf_counter()
        await backend.store(f"s{number}", messages)
        store_times.append(time.perf_counter() - started)
    started = time.perf_counter()
    await backend.retrieve("q", "assistant", QUESTIONS[0])
    first = time.perf_counter() - started
    retrieve_times: list[float] = []
    for number in range(queries):
        question = QUESTIONS[number % len(QUESTIONS)]
        started = time.perf_counter()
        await backend.retrieve("q", "assistant", question)
        retrieve_times.append(time.perf_counter() - started)
    started = time.perf_counter()
    snapshot = backend.snapshot()
    snapshot_ms = (time.perf_counter() - started) * 1000.0
    store_p50, store_p99 = _percentiles(store_times)
    read_p50, read_p99 = _percentiles(retrieve_times)
    return {
        "store_p50": store_p50,
        "store_p99": store_p99,
        "store_total_s": sum(store_times),
        "first_retrieve": first * 1000.0,
        "retrieve_p50": read_p50,
        "retrieve_p99": read_p99,
        "snapshot_ms": snapshot_ms,
        "snapshot_chars": float(len(snapshot)),
    }


def main() -> None:
    """Run the benchmark and print one row per backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backends", nargs="*", default=backend_names())
    args = parser.parse_args()
    sessions = synthetic_sessions(args.sessions)
    turns = sum(len(messages) for messages in sessions)
    print(f"{args.sessions} sessions, {turns} turns, {args.queries} queries (ms)")
    header = (
        f"{'backend':<22}{'store p50':>10}{'store p99':>10}{'store tot s':>12}"
        f"{'1st retr':>10}{'retr p50':>10}{'retr p99':>10}{'snapshot':>10}{'snap MB':>9}"
    )
    print(header)
    for name in args.backends:
        row = asyncio.run(bench(name, sessions, args.queries))
        print(
            f"{name:<22}{row['store_p50']:>10.3f}{row['store_p99']:>10.3f}"
            f"{row['store_total_s']:>12.2f}{row['first_retrieve']:>10.2f}"
            f"{row['retrieve_p50']:>10.3f}{row['retrieve_p99']:>10.3f}"
            f"{row['snapshot_ms']:>10.1f}{row['snapshot_chars'] / 1e6:>9.2f}"
        )


if __name__ == "__main__":
    main()
