"""The pytest plugin: a memory system's own repository runs DRIFT scenarios as its tests.

A vendor's package is written outside the repository (in a folder the sandboxed workers can
read, put on ``PYTHONPATH``) and run by pytest in a subprocess, as the vendor's CI would.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

# What the plugin loads, loaded here once: an in-process pytester run drops the modules it
# imported when it ends, and numpy (like pyarrow) cannot be imported twice in one process.
import drift_pipeline.evaluation
import drift_pipeline.memory.backends
import drift_pipeline.pipeline
import drift_pipeline.report
import drift_pipeline.sources  # noqa: F401

# The same for the packages other installed pytest plugins import while a run ends (hypothesis
# in its terminal summary, anyio): imported afresh in each in-process run, every one of their
# modules would be assert-rewritten and compiled again, several seconds of CPU per run.
for _package in ("hypothesis", "anyio"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_package)

pytest_plugins = ["pytester"]

SCENARIO = """\
id: vendor-{name}
seed: {seed}
replicates: 1
paradigm: user_assistant
horizon:
  short: {{ sessions: 12, session_gap_hours: 10 }}
  medium: {{ sessions: 40, session_gap_hours: 10 }}
noise_ratio: 0.4
entities:
  - {{ id: principal, type: human }}
  - {{ id: assistant, type: assistant_agent }}
checkpoints:
  - {{ every: 6, probe_types: [recall, revision] }}
"""

VENDOR = """\
\"\"\"A vendor's memory: each entity's dated user lines (degraded: only the last {window}h).\"\"\"

from datetime import datetime, timedelta

from drift_pipeline import TokenCounts


class LineMemory:
    window_hours = {window}

    def __init__(self):
        self.lines = {{}}

    async def store(self, session_id, messages):
        for who in {{m["speaker"] for m in messages}}:
            kept = self.lines.setdefault(who, [])
            for m in messages:
                if m["role"] == "user":
                    kept.append((m["timestamp"], m["speaker"], m["content"]))

    async def retrieve(self, session_id, entity_id, query):
        kept = self.lines.get(entity_id, [])
        if self.window_hours and kept:
            newest = max(datetime.fromisoformat(when) for when, _, _ in kept)
            since = newest - timedelta(hours=self.window_hours)
            kept = [line for line in kept if datetime.fromisoformat(line[0]) >= since]
        return "\\n".join(f"{{when}} {{who}}: {{said}}" for when, who, said in kept)

    def token_counts(self):
        return TokenCounts()

    def snapshot(self):
        lines = [line for kept in self.lines.values() for line in kept]
        return "\\n".join(f"{{when}} {{who}}: {{said}}" for when, who, said in lines)


class DegradedMemory(LineMemory):
    window_hours = 1
