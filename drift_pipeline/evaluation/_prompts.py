"""The reader's and the judge's prompts: files in the package, pinned by their sha256.

The prompt texts live in ``evaluation/prompts/*.md`` (versioned with the code, public, so score
differences across prompt versions can be audited, spec §9). A prompt's version is the sha256 of
its text: it goes into the LLM cache key (a changed prompt never reuses a stale reply) and into
the run manifest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["Prompt", "load_prompt", "prompts_sha256"]


@dataclass(frozen=True)
class Prompt:
    """One prompt file.

    Attributes:
        name: File stem (``reader``, ``judge_answer``, ``judge_revision``, ``judge_action``).
        text: The system prompt.
    """

    name: str
    text: str

    @property
    def sha256(self) -> str:
        """sha256 hex of the text: the prompt's version."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@cache
def load_prompt(name: str) -> Prompt:
    """The prompt ``evaluation/prompts/<name>.md``.

    Raises:
        FileNotFoundError: When the package has no such prompt.
    """
    source = resources.files("drift_pipeline.evaluation") / "prompts" / f"{name}.md"
    if not source.is_file():
        raise FileNotFoundError(f"no prompt {name!r} in drift_pipeline/evaluation/prompts")
    return Prompt(name, source.read_text(encoding="utf-8").strip())


def prompts_sha256(names: tuple[str, ...]) -> str:
    """One sha256 over several prompts (name and text each), e.g. every judge prompt."""
    digest = hashlib.sha256()
    for name in names:
        prompt = load_prompt(name)
        digest.update(f"{prompt.name}\n{prompt.text}\n\0".encode())
    return digest.hexdigest()
