"""Scenario files mutated at random: every one is rejected in one line per problem, naming the
file (and the field, where there is one), with exit status 2 and nothing written.

Each file starts from the shipped baseline scenario and is broken in one way that makes it
invalid by construction: a required key dropped, a value of the wrong type, a number out of
its range (huge, negative, NaN), a key the format does not have, text that is not valid
UTF-8, a control character or a lone surrogate, or a root that is not a mapping. The commands
run in this process (``CliRunner``), so that a few dozen files take seconds.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drift_pipeline import cli
from drift_pipeline.scenario._errors import format_path

BASELINE = Path(__file__).resolve().parents[2] / "scenarios" / "ua-baseline-001.yaml"
EXIT_INVALID = 2
FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # the same files on every run: a failure is reproducible
)

Path_ = tuple[int | str, ...]


@dataclass(frozen=True)
class Broken:
    """A scenario file's bytes, and the field its problem must be reported at (if any)."""

    content: bytes
    field: str | None
    how: str


def _baseline() -> dict[str, Any]:
    data = yaml.safe_load(BASELINE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _dump(data: Any) -> bytes:
    return yaml.safe_dump(data, allow_unicode=False, sort_keys=False).encode("utf-8")


def _set(data: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return data


def _drop(data: dict[str, Any], path: Path_) -> dict[str, Any]:
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return data


def _not_a_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text.strip().lower() not in {"true", "false", "yes", "no", "on", "off", "null"}
    return False


# Numeric fields, each with the values outside its range (and NaN, which compares false).
_RANGES: dict[Path_, st.SearchStrategy[Any]] = {
    ("noise_ratio",): st.one_of(
        st.floats(max_value=-1e-9), st.floats(min_value=0.951), st.just(math.nan)
    ),
    ("horizon", "short", "sessions"): st.one_of(
        st.integers(max_value=0), st.integers(min_value=100_001)
    ),
    ("horizon", "short", "session_gap_hours"): st.one_of(
        st.floats(max_value=0), st.floats(min_value=24 * 365 + 1), st.just(math.nan)
    ),
    ("entities", 0, "profile", "big_five", "O"): st.one_of(
        st.floats(max_value=-1e-9), st.floats(min_value=1.000001), st.just(math.nan)
    ),
    ("checkpoints", 0, "after_session"): st.integers(max_value=0),
    ("replicates",): st.one_of(st.integers(max_value=0), st.integers(min_value=65)),
    ("seed",): st.one_of(st.integers(max_value=-1), st.integers(min_value=2**63)),
}
_REQUIRED: list[Path_] = [
    ("id",),
    ("paradigm",),
    ("horizon",),
    ("noise_ratio",),
    ("entities",),
    ("horizon", "short", "sessions"),
    ("entities", 0, "type"),
    ("entities", 0, "id"),
]
_WRONG_TYPES = st.one_of(
    st.text(min_size=1, max_size=20).filter(_not_a_number),
    st.lists(st.integers(), min_size=1, max_size=3),
    st.dictionaries(st.sampled_from("abc"), st.integers(), min_size=1, max_size=2),
)


@st.composite
def _out_of_range(draw: st.DrawFn) -> Broken:
    path = draw(st.sampled_from(sorted(_RANGES, key=str)))
    value = draw(_RANGES[path])
    return Broken(_dump(_set(_baseline(), path, value)), format_path(path), f"{path}={value!r}")


@st.composite
def _wrong_type(draw: st.DrawFn) -> Broken:
    path = draw(st.sampled_from([*sorted(_RANGES, key=str), ("entities",), ("horizon",)]))
    value = draw(_WRONG_TYPES)
    return Broken(_dump(_set(_baseline(), path, value)), format_path(path), f"{path}={value!r}")


@st.composite
def _dropped(draw: st.DrawFn) -> Broken:
    path = draw(st.sampled_from(_REQUIRED))
    return Broken(_dump(_drop(_baseline(), path)), format_path(path), f"without {path}")


@st.composite
def _unknown_key(draw: st.DrawFn) -> Broken:
    key = draw(st.from_regex(r"[a-z][a-z_]{2,12}", fullmatch=True))
    where: Path_ = draw(st.sampled_from([(), ("horizon", "short"), ("entities", 0)]))
    data = _baseline()
    node: Any = data
    for part in where:
        node = node[part]
    if key in node:
        key += "_x"
    node[key] = 1
    return Broken(_dump(data), key, f"unknown key {where}.{key}")


@st.composite
def _bad_text(draw: st.DrawFn) -> Broken:
    text = BASELINE.read_bytes()
    kind = draw(st.sampled_from(["bytes", "control", "surrogate", "id"]))
    if kind == "id":
        # Letters outside the id's alphabet (accents, scripts, emoji).
        letters = st.characters(min_codepoint=0xA0, exclude_categories=("Cs", "Cc"))
        value = draw(st.text(letters, min_size=1, max_size=8))
        return Broken(_dump(_set(_baseline(), ("id",), value)), "id", f"id={value!r}")
    if kind == "surrogate":
        # A double-quoted YAML escape reads as a lone surrogate: no UTF-8 text can carry it.
        point = draw(st.integers(min_value=0xD800, max_value=0xDFFF))
        value = f'"{chr(92)}u{point:04x}"'.encode()
        return Broken(text.replace(b"ua-baseline-001", value, 1), "id", f"id=\\u{point:04x}")
    at = draw(st.integers(min_value=0, max_value=len(text)))
    if kind == "bytes":
        junk = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80"]))
    else:
        junk = bytes([draw(st.sampled_from([*range(0, 9), 11, 12, *range(14, 32), 127]))])
    return Broken(text[:at] + junk + text[at:], None, f"{kind} {junk!r} at byte {at}")


@st.composite
def _not_a_mapping(draw: st.DrawFn) -> Broken:
    root = draw(
        st.one_of(
            st.lists(st.integers(), max_size=3),
            st.integers(),
            st.text(max_size=10).filter(lambda t: ":" not in t and "#" not in t),
            st.none(),
        )
    )
    return Broken(_dump(root), None, f"root {root!r}")


BROKEN = st.one_of(
    _out_of_range(), _wrong_type(), _dropped(), _unknown_key(), _bad_text(), _not_a_mapping()
)


def _check_rejected(
    broken: Broken, command: Callable[[Path, Path], list[str]], out_name: str = "out"
) -> None:
    """Write the file, run the command, check status, lines and an untouched output folder."""
    with tempfile.TemporaryDirectory(prefix="drift-fuzz-") as folder:
        path = Path(folder) / "scenario.yaml"
        path.write_bytes(broken.content)
        out = Path(folder) / out_name
        result = CliRunner().invoke(cli.main, command(path, out), catch_exceptions=True)
        context = f"{broken.how}: {result.output!r}"
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            context,
            result.exc_info,
        )
        assert result.exit_code == EXIT_INVALID, context
        assert result.stdout == "", context
        lines = result.stderr.splitlines()
        assert lines, context
        assert all(line.startswith(f"{path}") for line in lines), context
        if broken.field is not None:
            assert any(broken.field in line for line in lines), context
        assert not out.exists() or not any(out.iterdir()), context


@FUZZ
@given(BROKEN)
def test_drift_validate_rejects_every_broken_file_in_one_line_per_problem(broken: Broken) -> None:
    _check_rejected(broken, lambda path, out: ["validate", str(path)])


@FUZZ
@given(BROKEN)
def test_drift_generate_rejects_every_broken_file_and_writes_nothing(broken: Broken) -> None:
    _check_rejected(broken, lambda path, out: ["generate", str(path), "--out", str(out)])


@FUZZ
@given(BROKEN)
def test_drift_run_rejects_every_broken_file_and_writes_nothing(broken: Broken) -> None:
    _check_rejected(
        broken, lambda path, out: ["run", str(path), "--backend", "bm25", "--out", str(out)]
    )


def test_the_baseline_the_files_start_from_is_valid() -> None:
    # Otherwise every mutation would be rejected for the baseline's own problem.
    result = CliRunner().invoke(cli.main, ["validate", str(BASELINE)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_ratio_that_is_not_a_finite_number_is_rejected(value: float, tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_bytes(_dump(_set(_baseline(), ("noise_ratio",), value)))
    result = CliRunner().invoke(cli.main, ["validate", str(path)])
    assert result.exit_code == EXIT_INVALID, result.output
    assert result.stderr.startswith(f"{path}:") and "noise_ratio" in result.stderr
