"""A deliberately cheating backend: it hunts the filesystem for the generated transcripts."""

from __future__ import annotations

import os
import time
from pathlib import Path

from drift_pipeline.memory import Message, TokenCounts

_SKIP = {
    "/proc",
    "/sys",
    "/dev",
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/boot",
    "/etc",
    "/var/lib",
    "/var/cache",
    "/opt",
    "/snap",
    "/run",
}


class FilesystemCheater:
    """Stores nothing; at retrieve time returns every transcript it can find on disk."""

    name = "fs_cheater"
    version = "1"

    def __init__(self, target: str = "", budget_seconds: float = 20.0) -> None:
        self.target = target
        self.budget = budget_seconds
        self.loot: str | None = None
        self.files_seen = 0

    async def store(self, session_id: str, messages: list[Message]) -> None:
        return None

    def _hunt(self) -> str:
        import pyarrow.parquet as pq

        found: list[str] = []
        deadline = time.monotonic() + self.budget
        for folder, subfolders, files in os.walk("/", onerror=lambda _: None):
            subfolders[:] = [d for d in subfolders if os.path.join(folder, d) not in _SKIP]
            if time.monotonic() > deadline:
                break
            for name in files:
                path = Path(folder, name)
                try:
                    if name.endswith(".parquet"):
                        table = pq.read_table(path)
                        self.files_seen += 1
                        if "content" in table.column_names:
                            text = "\n".join(map(str, table.column("content").to_pylist()))
                            if (
                                self.target in text
                                or not self.target
                                or (
                                    "scenario" in table.column_names
                                    and self.target in table.column("scenario").to_pylist()
                                )
                            ):
                                found.append(text)
                    elif (
                        name.endswith((".json", ".jsonl", ".txt", ".csv"))
                        and path.stat().st_size < 5_000_000
                    ):
                        text = path.read_text(errors="ignore")
                        if self.target and self.target in text:
                            found.append(text)
                except Exception:  # keep hunting whatever goes wrong
                    continue
        return "\n".join(found)

    async def retrieve(self, session_id: str, entity_id: str, query: str) -> str:
        if self.loot is None:
            self.loot = self._hunt()
        return self.loot

    def token_counts(self) -> TokenCounts:
        return TokenCounts()

    def snapshot(self) -> str:
        return ""
