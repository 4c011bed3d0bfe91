"""Public and held-out phrasing splits, chosen by a keyed hash.

Stems (and so every family built on them) are ranked per group by HMAC-SHA256 of their id.
The public split is the first third under the empty key: what the repository, its tests and
its canonical worlds show. A held-out split, chosen by a secret salt, is the first half of the
remaining stems ranked under the salt: its worlds use constructions the public split never
shows, and different salts give different held-out splits. A split is assigned by stem rather
than by stem-and-frame so that a pattern fitted to a public stem's wording finds nothing to
match in held-out worlds.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

SALT_ENV = "DRIFT_HELDOUT_SALT"
"""Environment variable holding the held-out salt; empty or unset selects the public split."""

_LABEL_MESSAGE = b"drift-phrasing-split"


def _rank(key: bytes, ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=lambda item: hmac.new(key, item.encode(), hashlib.sha256).digest())


@dataclass(frozen=True)
class PhrasingSplit:
    """Which phrasing families a world may use.

    Attributes:
        label: ``public``, or ``heldout:`` and eight hex digits of an HMAC of a fixed message
            under the salt (names the split without revealing the salt).
    """

    label: str
    _salt: bytes = field(repr=False)

    @classmethod
    def from_salt(cls, salt: str | bytes | None) -> PhrasingSplit:
        """The split a salt selects (``None`` or empty: public)."""
        key = salt.encode() if isinstance(salt, str) else (salt or b"")
        if not key:
            return cls("public", b"")
        digest = hmac.new(key, _LABEL_MESSAGE, hashlib.sha256).hexdigest()
        return cls(f"heldout:{digest[:8]}", key)

    @property
    def public(self) -> bool:
        """Whether this is the public split."""
        return not self._salt

    def stems(self, group: str, stem_ids: Iterable[str]) -> frozenset[str]:
        """The stems of ``group`` (``event:city``, ``decoy:sarcasm``…) this split uses."""
        ids = [f"{group}/{stem}" for stem in stem_ids]
        ranked = _rank(b"", ids)
        public = ranked[: round(len(ranked) / 3)]
        if self.public:
            chosen = public
        else:
            rest = _rank(self._salt, (item for item in ranked if item not in set(public)))
            chosen = rest[: (len(rest) + 1) // 2]
        return frozenset(item.rpartition("/")[2] for item in chosen)


def split_from_env() -> PhrasingSplit:
    """The split selected by ``DRIFT_HELDOUT_SALT`` (unset or empty: public)."""
    return PhrasingSplit.from_salt(os.environ.get(SALT_ENV, ""))
