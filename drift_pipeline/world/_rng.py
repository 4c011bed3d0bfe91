"""Seeded randomness: every draw comes from a generator named by what it is for."""

from __future__ import annotations

import hashlib
import random


def derive_seed(root: int, *parts: object) -> int:
    """A 64-bit seed from the root seed and a path of names (replicate, horizon, purpose…).

    Hashing the textual path keeps streams independent and stable across Python versions and
    machines, unlike ``hash()`` (salted per process) or sequential seeding (correlated).
    """
    text = "|".join([str(root), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def rng_for(root: int, *parts: object) -> random.Random:
    """A ``random.Random`` seeded by :func:`derive_seed`.

    ``random.Random`` with an integer seed gives the same sequence on every platform and CPython
    version for ``random()``, ``randrange``, ``choice``, ``shuffle`` and ``sample``.
    """
    return random.Random(derive_seed(root, *parts))
