"""The product speaks of the product: no tracker numbers, unshipped documents or diary wording.

Code, tests, CLI help, README and docs are read by users who have neither the project's tracker
nor its working notes. History belongs in ``CHANGELOG.md``, which says what changed for users,
never which ticket changed it. The patterns are assembled from pieces so that this file does not
match itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Where the product speaks: everything tracked except the lock file and binary data.
_SCOPES = (
    "drift_pipeline",
    "tests",
    "docs",
    "scripts",
    "scenarios",
    "README.md",
    "CHANGELOG.md",
    "pyproject.toml",
    "dagster.yaml",
    "dagster.postgres.yaml",
    "workspace.yaml",
)
_TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".txt",
    ".yaml",
    ".yml",
    ".toml",
    ".sh",
    ".json",
    ".jsonl",
    ".cfg",
    ".ini",
    "",
}

_DESIGN = "DESIGN"
_ISSUE = "issue"
FORBIDDEN: dict[str, re.Pattern[str]] = {
    "a tracker issue number": re.compile(rf"\b{_ISSUE}s? ?#?\d+\b", re.IGNORECASE),
    "a reference to the unshipped design file": re.compile(rf"\b{_DESIGN}(\.md| ?§)"),
    "a reference to unshipped working notes": re.compile(r"\b(NOTES\.md|shared " r"NOTES)\b"),
    "diary wording": re.compile(
        r"\b(this (VM|session)|before this (work|change)|in this "
        r"session|"
        r"the (scoring|paradigm|architecture|voices|reliability) " + _ISSUE + r")\b",
        re.IGNORECASE,
    ),
    "a commit hash cited as history": re.compile(r"\bcommit `?[0-9a-f]{7,40}\b"),
}


def _product_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *_SCOPES],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    files = [ROOT / name for name in listed.split("\0") if name]
    return [f for f in files if f.suffix in _TEXT_SUFFIXES and f.is_file()]


def scan(text: str) -> list[tuple[int, str, str]]:
    """Return (line number, what, line) for every forbidden phrase in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in FORBIDDEN.items():
            if pattern.search(line):
                found.append((number, what, line.strip()))
    return found


def test_the_product_names_no_tracker_issue_unshipped_document_or_diary() -> None:
    files = _product_files()
    assert len(files) > 50, "the scan found almost no files: is this a git checkout?"
    problems = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, what, line in scan(text):
            problems.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line[:120]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "line",
    [
        "targets of " + _ISSUE + " 6",
        "(" + _DESIGN + " §5)",
        "see " + _DESIGN + ".md",
        "pin (see shared " + "NOTES)",
        "measured on this " + "VM",
        "Before this " + "work the machine gave",
        "one run of commit " + "`03ea187`",
        "builds on the scoring " + _ISSUE,
    ],
)
def test_each_forbidden_kind_is_caught(line: str) -> None:
    assert scan(line), f"not caught: {line!r}"


@pytest.mark.parametrize(
    "line",
    [
        "MVOT as the DRIFT specification defines it (spec §7.1)",
        "a backend that raises is recorded; the run goes on",
        "tissue 6 of the anatomy fixture",
        "one commit per partition write",
    ],
)
def test_ordinary_product_prose_passes(line: str) -> None:
    assert not scan(line), f"flagged: {line!r}"