"""


@pytest.fixture
def vendor(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The vendor's package in a folder the sandboxed worker can read, on its import path.

    The runs are in this process, as a vendor's pytest would run them; the worker imports the
    package afresh each run, so a changed file is a new release.
    """
    folder = Path(tempfile.mkdtemp(prefix="drift-vendor-"))
    os.chmod(folder, 0o755)
    (folder / "vendor_memory.py").write_text(VENDOR.format(window=0))
    os.chmod(folder / "vendor_memory.py", 0o644)
    pytester.makefile(".yaml", **{"scenarios/vendor-a": SCENARIO.format(name="a", seed=11)})
    pytester.makefile(".yaml", **{"scenarios/vendor-b": SCENARIO.format(name="b", seed=12)})
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    monkeypatch.syspath_prepend(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_thresholds_pass_the_package_and_fail_its_degraded_version(
    pytester: pytest.Pytester, vendor: Path
) -> None:
    result = pytester.runpytest_inprocess(
        "--drift-scenarios",
        "scenarios/",
        "--drift-backend",
        "vendor_memory:LineMemory",
        "--drift-backend",
        "vendor_memory:DegradedMemory",
        "--drift-backend",
        "vendor_memory:LineMemoryV2",  # not released yet: it cannot start
        "--horizon",
        "short",
        "--drift-min",
        "mvot=0.1",
        "--drift-data",
        "data",
        "--drift-output",
        "results/run.json",
        "--drift-real-clock",
        "-k",
        "vendor-a",
    )
    # The vendor's own test was deselected by -k like any test; vendor-b never ran.
    result.assert_outcomes(passed=1, failed=2, deselected=4)
    result.stdout.fnmatch_lines(
        [
            "*vendor-a[[]short-vendor_memory:DegradedMemory@hard[]]*",
            "*vendor_memory:DegradedMemory@hard:",
            "  mvot 0.* is below the minimum 0.1",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*vendor-a short vendor_memory:LineMemoryV2@hard: backend "
            "vendor_memory:LineMemoryV2@hard could not start: *LineMemoryV2*"
        ]
    )
    assert "LineMemory@hard:" not in result.stdout.str()
    assert {p.name for p in (pytester.path / "data" / "probes").iterdir()} == {"scenario=vendor-a"}
    manifest = json.loads((pytester.path / "data" / "_manifests" / "run.json").read_text())
    assert manifest["simulated_clock"] is False
    record = json.loads((pytester.path / "results" / "run.json").read_text())
    assert [c["arm"] for c in record["cells"]] == [
        "vendor_memory:LineMemory@hard",
        "vendor_memory:DegradedMemory@hard",
    ]
    good = record["cells"][0]["metrics"]["mvot"]["value"]
    assert good >= 0.1
    # A later, degraded release of the same package against that run as its baseline.
    (vendor / "vendor_memory.py").write_text(VENDOR.format(window=1))
    regressed = pytester.runpytest_inprocess(
        "--drift-scenarios",
        "scenarios/vendor-a.yaml",
        "--drift-backend",
        "vendor_memory:LineMemory",
        "--horizon",
        "short",
        "--drift-baseline",
        "results/run.json",
    )
    regressed.assert_outcomes(passed=1, failed=1)  # the vendor's own test still passes
    regressed.stdout.fnmatch_lines(
        [
            f"  mvot fell from {good:.3f} (baseline) to 0.*: -0.* paired 95%, worse beyond*",
            "  probes changed since the baseline: * now wrong, * now right",
            "    now wrong: replicate * short-r*-c* (recall: *?)",
        ]
    )


FORGETS = """\
from drift_pipeline import TokenCounts


class Forgets:
    async def store(self, session_id, messages):
        return None

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        return TokenCounts()
"""


def test_a_backend_that_fails_the_conformance_check_fails_its_tests_with_the_reason(
    pytester: pytest.Pytester, vendor: Path
) -> None:
    (vendor / "vendor_forgets.py").write_text(FORGETS)
    os.chmod(vendor / "vendor_forgets.py", 0o644)
    result = pytester.runpytest_inprocess(
        *("--drift-scenarios", "scenarios/vendor-a.yaml", "--horizon", "short"),
        *("--drift-backend", "vendor_forgets:Forgets"),
    )
    result.assert_outcomes(passed=1, failed=1)  # the vendor's own test still passes
    result.stdout.fnmatch_lines(
        [
            "*vendor_forgets:Forgets@hard: not scored: failed the conformance check: it stores "
            "nothing: *"
        ]
    )


def test_inert_without_its_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_nothing_of_the_harness_is_loaded():
            assert "drift_pipeline.pytest_plugin" in sys.modules
            # The harness is not assert-rewritten: only the entry point's own module is.
            assert type(sys.modules["drift_pipeline"].__loader__).__name__ == "SourceFileLoader"
            assert not any(
                name.startswith(("drift_pipeline.pipeline", "drift_pipeline.memory"))
                for name in sys.modules
            )
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "DRIFT" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--drift-scenarios needs --drift-backend NAME|module:Class"),
        (["--drift-backend", "nosuch"], "--drift-backend 'nosuch': unknown backend; registered:"),
        (["--drift-backend", "bm25", "--drift-min", "mvot"], "--drift-min 'mvot': expected"),
        (["--drift-backend", "bm25", "--drift-min", "mvp=0.2"], "unknown metric 'mvp'"),
        (["--drift-backend", "bm25", "--drift-baseline", "none.json"], "none.json: no such file"),
        (["--drift-backend", "bm25", "--drift-gate", "leaky"], "--drift-gate:"),
        (["--drift-backend", "bm25", "-n", "2"], "runs in one pytest process: give -n 0"),
        (
            ["--drift-backend", "bm25", "--drift-allow-leak", "mcp"],
            "--drift-allow-leak mcp: not one of the --drift-backend",
        ),
    ],
)
def test_bad_options_are_one_line(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    pytester.makefile(".yaml", **{"scenarios/vendor-a": SCENARIO.format(name="a", seed=11)})
    result = pytester.runpytest_inprocess("--drift-scenarios", "scenarios", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_horizon_collects_only_the_scenarios_declaring_it_and_names_the_others(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", **{"scenarios/vendor-a": SCENARIO.format(name="a", seed=11)})
    medium_only = SCENARIO.replace("  short: {{ sessions: 12, session_gap_hours: 10 }}\n", "")
    pytester.makefile(".yaml", **{"scenarios/vendor-m": medium_only.format(name="m", seed=12)})
    args = ["--drift-scenarios", "scenarios", "--drift-backend", "bm25", "--collect-only", "-q"]
    result = pytester.runpytest_inprocess(*args, "--horizon", "short")
    assert result.ret == pytest.ExitCode.OK
    collected = [line for line in result.stdout.lines if "::" in line]
    assert [line.split("::")[-1] for line in collected] == ["vendor-a[short-bm25@hard]"]
    result.stdout.fnmatch_lines(
        ["*vendor-m.yaml: vendor-m declares no short horizon (declared: medium); left out"]
    )
    # No scenario declaring it: a usage error naming each, not every horizon collected.
    refused = pytester.runpytest_inprocess(*args, "--horizon", "long")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "vendor-a declares no long horizon (declared: short, medium)" in refused.stderr.str()
    assert "vendor-m declares no long horizon (declared: medium)" in refused.stderr.str()


def test_a_backend_config_key_that_names_no_backend_of_the_run_is_refused(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", **{"scenarios/vendor-a": SCENARIO.format(name="a", seed=11)})
    pytester.makefile(".yaml", backends="bm52: {top_k: 3}\n")
    result = pytester.runpytest_inprocess(
        *("--drift-scenarios", "scenarios", "--drift-backend", "bm25"),
        *("--drift-backend-config", "backends.yaml"),
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "backends.yaml: 'bm52' names no backend of this run (backends run: bm25, " in (
        result.stderr.str()
    )


def test_a_baseline_of_another_kind_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/vendor-a": SCENARIO.format(name="a", seed=11)})
    pytester.makefile(".json", summary='{"arms": []}')
    result = pytester.runpytest_inprocess(
        "--drift-scenarios",
        "scenarios",
        "--drift-backend",
        "bm25",
        "--drift-baseline",
        "summary.json",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "not a --drift-output file of format drift-pytest-run/1" in result.stderr.str()


def test_a_bound_on_the_passing_side_of_a_threshold_does_not_pass() -> None:
    from types import SimpleNamespace

    from report.test_cost_marks import _cell

    from drift_pipeline.pytest_plugin._checks import _bound_problems
    from drift_pipeline.pytest_plugin._options import Thresholds

    def problems(metrics: Any, **limits: dict[str, float]) -> list[str]:
        suite = SimpleNamespace(options=SimpleNamespace(thresholds=Thresholds(**limits)))
        return _bound_problems(cast(Any, suite), cast(Any, SimpleNamespace(metrics=metrics)))

    unknown = _cell("service@hard", 0, None, outside=True).metrics
    known = _cell("metered@hard", 0, 0).metrics
    limits = {"minimum": {"mvot": -1.0}, "maximum": {"token_cost_per_session": 1e9}}
    assert problems(known, **limits) == []
    found = problems(unknown, **limits)
    assert len(found) == 2
    assert (
        found[0].startswith("  mvot is at most ")
        and "cannot show the minimum -1 is met" in found[0]
    )
    assert "token_cost_per_session is at least " in found[1]
