"""The backend worker: where a fault is placed, and a backend's shutdown when a replicate ends.

The backends are written at test time into a folder outside the repository and the worker runs
as the harness starts it (its own process, JSON lines on stdin and stdout).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.error
from pathlib import Path
from typing import Any

import pytest
import yaml

from drift_pipeline.memory._worker import _Worker, error_line

PARSER = """\
import json
import urllib.request


def read_settings(text):
    return json.loads(text)


def fetch(url):
    return urllib.request.urlopen(url)
"""

CLOSING = """\
import pathlib


class Closing:
    def __init__(self, marker):
        self.marker = pathlib.Path(marker)

    async def store(self, session_id, messages):
        pass

    async def retrieve(self, session_id, entity_id, query):
        return ""

    def token_counts(self):
        from drift_pipeline.memory import TokenCounts

        return TokenCounts()


class SyncClose(Closing):
    def close(self):
        self.marker.write_text("close")


class AsyncClose(Closing):
    async def aclose(self):
        self.marker.write_text("aclose")


class BrokenClose(Closing):
    def close(self):
        raise OSError("socket already gone")
"""


def _module(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Path]:
    """The module ``PARSER``, imported afresh from this test's folder, and its path."""
    path = _module(tmp_path, "settings_parser", PARSER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "settings_parser", raising=False)
    return importlib.import_module("settings_parser"), path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Expecting property name enclosed in double quotes: line 1 column 2"),
        # json raises "Expecting value" ``from None`` over its scanner's StopIteration: Python's
        # traceback does not print that StopIteration as a cause, and neither does the line.
        ("bad", "Expecting value: line 1 column 1 (char 0)"),
    ],
)
def test_a_fault_raised_inside_the_standard_library_is_placed_at_the_line_that_called_it(
    parser: tuple[Any, Path], text: str, message: str
) -> None:
    module, path = parser
    with pytest.raises(json.JSONDecodeError) as caught:
        module.read_settings(text)
    line, where = error_line(caught.value)
    assert where == f"{path}:6"  # json/decoder.py is not where a person can fix it
    assert line.startswith(f"JSONDecodeError: {message}") and line.endswith(f") at {path}:6")
    assert "caused by" not in line


def test_a_cause_raised_and_caught_inside_the_standard_library_is_placed_at_the_caller(
    parser: tuple[Any, Path], tmp_path: Path
) -> None:
    # urllib raises URLError while handling os.stat's FileNotFoundError: the cause is named, and
    # as no frame of the cause is the backend's, the place is the backend's call of urlopen.
    module, path = parser
    missing = tmp_path / "missing.json"
    with pytest.raises(urllib.error.URLError) as caught:
        module.fetch(missing.as_uri())
    line, where = error_line(caught.value)
    assert where == f"{path}:10"
    assert line.startswith("URLError: ") and line.endswith(f" at {path}:10")
    assert "(caused by FileNotFoundError: [Errno 2] No such file or directory" in line


def test_a_fault_raised_inside_an_installed_library_keeps_the_librarys_line() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        yaml.safe_load("key: [unclosed")
    _, where = error_line(caught.value)
    assert where is not None and "site-packages" in where and "/yaml/" in where


def _serve(folder: Path, backend: str, marker: Path) -> subprocess.CompletedProcess[str]:
    """Start a worker, build ``backend``, close it; the worker's own stderr comes back."""
    requests = [
        {
            "op": "init",
            "backend": f"closing_backends:{backend}",
            "options": {"marker": str(marker)},
        },
        {"op": "close"},
    ]
    return subprocess.run(
        [sys.executable, "-m", "drift_pipeline.memory._worker"],
        input="".join(json.dumps(request) + "\n" for request in requests),
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
        check=True,
    )


def test_the_worker_lets_the_backend_close_when_the_replicate_ends(tmp_path: Path) -> None:
    _module(tmp_path / "modules", "closing_backends", CLOSING)
    marker = tmp_path / "closed"
    done = _serve(tmp_path / "modules", "AsyncClose", marker)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply["ok"] for reply in replies] == [True, True], done.stderr
    assert marker.read_text() == "aclose"


def _worker_with(folder: Path, backend: str, marker: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    _module(folder, "closing_backends", CLOSING)
    monkeypatch.syspath_prepend(str(folder))
    worker = _Worker()
    worker.backend = getattr(importlib.import_module("closing_backends"), backend)(str(marker))
    return worker


def test_a_plain_close_is_called_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = _worker_with(tmp_path / "modules", "SyncClose", tmp_path / "closed", monkeypatch)
    worker.close()
    assert (tmp_path / "closed").read_text() == "close"


def test_a_close_that_fails_is_printed_and_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    worker = _worker_with(tmp_path / "modules", "BrokenClose", tmp_path / "closed", monkeypatch)
    worker.close()
    assert "BrokenClose.close(): OSError: socket already gone" in capsys.readouterr().err
