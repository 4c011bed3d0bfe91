"""The scenario fixture corpus: malformed files with their expected problem, and valid files.

Each malformed file starts with a comment header the tests read:

    # expect-path: entities[0].profile.big_five.O   (empty for a whole-file problem)
    # expect-at: O: 1.5                              (text on the offending line; optional)
    # expect-message: less than or equal to 1        (a fragment of the message)

``expect-at`` names text rather than a line number so that editing the header or the file
above the problem does not silently change what is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "scenarios"
MALFORMED = FIXTURES / "malformed"
VALID = FIXTURES / "valid"
CANONICAL = REPO / "scenarios" / "ua-baseline-001.yaml"
"""The spec's own §3.1 example, which must load unchanged."""


@dataclass(frozen=True)
class Expected:
    """What validating one malformed file must report."""

    file: Path
    path: str
    message: str
    line: int | None

    @property
    def kind(self) -> str:
        """The kind of problem, which is the file's name."""
        return self.file.stem


def _header(file: Path) -> tuple[dict[str, str], list[str]]:
    # errors="replace" so the non-UTF-8 fixture has a readable header too.
    lines = file.read_bytes().decode("utf-8", errors="replace").splitlines()
    header: dict[str, str] = {}
    for text in lines:
        if not text.startswith("#"):
            break
        key, sep, value = text.lstrip("# ").partition(":")
        if sep and key.startswith("expect-"):
            header[key] = value.strip()
    return header, lines


def expected(file: Path) -> Expected:
    """Read a malformed file's expectations from its header."""
    header, lines = _header(file)
    assert "expect-path" in header and "expect-message" in header, f"{file.name}: no header"
    line = None
    if marker := header.get("expect-at"):
        body = [n for n, text in enumerate(lines, 1) if not text.startswith("#") and marker in text]
        assert body, f"{file.name}: expect-at text {marker!r} not found"
        line = body[0]
    return Expected(file, header["expect-path"], header["expect-message"], line)


def malformed() -> list[Expected]:
    """Every malformed fixture, by name."""
    return [expected(file) for file in sorted(MALFORMED.glob("*.yaml"))]


def valid() -> list[Path]:
    """Every valid fixture, plus the canonical scenario."""
    return [CANONICAL, *sorted(VALID.glob("*.yaml"))]


def expected_line(case: Expected, source: str) -> str:
    """The start of the rendered line that names the problem: ``source[:line]: [path: ]``."""
    where = f"{source}:{case.line}" if case.line else source
    return f"{where}: {case.path}: " if case.path else f"{where}: "
